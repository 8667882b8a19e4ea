package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// agentDeadline bounds one run of a real agent: the mock model answers at
// once, so a run that takes longer is stuck.
const agentDeadline = 45 * time.Second

// claudeBinary finds the Claude Code CLI: the one .ci/run installs from npm
// (@anthropic-ai/claude-code), or claude on PATH; the test is skipped
// when there is none or it cannot run here.
func claudeBinary(t *testing.T) string {
	t.Helper()
	claude, err := filepath.Abs("../.ci/tools/node_modules/.bin/claude")
	if _, serr := os.Stat(claude); err != nil || serr != nil {
		if claude, err = exec.LookPath("claude"); err != nil {
			t.Skip("Claude Code is not installed (.ci/run installs @anthropic-ai/claude-code from npm): the tests with the real agent are skipped")
		}
	}
	claudeRuns.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), agentDeadline)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, "--version")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DISABLE_AUTOUPDATER=1"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			claudeBroken = fmt.Sprintf("claude --version: %v: %.200s", err, out)
		}
	})
	if claudeBroken != "" {
		t.Skip("Claude Code cannot run here, so the tests with the real agent are skipped: " + claudeBroken)
	}
	return claude
}

// claudeRuns checks once whether Claude Code runs; claudeBroken says why not.
var (
	claudeRuns   sync.Once
	claudeBroken string
)

// skipShort skips a test of the real agents under -short: each run starts
// an agent, seconds each; CI runs them.
func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the tests with the real agents are skipped (they take seconds each; CI runs them)")
	}
}

// agentRun is how a run of an agent ended.
type agentRun struct {
	stdout, stderr string
	err            error
}

// runAgent runs an agent to its exit, killed at agentDeadline.
func runAgent(t *testing.T, dir string, env []string, argv ...string) agentRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in %s\nstdout %s\nstderr %s", filepath.Base(argv[0]), agentDeadline, stdout.String(), stderr.String())
	}
	return agentRun{stdout.String(), stderr.String(), err}
}

// writeJSON writes v as JSON to path, making its folder.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// shellLine is argv as a POSIX shell line: agents run a hook's command
// through the shell.
func shellLine(argv ...string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// hookCase is an answer askperm gives an agent and what follows: whether
// the marker command ran, and the text the result the agent sends the
// model holds.
type hookCase struct {
	name     string
	answer   []string
	decision string
	ran      bool
	result   string
}

var hookCases = []hookCase{
	{"allow", []string{"--answer", "allow-once"}, "allow", true, ""},
	{"deny", []string{"--answer", "deny-once", "--message", "not this one"}, "deny", false, "askperm: denied (user): not this one"},
}

// checkHookRun asserts what must follow tc: the marker in project was made
// or not, askperm decided the one call of tool as said (its audit log in
// state), and the agent sent the model one result holding tc.result.
func checkHookRun(t *testing.T, tc hookCase, project, state, tool string, results []string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(project, "marker"))
	if ran := err == nil; ran != tc.ran {
		t.Errorf("command ran: %v, want %v", ran, tc.ran)
	}
	if len(results) != 1 || !strings.Contains(results[0], tc.result) {
		t.Errorf("results sent to the model %q, want one holding %q", results, tc.result)
	}
	if log := auditLog(t, state); len(log) != 1 || log[0].Tool != tool || log[0].Decision != tc.decision {
		t.Errorf("audit log %+v, want one %s of %s", log, tc.decision, tool)
	}
}

// auditEntry is what the tests read of an audit log line.
type auditEntry struct{ Tool, Decision, Cause string }

// auditLog is what askperm decided with its state in state.
func auditLog(t *testing.T, state string) []auditEntry {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(state, "askperm", "audit.log"))
	if err != nil {
		t.Fatalf("askperm was not asked: %v", err)
	}
	var entries []auditEntry
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		var e auditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit log line %q: %v", line, err)
		}
		entries = append(entries, e)
	}
	return entries
}

// hookCommand is the command line of askperm's hook for agent, answering
// as tc says.
func hookCommand(agent string, tc hookCase) string {
	return shellLine(append([]string{bin, "hook", agent}, tc.answer...)...)
}

// gateCommand is askperm gate's command line in front of the MCP server
// fs, answering as tc says. Codex starts an MCP server with few of its
// variables (no XDG_STATE_HOME): the state directory is a flag.
func gateCommand(state string, tc hookCase) []string {
	return append(append([]string{bin, "gate", "--name", "fs", "--state-dir", filepath.Join(state, "askperm")}, tc.answer...), "--")
}

// markerCall is the Bash call that makes the marker, as Claude Code's
// model asks for it.
var markerCall = toolCall{"Bash", map[string]any{"command": "touch marker", "description": "Make the marker"}, ""}

// codexMarkerCall is the shell call that makes the marker, as Codex's
// model asks for it: with escalated permissions, so that Codex asks
// before running it.
var codexMarkerCall = toolCall{"exec_command", map[string]any{"cmd": "touch marker",
	"sandbox_permissions": "require_escalated", "justification": "Make the marker"}, ""}

// fsMarkerCall is the call of the filesystem server's write_file that
// makes the marker in project, as Claude Code names an MCP server fs's
// tool.
func fsMarkerCall(project string) toolCall {
	return toolCall{"mcp__fs__write_file", map[string]any{"path": filepath.Join(project, "marker"), "content": "made"}, ""}
}

// codexFsMarkerCall is fsMarkerCall as Codex offers MCP tools: in a
// namespace per server.
func codexFsMarkerCall(project string) toolCall {
	return toolCall{"write_file", fsMarkerCall(project).input, "mcp__fs"}
}

// claudeEnv is Claude Code's environment for a run against the mock: a
// HOME of its own, a dummy key, and no update check, telemetry or error
// reporting, since the only network it has is the mock.
func claudeEnv(home string, mock *anthropicMock, state string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + home, "TERM=dumb",
		"XDG_STATE_HOME=" + state,
		"ANTHROPIC_BASE_URL=" + mock.srv.URL, "ANTHROPIC_API_KEY=sk-ant-mock",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_BUG_COMMAND=1",
		// MCP tools offered to the model at once, not found through a search
		"ENABLE_TOOL_SEARCH=false",
	}
}

// claudeHooks is Claude Code's settings with command as the hook of event.
func claudeHooks(event, command string) map[string]any {
	return map[string]any{"hooks": map[string]any{event: []any{map[string]any{"matcher": "*", "hooks": []any{
		map[string]any{"type": "command", "command": command, "timeout": 30}}}}}}
}

// claudeMCPConfig is a --mcp-config file serving the filesystem server on
// project as fs, behind the given command line (none: the server alone).
func claudeMCPConfig(t *testing.T, project string, front ...string) string {
	argv := append(front, filesystemServer(t, project)...)
	config := filepath.Join(t.TempDir(), "mcp.json")
	writeJSON(t, config, map[string]any{"mcpServers": map[string]any{"fs": map[string]any{"command": argv[0], "args": argv[1:]}}})
	return config
}

// runClaude runs claude -p in project, with settings in
// home/.claude/settings.json, against a mock model asking for call, and
// returns the results Claude Code sent back.
func runClaude(t *testing.T, call toolCall, home, project, state string, settings map[string]any, args ...string) []string {
	t.Helper()
	writeJSON(t, filepath.Join(home, ".claude", "settings.json"), settings)
	mock := newAnthropicMock(t, call)
	r := runAgent(t, project, claudeEnv(home, mock, state), append([]string{claudeBinary(t), "-p", "make the marker",
		"--output-format", "json", "--model", "claude-sonnet-4-5"}, args...)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("requests:\n%s\nstdout %s\nstderr %s", mock.notes(), r.stdout, r.stderr)
		}
	})
	return mock.results()
}

// codexConfig is a Codex config.toml that talks to the mock model only,
// asks before a command that needs more than the read-only sandbox, and
// checks for no update. codex exec asks nobody with approvals_reviewer
// "user" (it runs with approval policy never and refuses the call
// unasked); with "guardian_subagent" it asks the PermissionRequest hook
// first, and only a call no hook decided goes to the reviewer.
func codexConfig(mock *responsesMock, extra string) string {
	return `model = "mock-model"
model_provider = "mock"
approval_policy = "on-request"
approvals_reviewer = "guardian_subagent"
sandbox_mode = "read-only"
check_for_update_on_startup = false
[analytics]
enabled = false
[model_providers.mock]
name = "mock"
base_url = "` + mock.srv.URL + `/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
` + extra
}

// codexEnv is Codex's environment for a run against the mock.
func codexEnv(home, codexHome, state string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + home, "TERM=dumb",
		"XDG_STATE_HOME=" + state, "CODEX_HOME=" + codexHome, "OPENAI_API_KEY=sk-mock",
	}
}

// codexHook is Codex's hooks.json with command as its PermissionRequest
// hook.
func codexHook(command string) map[string]any {
	return map[string]any{"hooks": map[string]any{"PermissionRequest": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": command, "timeout": 30}}}}}}
}

// codexMCPServer is config.toml's lines serving the filesystem server on
// project as fs, behind the given command line (none: the server alone).
// Its start-up may take Codex's default 10 s on a loaded machine (node
// starting behind askperm gate): Codex would then offer the model no fs
// tools at all, so the wait is longer.
func codexMCPServer(t *testing.T, project string, front ...string) string {
	argv := append(front, filesystemServer(t, project)...)
	args, _ := json.Marshal(argv[1:])
	command, _ := json.Marshal(argv[0])
	return "[mcp_servers.fs]\ncommand = " + string(command) + "\nargs = " + string(args) + "\nstartup_timeout_sec = 60\n"
}

// runCodex runs codex exec in project against a mock model asking for
// call, with config.toml's extra lines and hooks as hooks.json (none when
// nil), and returns the results Codex sent back. Hooks run untrusted
// (--dangerously-bypass-hook-trust): Codex runs a hook only once the
// person trusted it in the interactive /hooks review, which records its
// hash in config.toml.
func runCodex(t *testing.T, call toolCall, project, state, extra string, hooks map[string]any) []string {
	t.Helper()
	home, codexHome := t.TempDir(), t.TempDir()
	if hooks != nil {
		writeJSON(t, filepath.Join(codexHome, "hooks.json"), hooks)
	}
	mock := newResponsesMock(t, call)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(mock, extra)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runAgent(t, project, codexEnv(home, codexHome, state), codexBinary(t), "exec", "--skip-git-repo-check",
		"--dangerously-bypass-hook-trust", "--json", "make the marker")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("requests:\n%s\nstdout %s\nstderr %s", mock.notes(), r.stdout, r.stderr)
		}
	})
	return mock.results()
}

// TestAgentsAskAskperm: each real agent asks askperm about a call on each
// way it can (its hook, about a shell command and an MCP tool's call;
// Claude Code's --permission-prompt-tool with askperm mcp; askperm gate
// as the MCP server, whose calls the agent itself lets through); allowed,
// the call is made; denied, it is not, and the reason reaches the model's
// next request.
func TestAgentsAskAskperm(t *testing.T) {
	skipShort(t)
	type run = func(t *testing.T, tc hookCase, home, project, state string) []string
	mcpAllowed := map[string]any{"permissions": map[string]any{"allow": []string{"mcp__fs__write_file"}}}
	for _, route := range []struct {
		name, tool string
		run        run
	}{
		{"claude-code PermissionRequest hook, Bash", "Bash", func(t *testing.T, tc hookCase, home, project, state string) []string {
			return runClaude(t, markerCall, home, project, state, claudeHooks("PermissionRequest", hookCommand("claude-code", tc)))
		}},
		{"claude-code PreToolUse hook, Bash", "Bash", func(t *testing.T, tc hookCase, home, project, state string) []string {
			return runClaude(t, markerCall, home, project, state, claudeHooks("PreToolUse", hookCommand("claude-code", tc)))
		}},
		{"claude-code PermissionRequest hook, MCP", "write_file", func(t *testing.T, tc hookCase, home, project, state string) []string {
			return runClaude(t, fsMarkerCall(project), home, project, state, claudeHooks("PermissionRequest", hookCommand("claude-code", tc)),
				"--mcp-config", claudeMCPConfig(t, project))
		}},
		{"claude-code permission-prompt-tool", "Bash", func(t *testing.T, tc hookCase, home, project, state string) []string {
			config := filepath.Join(t.TempDir(), "mcp.json")
			writeJSON(t, config, map[string]any{"mcpServers": map[string]any{"askperm": map[string]any{
				"command": bin, "args": append([]string{"mcp"}, tc.answer...)}}})
			return runClaude(t, markerCall, home, project, state, map[string]any{},
				"--mcp-config", config, "--permission-prompt-tool", "mcp__askperm__approve")
		}},
		{"claude-code gate", "write_file", func(t *testing.T, tc hookCase, home, project, state string) []string {
			return runClaude(t, fsMarkerCall(project), home, project, state, mcpAllowed,
				"--mcp-config", claudeMCPConfig(t, project, gateCommand(state, tc)...))
		}},
		{"codex PermissionRequest hook, shell", "Bash", func(t *testing.T, tc hookCase, home, project, state string) []string {
			return runCodex(t, codexMarkerCall, project, state, "", codexHook(hookCommand("codex", tc)))
		}},
		{"codex PermissionRequest hook, MCP", "write_file", func(t *testing.T, tc hookCase, home, project, state string) []string {
			return runCodex(t, codexFsMarkerCall(project), project, state, codexMCPServer(t, project), codexHook(hookCommand("codex", tc)))
		}},
		{"codex gate", "write_file", func(t *testing.T, tc hookCase, home, project, state string) []string {
			// Codex approves the server's tools itself: the gate decides.
			return runCodex(t, codexFsMarkerCall(project), project, state,
				codexMCPServer(t, project, gateCommand(state, tc)...)+"default_tools_approval_mode = \"approve\"\n", nil)
		}},
	} {
		for _, tc := range hookCases {
			t.Run(route.name+", "+tc.name, func(t *testing.T) {
				home, project, state := t.TempDir(), t.TempDir(), t.TempDir()
				checkHookRun(t, tc, project, state, route.tool, route.run(t, tc, home, project, state))
			})
		}
	}
}

// TestClaudeCodeHookAllowAlways: a Bash call allowed always through the
// hook is remembered by askperm, which allows the same call in Claude
// Code's next session with nobody to ask; Claude Code is given no rule of
// its own (its Bash rules would cover more), so no settings file of its
// changes.
func TestClaudeCodeHookAllowAlways(t *testing.T) {
	skipShort(t)
	claudeBinary(t)
	home, project, state := t.TempDir(), t.TempDir(), t.TempDir()
	noClaudeRule := func() {
		t.Helper()
		var user map[string]any
		if b, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); err != nil || json.Unmarshal(b, &user) != nil || user["permissions"] != nil {
			t.Errorf("Claude Code's user settings hold a rule of its own (%v):\n%s", err, b)
		}
		for _, f := range []string{filepath.Join(project, ".claude", "settings.local.json"), filepath.Join(project, ".claude", "settings.json")} {
			if b, err := os.ReadFile(f); err == nil {
				t.Errorf("Claude Code saved a rule of its own in %s:\n%s", f, b)
			}
		}
	}
	always := hookCase{"allow always", []string{"--answer", "allow-always"}, "allow", true, ""}
	checkHookRun(t, always, project, state, "Bash",
		runClaude(t, markerCall, home, project, state, claudeHooks("PermissionRequest", hookCommand("claude-code", always))))
	noClaudeRule()
	if err := os.Remove(filepath.Join(project, "marker")); err != nil {
		t.Fatal(err)
	}

	// The next session's hook has no answer and nobody to ask: only the
	// remembered rule can allow.
	results := runClaude(t, markerCall, home, project, state, claudeHooks("PermissionRequest", shellLine(bin, "hook", "claude-code")))
	if _, err := os.Stat(filepath.Join(project, "marker")); err != nil {
		t.Errorf("the remembered rule did not allow the call: %v; results %q", err, results)
	}
	if log := auditLog(t, state); len(log) != 2 || log[1] != (auditEntry{"Bash", "allow", "rule"}) {
		t.Errorf("audit log %+v, want the second call allowed by the rule", log)
	}
	noClaudeRule()
}

// TestClaudeCodeSavesAnyCallRule: a person who allows every call of an
// MCP tool (the any scope on each of its dimensions) for this workdir has
// Claude Code hold the same rule, naming the tool alone, in the project's
// local settings, from askperm's updatedPermissions; the next session
// then runs the tool with no hook answering at all.
func TestClaudeCodeSavesAnyCallRule(t *testing.T) {
	skipShort(t)
	claudeBinary(t)
	home, project, state := t.TempDir(), t.TempDir(), t.TempDir()
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\ntool = \"write_file\"\nchoice = \"allow-always\"\nscopes = { path = \"*\", \"other arguments\" = \"*\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	always := hookCase{"allow every call", []string{"--answers", answers}, "allow", true, ""}
	checkHookRun(t, always, project, state, "write_file", runClaude(t, fsMarkerCall(project), home, project, state,
		claudeHooks("PermissionRequest", hookCommand("claude-code", always)), "--mcp-config", claudeMCPConfig(t, project)))
	b, err := os.ReadFile(filepath.Join(project, ".claude", "settings.local.json"))
	var local struct {
		Permissions struct{ Allow []string }
	}
	if err != nil || json.Unmarshal(b, &local) != nil || !slices.Contains(local.Permissions.Allow, "mcp__fs__write_file") {
		t.Fatalf("Claude Code saved no rule for the tool (%v):\n%s", err, b)
	}
	if err := os.Remove(filepath.Join(project, "marker")); err != nil {
		t.Fatal(err)
	}
	// A hook that blocks everything: Claude Code's own rule lets the call
	// through before any hook is asked.
	results := runClaude(t, fsMarkerCall(project), home, project, state, claudeHooks("PermissionRequest", "exit 2"), "--mcp-config", claudeMCPConfig(t, project))
	if _, err := os.Stat(filepath.Join(project, "marker")); err != nil {
		t.Errorf("Claude Code's rule did not allow the call: %v; results %q", err, results)
	}
}

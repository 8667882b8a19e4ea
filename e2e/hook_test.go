package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudePayload is a Claude Code hook payload of testdata/hooks.
func claudePayload(t *testing.T, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join("hooks", "claude-code", name))
}

// TestClaudeHookGolden feeds Claude Code's hook payloads to askperm hook
// claude-code and compares its answers byte for byte.
func TestClaudeHookGolden(t *testing.T) {
	const (
		pre   = "pretooluse-bash.json"
		bash  = "permissionrequest-bash.json"
		write = "permissionrequest-write.json"
		mcp   = "permissionrequest-mcp.json"
	)
	for _, tc := range []struct {
		name, payload string
		args          []string
		want          string
	}{
		{"pre allow", pre, []string{"--answer", "allow-once"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"askperm: allowed (user)"}}`},
		{"pre deny with a message", pre, []string{"--answer", "deny-once", "--message", "never force-push main"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"askperm: denied (user): never force-push main"}}`},
		{"pre nothing can ask hands back", pre, nil,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"askperm: nothing here can ask; the agent asks instead"}}`},
		{"request allow", bash, []string{"--answer", "allow-once"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{"request deny with a message", bash, []string{"--answer", "deny-once", "--message", "not now"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (user): not now"}}}`},
		{"request always with a rule", bash, []string{"--answer", "allow-always"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"go test ./..."}],"behavior":"allow","destination":"localSettings"}]}}}`},
		{"request deny always with a rule", bash, []string{"--answer", "deny-always", "--message", "no"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (user): no","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"go test ./..."}],"behavior":"deny","destination":"localSettings"}]}}}`},
		{"request session", bash, []string{"--answer", "allow-session"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"go test ./..."}],"behavior":"allow","destination":"session"}]}}}`},
		{"request always, file rule only askperm keeps", write, []string{"--answer", "allow-always"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{"request always, MCP exact arguments only askperm keeps", mcp, []string{"--answer", "allow-always"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{"request nothing can ask hands back", bash, nil, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"hook", "claude-code"}, tc.args...)
			r := runPipe(t, claudePayload(t, tc.payload), memoryEnv(), args...)
			if r.code != 0 || strings.TrimSuffix(r.stdout, "\n") != tc.want {
				t.Fatalf("exit %d\nstdout %s\nwant   %s\nstderr %s", r.code, r.stdout, tc.want, r.stderr)
			}
		})
	}
}

// TestClaudeHookBlocks: every outcome that is not a decision exits 2 (the
// status that blocks the call) with nothing on stdout, never an allow.
func TestClaudeHookBlocks(t *testing.T) {
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\ntool = \"Read\"\nchoice = \"allow-once\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := string(claudePayload(t, "pretooluse-bash.json"))
	for _, tc := range []struct {
		name, payload string
		args          []string
		stderr        string
	}{
		{"not JSON", `{"hook_event_name":`, nil, "not a Claude Code hook payload"},
		{"empty", ``, nil, "not a Claude Code hook payload"},
		{"another event", strings.Replace(good, "PreToolUse", "PostToolUse", 1), nil, `hook_event_name "PostToolUse"`},
		{"no tool", strings.Replace(good, `"tool_name":"Bash",`, "", 1), nil, "names no tool"},
		{"tool_input not an object", strings.Replace(good, `"tool_input":{"command"`, `"tool_input":"x","x":{"command"`, 1), nil, "tool_input"},
		{"unknown flag", good, []string{"--allow-everything"}, "unknown flag"},
		{"strict without a match", good, []string{"--answers", answers, "--strict"}, "no canned answer"},
		{"bad canned answer", good, []string{"--answer", "allow-forever"}, "blocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runPipe(t, []byte(tc.payload), baseEnv(), append([]string{"hook", "claude-code"}, tc.args...)...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr naming %q", r.code, r.stdout, r.stderr, tc.stderr)
			}
		})
	}
}

// TestClaudeHookRemembers: an always-answer Claude Code cannot keep as its
// own rule is remembered by askperm and decides the next call unasked.
func TestClaudeHookRemembers(t *testing.T) {
	env := memoryEnv()
	payload := claudePayload(t, "permissionrequest-write.json")
	if r := runPipe(t, payload, env, "hook", "claude-code", "--answer", "allow-always"); r.code != 0 {
		t.Fatalf("first call: exit %d: %s", r.code, r.stderr)
	}
	r := runPipe(t, payload, env, "hook", "claude-code")
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`
	if r.code != 0 || strings.TrimSpace(r.stdout) != want {
		t.Fatalf("second call: exit %d, stdout %s, stderr %s; want %s", r.code, r.stdout, r.stderr, want)
	}
}

// TestCodexHookGolden feeds Codex's PermissionRequest payloads to askperm
// hook codex: its answers carry only behavior and message, the only
// decision fields Codex accepts.
func TestCodexHookGolden(t *testing.T) {
	payload := readFile(t, filepath.Join("hooks", "codex", "permissionrequest-bash.json"))
	const (
		allow = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`
		deny  = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (user): not on main"}}}`
	)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"allow", []string{"--answer", "allow-once"}, allow},
		{"deny with a message", []string{"--answer", "deny-once", "--message", "not on main"}, deny},
		{"always", []string{"--answer", "allow-always"}, allow},
		{"session", []string{"--answer", "allow-session"}, allow},
		{"nothing can ask hands back", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runPipe(t, payload, memoryEnv(), append([]string{"hook", "codex"}, tc.args...)...)
			if r.code != 0 || strings.TrimSuffix(r.stdout, "\n") != tc.want {
				t.Fatalf("exit %d\nstdout %s\nwant   %s\nstderr %s", r.code, r.stdout, tc.want, r.stderr)
			}
		})
	}
	t.Run("always is remembered by askperm", func(t *testing.T) {
		env := memoryEnv()
		runPipe(t, payload, env, "hook", "codex", "--answer", "deny-always", "--message", "not on main")
		r := runPipe(t, payload, env, "hook", "codex")
		want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (rule)"}}}`
		if r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Fatalf("exit %d, stdout %s, stderr %s; want %s", r.code, r.stdout, r.stderr, want)
		}
	})
	for name, bad := range map[string]string{
		"a Claude Code PreToolUse payload": string(claudePayload(t, "pretooluse-bash.json")),
		"not JSON":                         `{`,
		"no tool_input":                    strings.Replace(string(payload), `"tool_input":`, `"input":`, 1),
	} {
		t.Run("blocks "+name, func(t *testing.T) {
			r := runPipe(t, []byte(bad), baseEnv(), "hook", "codex", "--answer", "allow-once")
			if r.code != 2 || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and no answer", r.code, r.stdout, r.stderr)
			}
		})
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentDeadline bounds one run of a real agent: the mock model answers at
// once, so a run that takes longer is stuck.
const agentDeadline = 45 * time.Second

// claudeBinary finds the Claude Code CLI: the one .ci/run installs from npm
// (@anthropic-ai/claude-code), or claude on PATH.
func claudeBinary(t *testing.T) string {
	t.Helper()
	if abs, err := filepath.Abs("../.ci/tools/node_modules/.bin/claude"); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	t.Skip("Claude Code is not installed (.ci/run installs @anthropic-ai/claude-code from npm): the tests with the real agent are skipped")
	return ""
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
	}
}

// TestClaudeCodeHookBash: Claude Code asks askperm hook claude-code (a
// PermissionRequest hook) about a Bash call; allowed, the command runs;
// denied, it does not, and the reason reaches the model's next request.
func TestClaudeCodeHookBash(t *testing.T) {
	claude := claudeBinary(t)
	for _, tc := range []struct {
		name   string
		answer []string
		ran    bool
		result string
	}{
		{"allow", []string{"--answer", "allow-once"}, true, ""},
		{"deny", []string{"--answer", "deny-once", "--message", "not this one"}, false, "askperm: denied (user): not this one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, project, state := t.TempDir(), t.TempDir(), t.TempDir()
			mock := newAnthropicMock(t, toolCall{"Bash", map[string]any{"command": "touch marker", "description": "Make the marker"}})
			hook := shellLine(append([]string{bin, "hook", "claude-code"}, tc.answer...)...)
			writeJSON(t, filepath.Join(home, ".claude", "settings.json"), map[string]any{
				"hooks": map[string]any{"PermissionRequest": []any{map[string]any{"matcher": "*", "hooks": []any{
					map[string]any{"type": "command", "command": hook, "timeout": 30}}}}}})
			r := runAgent(t, project, claudeEnv(home, mock, state), claude, "-p", "make the marker", "--output-format", "json", "--model", "claude-sonnet-4-5")
			t.Logf("requests: %s\nstdout %s\nstderr %s", mock.requests(), r.stdout, r.stderr)
			_, err := os.Stat(filepath.Join(project, "marker"))
			if ran := err == nil; ran != tc.ran {
				t.Fatalf("command ran: %v, want %v", ran, tc.ran)
			}
			results := mock.toolResults()
			if len(results) != 1 || !strings.Contains(results[0], tc.result) {
				t.Fatalf("tool results %q, want one holding %q", results, tc.result)
			}
		})
	}
}

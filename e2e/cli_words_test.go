package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCLIWords: each mistake a person makes at the command line is said
// as what to do, on one line of stderr, with usage's exit status.
func TestCLIWords(t *testing.T) {
	dir := t.TempDir()
	badType := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(badType, []byte("[state]\nremember = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.toml")
	request := `{"version":1,"action":"exec"}`
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"empty stdin", "", nil, 65, "askperm: no request on stdin (pipe one JSON request in)\n"},
		{"blank stdin to check", " \n", []string{"check"}, 65, "askperm: no request on stdin (pipe one JSON request in)\n"},
		{"missing --config", request, []string{"--config", missing}, 64, "askperm: --config " + missing + ": no such file (the config file --config names must exist)\n"},
		{"wrong type in config", request, []string{"--config", badType}, 64, "askperm: " + badType + ": toml: line 2, column 12: state.remember: expected a boolean (true or false), not a TOML integer\n"},
		{"gate without --", "", []string{"gate", "npx", "-y", "server"}, 64, "askperm: gate: unknown shorthand flag: 'y' in -y: put -- before the server's command line, as in askperm gate --rules r.toml -- npx -y server\n"},
		{"gate without a command", "", []string{"gate"}, 64, "askperm: gate: give the MCP server's command line after --: askperm gate [flags] -- COMMAND [ARGS...]\n"},
		{"schema without a name", "", []string{"schema"}, 64, "askperm: schema: name the schema: answers, decision, request, rules\n"},
		{"explain without a source", "", []string{"explain"}, 64, "askperm: explain: name the source: claude-code, codex, mcp-call or request\n"},
		{"explain mcp-call without a name", "", []string{"explain", "mcp-call"}, 64, "askperm: explain mcp-call: give the server's name: --name NAME, or its command line after --\n"},
		{"explain of nothing", "", []string{"explain", "codex"}, 65, "askperm: no request on stdin (pipe one JSON request in)\n"},
		{"explain of a request as a payload", request, []string{"explain", "claude-code"}, 65, "askperm: explain: hook_event_name \"\": askperm answers Claude Code's PreToolUse and PermissionRequest\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runPipe(t, []byte(tc.stdin), baseEnv(), tc.args...)
			if r.code != tc.code || r.stderr != tc.want {
				t.Errorf("exit %d, stderr %q; want exit %d, %q", r.code, r.stderr, tc.code, tc.want)
			}
		})
	}
}

// TestNobodyCanBeAskedSaysWhatToDo: the line of a request nobody could be
// asked about ends with how to be asked, or to decide without asking.
func TestNobodyCanBeAskedSaysWhatToDo(t *testing.T) {
	r := runPipe(t, []byte(`{"version":1,"action":"exec"}`), baseEnv())
	want := "; denied. To be asked, run askperm with a terminal (/dev/tty) or a display (DISPLAY or WAYLAND_DISPLAY, for yad or zenity); to decide without asking, give rules (--rules) or a canned answer (--answer)\n"
	if !strings.HasPrefix(r.stderr, "askperm: nobody can be asked: ") || !strings.HasSuffix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestHelpStatesTheRealDefaults: a hook's help says its own deadline and
// that it blocks where askperm exits 69; --no-remember's help names all
// it turns off; bash completion names its dependency.
func TestHelpStatesTheRealDefaults(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"hook", "claude-code", "--help"}, []string{"default 50s", "block the call (a deny answer, or exit 2) when no canned answer matches", "never exit 64, 65, 69 or 70"}},
		{[]string{"hook", "codex", "--help"}, []string{"default 50s"}},
		{[]string{"--help"}, []string{"no audit log line is written", "session approvals are neither used nor recorded", "the circuit breaker and prompt limits do not count"}},
		{[]string{"completion", "--help"}, []string{"needs the bash-completion package"}},
		{[]string{"completion", "bash", "--help"}, []string{"bash-completion"}},
	} {
		r := runPipe(t, nil, baseEnv(), tc.args...)
		help := strings.Join(strings.Fields(r.stdout+r.stderr), " ")
		for _, w := range tc.want {
			if !strings.Contains(help, w) {
				t.Errorf("askperm %v lacks %q", tc.args, w)
			}
		}
		if slices.Contains(tc.args, "hook") && strings.Contains(help, "default 300s") {
			t.Errorf("askperm %v states askperm's 300s deadline", tc.args)
		}
	}
}

// TestSessionListShowsTheQuestion: session list shows what the person
// approved, the one-line question, not a digest of the arguments.
func TestSessionListShowsTheQuestion(t *testing.T) {
	env := memoryEnv()
	checkDecision(t, runPipe(t, sessionRequest("s", 1), env, "--answer", "allow-session").stdout)
	r := runPipe(t, nil, env, "session", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "APPROVED") || !strings.HasSuffix(r.stdout, "  write_file wants to write something\n") {
		t.Errorf("session list: exit %d, %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

package e2e

import (
	"strings"
	"testing"
)

// finding3 are command lines that run rm -rf through wrappers and shell
// syntax; maybe3 are lines whose command is computed, which a deny of
// rm -rf cannot show not to be it.
var (
	finding3 = []string{
		"sudo rm -rf ~", "env rm -rf ~", "command rm -rf ~", "nohup rm -rf ~", "xargs rm -rf", "{rm,-rf,~}", "bash -c 'rm -rf ~'",
		"$'rm' -rf ~", "rm${IFS}-rf ~", "rm -$'rf' ~", "exec rm -rf ~", "builtin rm -rf ~", "nice rm -rf ~", "timeout 5 rm -rf ~",
		"eval 'rm -rf ~'", "bash <<< 'rm -rf ~'", "alias x='rm -rf'; x ~", "=rm -rf ~", "/bin/rm -rf ~",
	}
	maybe3 = []string{"$(echo rm) -rf ~"}
)

// bashHook is a Claude Code PreToolUse payload running cmd.
func bashHook(t *testing.T, cmd string) []byte {
	t.Helper()
	return hookPayload(t, "Bash", map[string]any{"command": cmd})
}

// hookBehavior runs askperm hook claude-code on cmd and returns the
// behavior it answered ("allow", "deny") or "asked" when it would have
// asked a person (with nobody to ask, frontend none, it answers nothing
// and Claude Code asks).
func hookBehavior(t *testing.T, cmd string, env []string, args ...string) string {
	t.Helper()
	r := runPipe(t, bashHook(t, cmd), env, append([]string{"hook", "claude-code", "--frontend", "none"}, args...)...)
	switch {
	case r.code != 0:
		t.Fatalf("%q: exit %d: %s", cmd, r.code, r.stderr)
	case strings.Contains(r.stdout, `"behavior":"allow"`):
		return "allow"
	case r.stdout == "" && strings.Contains(r.stderr, "nobody can be asked"):
		return "asked"
	case strings.Contains(r.stdout, `"behavior":"deny"`):
		return "deny"
	}
	t.Fatalf("%q: stdout %q", cmd, r.stdout)
	return ""
}

// TestHookRulesDenyThroughShellSyntax: a rules file denying rm -rf * and
// allowing every Bash command denies each finding-3 line through the
// Claude Code hook, and asks about a computed command.
func TestHookRulesDenyThroughShellSyntax(t *testing.T) {
	rules := rulesFile(t, `
[[rule]]
name = "no-rm"
decision = "deny"
tool = "Bash"
dimensions = { command = "rm -rf *" }
[[rule]]
name = "bash"
tool = "Bash"
dimensions = { command = "*" }
[[rule]]
name = "all-bash"
tool = "Bash"
`)
	for _, cmd := range finding3 {
		if got := hookBehavior(t, cmd, baseEnv(), "--rules", rules); got != "deny" {
			t.Errorf("%q: %s, want deny", cmd, got)
		}
	}
	for _, cmd := range maybe3 {
		if got := hookBehavior(t, cmd, baseEnv(), "--rules", rules); got != "asked" {
			t.Errorf("%q: %s, want asked", cmd, got)
		}
	}
	if got := hookBehavior(t, `git commit -m "rm -rf stuff"`, baseEnv(), "--rules", rules); got != "allow" {
		t.Errorf("a quoted argument: %s, want allow", got)
	}
}

// TestHookRememberedDenyThroughShellSyntax: a remembered words deny of
// rm -rf (deny-always through the hook) denies each finding-3 line,
// although a rules file allows every Bash command, and asks about a
// computed command.
func TestHookRememberedDenyThroughShellSyntax(t *testing.T) {
	env := memoryEnv()
	answers := rulesFile(t, "[[answer]]\nchoice = \"deny-always\"\nscopes = { command = \"rm -rf\" }\n")
	if r := runPipe(t, bashHook(t, "rm -rf build"), env, "hook", "claude-code", "--answers", answers); r.code != 0 || !strings.Contains(r.stdout, `"deny"`) {
		t.Fatalf("deny-always: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	rules := rulesFile(t, "[[rule]]\nname = \"all-bash\"\ntool = \"Bash\"\n")
	for _, cmd := range finding3 {
		if got := hookBehavior(t, cmd, env, "--rules", rules); got != "deny" {
			t.Errorf("%q: %s, want deny", cmd, got)
		}
	}
	for _, cmd := range maybe3 {
		if got := hookBehavior(t, cmd, env, "--rules", rules); got != "asked" {
			t.Errorf("%q: %s, want asked", cmd, got)
		}
	}
	if got := hookBehavior(t, `git commit -m "rm -rf stuff"`, env, "--rules", rules); got != "allow" {
		t.Errorf("a quoted argument: %s, want allow", got)
	}
}

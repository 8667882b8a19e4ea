package e2e

import (
	"strings"
	"testing"
)

// TestHookDialog: with no terminal of its own, each agent's hook asks
// through a dialog, and the person's answer, or the deadline, becomes the
// agent's hook answer.
func TestHookDialog(t *testing.T) {
	for _, agent := range []struct{ name, payload string }{
		{"claude-code", "hooks/claude-code/permissionrequest-bash.json"},
		{"codex", "hooks/codex/permissionrequest-bash.json"},
	} {
		t.Run(agent.name, func(t *testing.T) {
			forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
				testHookDialog(t, prog, x, agent.name, readFile(t, agent.payload))
			})
		})
	}
}

func testHookDialog(t *testing.T, prog string, x *xDisplay, agent string, payload []byte) {
	a := startAskperm(t, x, payload, dialogEnv(x, t.TempDir()), "hook", agent, "--frontend", prog, "--timeout", "60s")
	v := a.waitDialog(prog, nil)
	// Deny once: yad's default answer, zenity's Cancel. In zenity's viewer
	// Return is Read again: the request is shown again.
	if prog == "yad" {
		v.keys("ctrl+Return")
	} else {
		v.keys("Return")
		v = a.waitDialog(prog, v)
		v.checkArg("--ok-label=Read again")
		v.keys("Escape")
	}
	a.waitDialog(prog, v).keys("Return") // the reason, left empty
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (user)"}}}`
	if got := strings.TrimSpace(a.output()); got != want {
		t.Fatalf("answer %s\nwant   %s\nstderr %s", got, want, a.stderr.String())
	}
}

// TestHookDialogTimeout: a dialog nobody answers ends at the hook's
// deadline in a deny the agent reads, before the agent's own hook timeout.
func TestHookDialogTimeout(t *testing.T) {
	needDialogs(t, "yad")
	x := startX(t)
	a := startAskperm(t, x, claudePayload(t, "permissionrequest-bash.json"), dialogEnv(x, t.TempDir()),
		"hook", "claude-code", "--frontend", "yad", "--timeout", "2s")
	a.waitDialog("yad", nil)
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (timeout)"}}}`
	if got := strings.TrimSpace(a.output()); got != want {
		t.Fatalf("answer %s\nwant   %s", got, want)
	}
}

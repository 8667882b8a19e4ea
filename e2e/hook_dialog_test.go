package e2e

import (
	"strings"
	"testing"
	"time"
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

func hookDialogEnv(x *xDisplay, home string) []string {
	return baseEnv("DISPLAY="+x.display, "HOME="+home, "XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config")
}

func testHookDialog(t *testing.T, prog string, x *xDisplay, agent string, payload []byte) {
	a := startAskperm(t, x, payload, hookDialogEnv(x, t.TempDir()), "hook", agent, "--frontend", prog, "--timeout", "60s")
	v := a.waitDialog(prog, nil)
	// Deny once is the dialog's default answer.
	map[string]func(){"yad": func() { v.keys("ctrl+Return") }, "zenity": func() { v.keys("Return") }}[prog]()
	a.waitDialog(prog, v).keys("Return") // the reason, left empty
	select {
	case err := <-a.done:
		if code := exitCode(t, err); code != 0 {
			t.Fatalf("exit %d; stderr %s", code, a.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the hook hung; stderr %s", a.stderr.String())
	}
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (user)"}}}`
	if got := strings.TrimSpace(a.stdout.String()); got != want {
		t.Fatalf("answer %s\nwant   %s\nstderr %s", got, want, a.stderr.String())
	}
}

// TestHookDialogTimeout: a dialog nobody answers ends at the hook's
// deadline in a deny the agent reads, before the agent's own hook timeout.
func TestHookDialogTimeout(t *testing.T) {
	needDialogs(t, "yad")
	x := startX(t)
	a := startAskperm(t, x, claudePayload(t, "permissionrequest-bash.json"), hookDialogEnv(x, t.TempDir()),
		"hook", "claude-code", "--frontend", "yad", "--timeout", "2s")
	a.waitDialog("yad", nil)
	select {
	case err := <-a.done:
		if code := exitCode(t, err); code != 0 {
			t.Fatalf("exit %d; stderr %s", code, a.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the hook hung; stderr %s", a.stderr.String())
	}
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"askperm: denied (timeout)"}}}`
	if got := strings.TrimSpace(a.stdout.String()); got != want {
		t.Fatalf("answer %s\nwant   %s", got, want)
	}
}

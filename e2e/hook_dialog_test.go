package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestHookDialog: with no terminal of its own, a hook asks through a
// dialog, and the person's answer becomes the agent's hook answer.
func TestHookDialog(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		home := t.TempDir()
		env := baseEnv("DISPLAY="+x.display, "HOME="+home, "XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config")
		a := startAskperm(t, x, claudePayload(t, "permissionrequest-bash.json"), env, "hook", "claude-code", "--frontend", prog, "--timeout", "60s")
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
	})
}

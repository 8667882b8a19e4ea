package e2e

import (
	"testing"
)

// wantSession asserts an allow for the session by the user through
// frontend.
func wantSession(t *testing.T, d map[string]any, frontend string) {
	t.Helper()
	if d["decision"] != "allow" || d["persist"] != "session" || d["cause"] != "user" || d["frontend"] != frontend {
		t.Fatalf("want allow for the session by the user through %s; got %v", frontend, d)
	}
}

// thenRemembered asserts that the same call is now answered from memory
// in env's state directory.
func thenRemembered(t *testing.T, env []string) {
	t.Helper()
	d := checkDecision(t, runPipe(t, readFile(t, "requests/write-file.json"), env, "--frontend", "none").stdout)
	if d["cause"] != "session" || d["frontend"] != "memory" {
		t.Errorf("the same call again: %v", d)
	}
}

// TestAllowSessionInEveryFrontend: each frontend offers "Allow for this
// session" to a request with a session, and its answer is remembered.
func TestAllowSessionInEveryFrontend(t *testing.T) {
	t.Run("tui", func(t *testing.T) {
		env := memoryEnv("TERM=xterm-256color")
		s := startPTY(t, readFile(t, "requests/write-file.json"), env, "--frontend", "tui", "--timeout", "20s")
		tuiShown(s, "Your decision", 1)
		tuiChoose(s, "Allow for this session")
		s.send(tuiEnter)
		wantSession(t, tuiDecision(t, s, 0), "tui")
		thenRemembered(t, env)
	})
	t.Run("line", func(t *testing.T) {
		env := memoryEnv("TERM=dumb")
		s := startPTY(t, readFile(t, "requests/write-file.json"), env, "--frontend", "line", "--timeout", "20s")
		s.waitFor("s  Allow for this session")
		lineAnswer(s, "Answer [", 1, "s")
		wantSession(t, lineDecision(t, s, 0), "line")
		thenRemembered(t, env)
	})
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		// Deny once, Deny always…, Allow always…, Allow once, Allow for
		// this session (zenity: after Cancel).
		v.keys(append(xTabs(map[string]int{"yad": 5, "zenity": 6}[prog]), "Return")...)
		wantSession(t, a.decision(), prog)
	})
}

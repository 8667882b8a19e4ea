package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/internal/ptytest"
)

// TestTTYWithAShellInTheForeground: --tty onto a pane where a shell waits
// at its prompt would split the person's keys between the shell and
// askperm, so neither terminal frontend takes it; the deny says why on
// one line, with the way to keep a pane for approvals.
func TestTTYWithAShellInTheForeground(t *testing.T) {
	_, pane := ptytest.Foreground(t, "sh", "-c", "read x")
	r := runPipe(t, readFile(t, "requests/write-file.json"), baseEnv("TERM=xterm-256color"), "--tty", pane, "--frontend", "tui,line")
	d := checkDecision(t, r.stdout)
	wantDeny(t, d, "unavailable", "none")
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "askperm: ") ||
		!strings.Contains(r.stderr, `"sh"`) || !strings.Contains(r.stderr, "sleep infinity") {
		t.Errorf("stderr: %q", r.stderr)
	}
}

// TestTTYKeptForApprovals: a pane whose foreground program reads nothing
// (the holder, sleep) is a terminal askperm asks on.
func TestTTYKeptForApprovals(t *testing.T) {
	ptm, pane := ptytest.Foreground(t, "sleep", "30")
	var screen strings.Builder
	seen := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			screen.Write(buf[:n])
			if strings.Contains(screen.String(), "Answer [") {
				close(seen)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		select {
		case <-seen:
			time.Sleep(800 * time.Millisecond) // past the arming delay
			ptm.WriteString("y\r")
		case <-time.After(10 * time.Second):
		}
	}()
	r := runPipe(t, readFile(t, "requests/minimal.json"), baseEnv("TERM=dumb"), "--tty", pane, "--frontend", "line", "--timeout", "15s")
	if d := checkDecision(t, r.stdout); d["decision"] != "allow" || d["frontend"] != "line" {
		t.Errorf("got %v, stderr %q", d, r.stderr)
	}
}

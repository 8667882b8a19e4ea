// Package ptytest starts programs on pseudo-terminals for tests: a
// terminal pane with a shell, an editor or a holder in its foreground.
package ptytest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Foreground starts argv as the session leader of a fresh pty, in its
// foreground, and returns the pty's master side and the terminal's path
// once the program runs (not before its exec). Without argv, nobody runs
// on the terminal. Everything ends with the test.
func Foreground(t testing.TB, argv ...string) (*os.File, string) {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	t.Cleanup(func() { ptm.Close(); pts.Close() })
	if len(argv) == 0 {
		return ptm, pts.Name()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == argv[0] {
			return ptm, pts.Name()
		}
	}
	t.Fatalf("%s did not start", argv[0])
	return nil, ""
}

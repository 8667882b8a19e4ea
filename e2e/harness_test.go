package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/internal/testbin"
)

// bin is the askperm binary under test, built once by TestMain.
var bin string

// decisionSchema validates every decision the binary writes.
var decisionSchema *jsonschema.Schema

func TestMain(m *testing.M) {
	// No controlling terminal, as in CI: a run that would ask a person on
	// it finds nobody, and a test that wants a terminal makes its own pty.
	// (It fails, harmlessly, where the process leads its group.)
	syscall.Setsid()
	dir, err := os.MkdirTemp("", "askperm-e2e")
	tmp = dir
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bindir, err := testbin.Dir()
	if err == nil {
		bin, err = testbin.Build(bindir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building askperm:", err)
		os.Exit(1)
	}
	decisionSchema, err = jsonschema.NewCompiler().Compile("../docs/decision.schema.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "decision schema:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.RemoveAll(bindir)
	os.Exit(code)
}

// tmp holds what the tests write: the binary, state directories.
var tmp string

// baseEnv is the environment of a run: no caller settings leak in, and no
// HOME, so askperm knows no state directory and remembers nothing unless a
// test gives it one (memoryEnv): what one test answers never decides
// another's request.
func baseEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}, extra...)
}

// memoryEnv is baseEnv with a state directory of its own: runs that share
// one memoryEnv share what askperm remembers.
func memoryEnv(extra ...string) []string {
	state, err := os.MkdirTemp(tmp, "state")
	if err != nil {
		panic(err)
	}
	return baseEnv(append([]string{"XDG_STATE_HOME=" + state}, extra...)...)
}

// result is how a run of askperm ended.
type result struct {
	stdout, stderr string
	code           int
}

// runPipe runs askperm with stdin from req and no controlling terminal
// (its own session), as an MCP server or CI job would.
func runPipe(t *testing.T, req []byte, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("askperm %v hung; stderr: %s", args, stderr.String())
	}
	return result{stdout.String(), stderr.String(), exitCode(t, err)}
}

func exitCode(t testing.TB, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode()
	default:
		t.Fatalf("askperm did not exit normally: %v", err)
		return -1
	}
}

// readFile returns a file of the repository's testdata.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkDecision asserts that stdout is exactly one line holding one
// decision valid against docs/decision.schema.json, and returns it.
func checkDecision(t *testing.T, stdout string) map[string]any {
	t.Helper()
	d, err := parseDecision(stdout)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// wantDeny asserts a deny-once decision with the given cause.
func wantDeny(t *testing.T, d map[string]any, cause, frontend string) {
	t.Helper()
	if d["decision"] != "deny" || d["persist"] != "once" || d["cause"] != cause || d["frontend"] != frontend {
		t.Fatalf("want deny once, cause %s, frontend %s; got %v", cause, frontend, d)
	}
}

// ptySession is askperm running with a real pseudo-terminal as its
// controlling terminal, the request on a pipe as stdin, and stdout and
// stderr captured apart.
type ptySession struct {
	t              testing.TB
	cmd            *exec.Cmd
	ptm, pts       *os.File
	before         *unix.Termios
	mu             sync.Mutex
	screen         bytes.Buffer // everything askperm wrote to the terminal
	stdout, stderr bytes.Buffer
	done           chan error
}

// startPTY starts askperm on a fresh 80x24 pty. env gets TERM from the
// caller (e.g. "TERM=xterm-256color" or "TERM=dumb").
func startPTY(t testing.TB, req []byte, env []string, args ...string) *ptySession {
	t.Helper()
	s := preparePTY(t, req, env, args...)
	s.start()
	return s
}

// skipSlow skips a test that drives a terminal or a display under
// go test -short: the fast loop runs the rest, the full suite all.
func skipSlow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: needs a pty/Xvfb; runs in the full suite")
	}
}

// parallelTests are the tests runParallel has marked parallel, or
// keepSerial kept from it.
var parallelTests sync.Map

// runParallel runs a test that drives a pty of its own in parallel with
// the others (once, however many ptys it opens): nothing else it uses is
// shared.
func runParallel(tb testing.TB) {
	if t, ok := tb.(*testing.T); ok {
		if _, marked := parallelTests.LoadOrStore(t, true); !marked {
			t.Parallel()
		}
	}
}

// keepSerial keeps a test that measures how long askperm takes from
// running beside others.
func keepSerial(t *testing.T) { parallelTests.Store(t, true) }

// preparePTY is startPTY up to starting the process, so that a test can
// change how it is started.
func preparePTY(t testing.TB, req []byte, env []string, args ...string) *ptySession {
	t.Helper()
	skipSlow(t)
	runParallel(t)
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, ptm: ptm, pts: pts, before: before, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdin = bytes.NewReader(req)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	s.cmd.Env = env
	s.cmd.ExtraFiles = []*os.File{pts} // fd 3 in the child
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	t.Cleanup(func() {
		if s.cmd.Process != nil {
			s.cmd.Process.Kill()
		}
		ptm.Close()
		pts.Close()
	})
	return s
}

// start starts the prepared process.
func (s *ptySession) start() {
	s.t.Helper()
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := s.ptm.Read(buf)
			s.mu.Lock()
			s.screen.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
}

// raw returns everything written to the terminal so far.
func (s *ptySession) raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// text returns the terminal transcript without escape sequences.
func (s *ptySession) text() string { return ansi.Strip(s.raw()) }

// waitFor waits until the transcript, escape sequences stripped, holds
// text; it fails the test after 10 seconds.
func (s *ptySession) waitFor(text string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.text(), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %q on the terminal; transcript:\n%s\nstderr: %s", text, s.text(), s.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForCount waits until text appears at least n times in the transcript.
func (s *ptySession) waitForCount(text string, n int) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(s.text(), text) < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %q ×%d on the terminal; transcript:\n%s", text, n, s.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// send types keys on the terminal.
func (s *ptySession) send(keys string) {
	s.t.Helper()
	if _, err := s.ptm.Write([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
}

// signal sends sig to askperm.
func (s *ptySession) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
}

// wait waits for askperm to exit (at most 15 seconds), checks that the
// terminal's settings are as they were before it ran, and returns how it
// ended.
func (s *ptySession) wait() result {
	s.t.Helper()
	var err error
	select {
	case err = <-s.done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		s.t.Fatalf("askperm hung; transcript:\n%s\nstderr: %s", s.text(), s.stderr.String())
	}
	after, terr := unix.IoctlGetTermios(int(s.pts.Fd()), unix.TCGETS)
	if terr != nil {
		s.t.Fatal(terr)
	}
	if !reflect.DeepEqual(s.before, after) {
		s.t.Errorf("terminal settings changed:\nbefore %+v\nafter  %+v", s.before, after)
	}
	return result{s.stdout.String(), s.stderr.String(), exitCode(s.t, err)}
}

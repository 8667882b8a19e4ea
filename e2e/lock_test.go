package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stateDir is the askperm state directory of a memoryEnv, created.
func stateDir(t *testing.T, env []string) string {
	t.Helper()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			dir := filepath.Join(v, "askperm")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	t.Fatal("no state directory in the environment")
	return ""
}

// holdReadOnly holds path locked (how: syscall.LOCK_EX or LOCK_SH)
// through a read-only descriptor until the test ends, as a sandboxed
// process that may only read the state directory can. The descriptor is
// closed on exec: no askperm run by the test inherits it.
func holdReadOnly(t *testing.T, path string, how int) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		t.Fatal(err)
	}
}

// heldFiles are the files of the state directory whose lock a reader can
// hold, and what askperm says naming each.
var heldFiles = []struct{ name, said string }{
	{"audit.log", "audit log: "},
	{"prompts", "state: "},
	{"askperm.db", "state store: "},
}

// running is askperm started with stdin from req, on a pipe, and no
// controlling terminal.
type running struct {
	cmd            *exec.Cmd
	stdin          *os.File // the pipe's read end, askperm's stdin
	stdout, stderr bytes.Buffer
	done           chan error
}

func start(t *testing.T, req []byte, env []string, args ...string) *running {
	t.Helper()
	in, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	if _, err := w.Write(req); err != nil { // a request fits in the pipe
		t.Fatal(err)
	}
	w.Close()
	r := &running{cmd: exec.Command(bin, args...), stdin: in, done: make(chan error, 1)}
	r.cmd.Stdin, r.cmd.Env = in, env
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	return r
}

// signalWhenRead sends sig once askperm has read its request (its
// handlers are installed before it reads) and then waited a moment, in
// which it is waiting for a held lock (for seconds).
func (r *running) signalWhenRead(t *testing.T, sig syscall.Signal) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(r.stdin.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("askperm did not read its request")
		}
	}
	time.Sleep(300 * time.Millisecond)
	r.cmd.Process.Signal(sig)
}

// wait waits for askperm to exit, failing the test when it has not
// within bound: a hang, past its deadline.
func (r *running) wait(t *testing.T, bound time.Duration) result {
	t.Helper()
	select {
	case err := <-r.done:
		return result{r.stdout.String(), r.stderr.String(), exitCode(t, err)}
	case <-time.After(bound):
		r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("askperm %v still running after %v (past its deadline); stderr %q", r.cmd.Args[1:], bound, r.stderr.String())
		return result{}
	}
}

// runBounded runs askperm as runPipe does, failing the test when it has
// not exited bound after its start.
func runBounded(t *testing.T, bound time.Duration, req []byte, env []string, args ...string) result {
	t.Helper()
	return start(t, req, env, args...).wait(t, bound)
}

// TestHeldLocksAnswerWithinTheDeadline: a process that can only read the
// state directory holds audit.log, prompts or askperm.db locked; askperm
// and its Claude Code hook still answer within their deadline, never
// with an allow that memory could have denied, and say which file is
// held, not "another askperm".
func TestHeldLocksAnswerWithinTheDeadline(t *testing.T) {
	req := readFile(t, "requests/write-file.json")
	for _, f := range heldFiles {
		for how, lock := range map[string]int{"exclusive": syscall.LOCK_EX, "shared": syscall.LOCK_SH} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel() // each waits out a lock of its own state directory
				env := memoryEnv()
				path := filepath.Join(stateDir(t, env), f.name)
				holdReadOnly(t, path, lock)
				said := f.said + path + " is locked by another process (held past "

				r := runBounded(t, 4*time.Second, req, env, "--timeout", "3s", "--answer", "allow-once")
				if d := checkDecision(t, r.stdout); d["decision"] != "allow" || d["cause"] != "user" {
					t.Errorf("canned allow-once: %v", d)
				}
				if !strings.Contains(r.stderr, said) || strings.Contains(r.stderr, "another askperm") {
					t.Errorf("stderr %q does not say %q", r.stderr, said)
				}

				r = runBounded(t, 4*time.Second, claudePayload(t, "pretooluse-bash.json"), env, "hook", "claude-code", "--timeout", "3s")
				if r.code != 0 || strings.Contains(r.stdout, `"allow"`) || !strings.Contains(r.stderr, said) {
					t.Errorf("hook: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestSignalWhileALockIsHeld: SIGTERM while askperm waits for a held
// lock ends it at once with a deny, cause cancelled, even after a canned
// allow.
func TestSignalWhileALockIsHeld(t *testing.T) {
	req := readFile(t, "requests/write-file.json")
	for _, f := range heldFiles {
		t.Run(f.name, func(t *testing.T) {
			env := memoryEnv()
			path := filepath.Join(stateDir(t, env), f.name)
			holdReadOnly(t, path, syscall.LOCK_EX)
			for _, args := range [][]string{{"--timeout", "20s", "--answer", "allow-once"}, {"--timeout", "20s", "--frontend", "none"}} {
				r := start(t, req, env, args...)
				r.signalWhenRead(t, syscall.SIGTERM)
				d := checkDecision(t, r.wait(t, 5*time.Second).stdout)
				if args[3] == "allow-once" || f.name != "audit.log" {
					wantDeny(t, d, "cancelled", "none")
				} else if d["decision"] != "deny" {
					// The deny may be made before the wait for the audit log.
					t.Errorf("%v: %v", args, d)
				}
			}
			// The Claude Code hook: a deny by cancellation, on stdout (with
			// the audit log held, the hand-back may be decided before its
			// wait).
			r := start(t, claudePayload(t, "pretooluse-bash.json"), env, "hook", "claude-code", "--timeout", "20s")
			r.signalWhenRead(t, syscall.SIGTERM)
			res := r.wait(t, 5*time.Second)
			cancelled := strings.Contains(res.stdout, `"permissionDecision":"deny","permissionDecisionReason":"askperm: denied (cancelled)"`)
			if !cancelled && (f.name != "audit.log" || !strings.Contains(res.stdout, `"permissionDecision":"ask"`)) {
				t.Errorf("hook: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
		})
	}
}

// TestLockedStoreNeverWeakensADeny: a remembered deny-always of a call, a
// rules file allowing the same call, and the store held by a reader: the
// call is never allowed (with nobody to ask, denied as unavailable), where
// it was once allowed by the rules file because memory went unread.
func TestLockedStoreNeverWeakensADeny(t *testing.T) {
	env := memoryEnv()
	req := readFile(t, "requests/write-file.json")
	rules := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(rules, []byte("[[rule]]\nname = \"writes-ok\"\ntool = \"write_file\"\ndecision = \"allow\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := checkDecision(t, runPipe(t, req, env, "--answer", "deny-always").stdout); d["decision"] != "deny" {
		t.Fatalf("remembering the deny: %v", d)
	}
	wantDeny(t, checkDecision(t, runPipe(t, req, env, "--rules", rules, "--frontend", "none").stdout), "rule", "memory")
	dir := stateDir(t, env)
	holdReadOnly(t, filepath.Join(dir, "askperm.db"), syscall.LOCK_EX)
	r := runBounded(t, 4*time.Second, req, env, "--rules", rules, "--frontend", "none", "--timeout", "3s")
	wantDeny(t, checkDecision(t, r.stdout), "unavailable", "none")
	if !strings.Contains(r.stderr, "automatic allows become a question") {
		t.Errorf("stderr %q", r.stderr)
	}
	// askperm check says the same.
	r = runBounded(t, 5*time.Second, req, env, "check", "--rules", rules, "--json")
	if !strings.HasPrefix(r.stdout, `{"result":"prompt"`) {
		t.Errorf("check with the store held: %q", r.stdout)
	}
}

// TestAuditOnAFullDisk: on a full disk an audit line is written whole or
// not at all; the lines after the disk has room again are whole, none
// swallowed by a torn one. It mounts a small tmpfs, so it runs as root.
func TestAuditOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mounting a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	env := baseEnv("XDG_STATE_HOME=" + mnt)
	req := readFile(t, "requests/write-file.json")
	run := func() result {
		t.Helper()
		r := runBounded(t, 20*time.Second, req, env, "--answer", "allow-once", "--timeout", "10s")
		checkDecision(t, r.stdout)
		return r
	}
	run()
	run()
	// Fill the disk.
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 512)
	for {
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	filler.Close()
	// Lines fill the audit log's last page, until one does not fit.
	full := ""
	for i := 0; i < 30 && !strings.Contains(full, "audit log: "); i++ {
		full += run().stderr
	}
	if !strings.Contains(full, "no space left on device") {
		t.Errorf("a full disk was not said: %q", full)
	}
	os.Remove(filepath.Join(mnt, "filler"))
	run()
	run()
	log, err := os.ReadFile(filepath.Join(mnt, "askperm", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(log, []byte("\n")) {
		t.Errorf("the audit log ends in a torn line")
	}
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	for i, line := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("audit line %d is not a whole entry: %v: %.120q", i+1, err, line)
		}
	}
	if len(lines) < 4 {
		t.Errorf("%d audit lines, want at least the 4 written with room", len(lines))
	}
}

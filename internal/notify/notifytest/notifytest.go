// Package notifytest makes notification programs for tests: scripts in
// a directory askperm trusts to hold programs, that record each call's
// environment, or hang with a child. Tests only.
package notifytest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Dir is a fresh directory askperm trusts to hold programs, with every
// directory above it: none under a world-writable /tmp, so in the
// user's cache directory. The test is skipped where there is none.
func Dir(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		t.Skipf("no cache directory: %v", err)
	}
	dir, err := os.MkdirTemp(cache, "askperm-notify-test-")
	if err != nil {
		t.Skipf("no cache directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Script writes the shell script body as program name in dir.
func Script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// Recorder is a program, in a directory of its own in dir, that writes
// its environment (env's lines) to a new file of that directory each
// time it runs; Calls reads them.
type Recorder struct {
	Program string
	calls   string
}

// NewRecorder makes a Recorder in dir.
func NewRecorder(t *testing.T, dir string) *Recorder {
	t.Helper()
	calls := filepath.Join(dir, "calls")
	if err := os.Mkdir(calls, 0o700); err != nil {
		t.Fatal(err)
	}
	// The call is written under another name and renamed: Calls never
	// sees half of one.
	body := fmt.Sprintf("f=$(/usr/bin/mktemp %s/.call.XXXXXX) && /usr/bin/env > \"$f\" && /bin/mv \"$f\" \"$f.env\"\n", calls)
	return &Recorder{Program: Script(t, dir, "record", body), calls: calls}
}

// Calls are the environments of the calls recorded so far, in no order.
func (r *Recorder) Calls(t *testing.T) []map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.calls, "*.env"))
	if err != nil {
		t.Fatal(err)
	}
	var envs []map[string]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			k, v, _ := strings.Cut(line, "=")
			env[k] = v
		}
		envs = append(envs, env)
	}
	return envs
}

// WaitCalls waits until n calls are recorded, failing the test after a
// minute, and returns them.
func (r *Recorder) WaitCalls(t *testing.T, n int) []map[string]string {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if calls := r.Calls(t); len(calls) >= n || time.Now().After(end) {
			return calls
		}
	}
}

// ShellAdds are the variables /bin/sh itself puts in its children's
// environment: not askperm's.
var ShellAdds = []string{"PWD"}

// OnlyNames fails the test when env holds a name neither in names nor
// in ShellAdds.
func OnlyNames(t *testing.T, env map[string]string, names []string) {
	t.Helper()
	for k := range env {
		if !slices.Contains(names, k) && !slices.Contains(ShellAdds, k) {
			t.Errorf("the program's environment holds %s=%q, which is not documented", k, env[k])
		}
	}
}

// Hanging is a program, in dir, that writes its pid and its child's to
// the file pids, then waits for ever; Alive reports which of them live.
type Hanging struct {
	Program string
	pids    string
}

// NewHanging makes a Hanging in dir.
func NewHanging(t *testing.T, dir string) *Hanging {
	t.Helper()
	pids := filepath.Join(dir, "pids")
	body := fmt.Sprintf("/bin/sleep 1000 &\necho $$ $! > %s.tmp && /bin/mv %s.tmp %s\nwait\n", pids, pids, pids)
	return &Hanging{Program: Script(t, dir, "hang", body), pids: pids}
}

// Pids waits for the program's pids (its own and its child's), failing
// the test after a minute.
func (h *Hanging) Pids(t *testing.T) []int {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(h.pids)
		if err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(end) {
			t.Fatal("the hanging program never started")
		}
	}
}

// WaitGone waits until none of pids runs (a zombie counts as gone),
// failing the test after a minute.
func WaitGone(t *testing.T, pids []int) {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if !slices.ContainsFunc(pids, running) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("processes %v still run", pids)
		}
	}
}

// running reports whether pid runs: it exists and is no zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sessionRequest is a request of session s whose arguments hold n, so
// that each n is another exact call.
func sessionRequest(s string, n int) []byte {
	return fmt.Appendf(nil, `{"id":"%d","tool":"write_file","action":"write","session_id":%q,"arguments":{"n":%d}}`, n, s, n)
}

// parallel runs n helpers at once, the i-th on request req(i), and returns
// their decisions in order.
func parallel(t *testing.T, n int, env []string, req func(i int) []byte, args ...string) []map[string]any {
	t.Helper()
	out := make([]map[string]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := runPipe(t, req(i), env, args...)
			if r.code != 0 {
				t.Errorf("helper %d: exit %d, stderr %q", i, r.code, r.stderr)
				return
			}
			out[i] = checkDecision(t, r.stdout)
		})
	}
	wg.Wait()
	return out
}

// TestFiftyHelpersInOneSession: fifty real helper processes of one session
// at once each get exactly one decision, and nothing they record is lost:
// every approval for the session, every breaker count, every prompt of
// the rate limit.
func TestFiftyHelpersInOneSession(t *testing.T) {
	const n = 50
	t.Run("approvals", func(t *testing.T) {
		env := memoryEnv()
		for i, d := range parallel(t, n, env, func(i int) []byte { return sessionRequest("s", i) }, "--answer", "allow-session") {
			if d["decision"] != "allow" || d["persist"] != "session" || d["id"] != fmt.Sprint(i) {
				t.Errorf("helper %d: %v", i, d)
			}
		}
		var list []any
		if err := json.Unmarshal([]byte(runIn(t, env, "session", "list", "--json")), &list); err != nil || len(list) != n {
			t.Errorf("%d approvals remembered, %v; want %d", len(list), err, n)
		}
		for i, d := range parallel(t, n, env, func(i int) []byte { return sessionRequest("s", i) }, "--frontend", "none") {
			if d["cause"] != "session" {
				t.Errorf("helper %d, again: %v", i, d)
			}
		}
	})
	t.Run("breaker", func(t *testing.T) {
		// Every third denial in a row trips it: exactly 16 of 50.
		stops := 0
		for _, d := range parallel(t, n, memoryEnv(), func(i int) []byte { return sessionRequest("s", i) }, "--answer", "deny-once") {
			if d["stop"] == true {
				stops++
			}
		}
		if stops != n/3 {
			t.Errorf("%d decisions carry stop, want %d", stops, n/3)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		// 70 prompts in a minute: 60 reach the canned answer, 10 do not.
		counts := map[any]int{}
		for _, d := range parallel(t, 70, memoryEnv(), func(i int) []byte { return sessionRequest("s", i) }, "--answer", "allow-once") {
			counts[d["cause"]]++
		}
		if counts["user"] != 60 || counts["rate-limit"] != 10 {
			t.Errorf("causes %v, want 60 user and 10 rate-limit", counts)
		}
	})
}

// TestStoreLockedByAnother: a store whose lock another process holds is
// waited for a bounded time, then the request is decided without memory
// (never allowed by it), within its deadline; helpers SIGKILLed while
// waiting leave no lock behind.
func TestStoreLockedByAnother(t *testing.T) {
	env := memoryEnv()
	req := sessionRequest("s", 1)
	checkDecision(t, runPipe(t, req, env, "--answer", "allow-session").stdout)
	state := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = filepath.Join(v, "askperm")
		}
	}
	holder := exec.Command("flock", "--close", "-x", filepath.Join(state, "askperm.db"), "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Skip("flock:", err)
	}
	defer holder.Process.Kill()
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	r := runPipe(t, req, env, "--frontend", "none", "--timeout", "4s")
	d := checkDecision(t, r.stdout)
	if took := time.Since(start); d["cause"] != "unavailable" || took > 4*time.Second || !strings.Contains(r.stderr, "deciding without memory") {
		t.Errorf("locked store: %v after %v, stderr %q", d, took, r.stderr)
	}

	// Helpers waiting for the lock, killed.
	var waiting []*exec.Cmd
	for range 5 {
		cmd := exec.Command(bin, "--frontend", "none", "--timeout", "60s")
		cmd.Stdin, cmd.Env = bytes.NewReader(req), env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, cmd)
	}
	time.Sleep(300 * time.Millisecond)
	for _, cmd := range waiting {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	holder.Process.Kill()
	holder.Wait()
	start = time.Now()
	d = checkDecision(t, runPipe(t, req, env, "--frontend", "none", "--timeout", "10s").stdout)
	if took := time.Since(start); d["cause"] != "session" || took > 2*time.Second {
		t.Errorf("after the kills: %v after %v", d, took)
	}
	if _, err := os.Stat(filepath.Join(state, "askperm.db")); err != nil {
		t.Error(err)
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestTwoHundredHelpersAllAudited: two hundred helpers at once on one
// state directory whose audit log another process holds locked past
// their short deadline each get their decision and keep its line for
// later, all at once; the next helper once the log frees folds them in:
// every decision is in the audit log exactly once, none lost.
func TestTwoHundredHelpersAllAudited(t *testing.T) {
	skipSlow(t)
	const n = 200
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[limits]\nprompts_per_minute = 0\nprompts_per_minute_user = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := memoryEnv("ASKPERM_CONFIG=" + cfg)
	log, err := os.OpenFile(filepath.Join(stateDir(t, env), "audit.log"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := syscall.Flock(int(log.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	late := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := runPipe(t, sessionRequest(fmt.Sprint("s", i%7), i), env, "--answer", "allow-once", "--timeout", "2s")
			d := checkDecision(t, r.stdout)
			if r.code != 0 || d["id"] != fmt.Sprint(i) || strings.Contains(r.stderr, "lost") || strings.Contains(r.stderr, "not counted") {
				t.Errorf("helper %d: exit %d, %v, stderr %q", i, r.code, d, r.stderr)
			}
			if strings.Contains(r.stderr, "until it frees") || strings.Contains(r.stderr, "when the store frees") {
				mu.Lock()
				late++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	syscall.Flock(int(log.Fd()), syscall.LOCK_UN)
	if late != n {
		t.Errorf("%d of %d helpers said their line was kept for later", late, n)
	}
	// One more decision folds in whatever was kept.
	checkDecision(t, runPipe(t, sessionRequest("s", n), env, "--answer", "allow-once").stdout)
	seen := map[string]int{}
	for line := range strings.Lines(runIn(t, env, "log", "--json")) {
		var e struct{ ID string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		seen[e.ID]++
	}
	for i := range n + 1 {
		if seen[fmt.Sprint(i)] != 1 {
			t.Errorf("decision %d: %d lines in the audit log", i, seen[fmt.Sprint(i)])
		}
	}
	if len(seen) != n+1 {
		t.Errorf("%d decisions in the audit log, want %d", len(seen), n+1)
	}
	dir := stateDir(t, env)
	for _, name := range []string{"audit.pending", "breaker.pending"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 {
			t.Errorf("%s still holds %d bytes after the store freed", name, len(b))
		}
	}
}

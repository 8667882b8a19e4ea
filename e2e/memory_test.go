package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// runIn runs an askperm subcommand with env and returns its stdout,
// failing the test on a non-zero exit.
func runIn(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := runPipe(t, nil, env, args...)
	if r.code != 0 {
		t.Fatalf("askperm %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	return r.stdout
}

// TestLimitsPerUserAcrossSessions: helpers whose requests each name
// another session still meet the user's prompt rate limit and denial
// breaker (set low in config.toml).
func TestLimitsPerUserAcrossSessions(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[limits]\nprompts_per_minute_user = 20\n[breaker]\nuser_consecutive = 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rotating := func(i int) []byte { return sessionRequest(fmt.Sprint("rotated-", i), i) }
	counts := map[any]int{}
	for _, d := range parallel(t, 30, memoryEnv("ASKPERM_CONFIG="+cfg), rotating, "--answer", "allow-once") {
		counts[d["cause"]]++
	}
	if counts["user"] != 20 || counts["rate-limit"] != 10 {
		t.Errorf("causes %v, want 20 user and 10 rate-limit", counts)
	}
	stops := 0
	for _, d := range parallel(t, 20, memoryEnv("ASKPERM_CONFIG="+cfg), rotating, "--answer", "deny-once") {
		if d["stop"] == true {
			stops++
		}
	}
	if stops != 4 {
		t.Errorf("%d denials of 20 in rotating sessions carry stop, want 4", stops)
	}
}

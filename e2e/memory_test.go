package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRememberedAlwaysRule: an always-answer is remembered, and decides
// the next covered request in another process before anyone is asked;
// --no-remember neither uses nor records it.
func TestRememberedAlwaysRule(t *testing.T) {
	req := readFile(t, "requests/write-file.json")
	for _, tc := range []struct{ answer, decision string }{{"allow-always", "allow"}, {"deny-always", "deny"}} {
		env := memoryEnv()
		if r := runPipe(t, req, env, "--no-remember", "--answer", tc.answer); r.code != 0 {
			t.Fatalf("%s --no-remember: exit %d, %s", tc.answer, r.code, r.stderr)
		}
		if d := checkDecision(t, runPipe(t, req, env, "--frontend", "none").stdout); d["cause"] != "unavailable" {
			t.Errorf("%s: remembered with --no-remember: %v", tc.answer, d)
		}
		first := checkDecision(t, runPipe(t, req, env, "--answer", tc.answer).stdout)
		if first["persist"] != "always" || first["frontend"] != "answers" {
			t.Fatalf("%s: first %v", tc.answer, first)
		}
		d := checkDecision(t, runPipe(t, req, env, "--frontend", "none").stdout)
		if d["decision"] != tc.decision || d["cause"] != "rule" || d["frontend"] != "memory" || d["persist"] != "once" {
			t.Errorf("%s: second %v", tc.answer, d)
		}
		if d := checkDecision(t, runPipe(t, req, env, "--frontend", "none", "--no-remember").stdout); d["cause"] != "unavailable" {
			t.Errorf("%s: --no-remember used memory: %v", tc.answer, d)
		}
	}
}

// TestAllowForThisSession: allow-session is offered to a request with a
// session, remembered for that exact call, and answers it again in that
// session only.
func TestAllowForThisSession(t *testing.T) {
	req := readFile(t, "requests/write-file.json")
	if !strings.Contains(string(req), `"session_id": "s-1"`) {
		t.Fatal("the test request has no session s-1")
	}
	env := memoryEnv()
	first := checkDecision(t, runPipe(t, req, env, "--answer", "allow-session").stdout)
	if first["decision"] != "allow" || first["persist"] != "session" || first["cause"] != "user" {
		t.Fatalf("first %v", first)
	}
	d := checkDecision(t, runPipe(t, req, env, "--frontend", "none").stdout)
	if d["decision"] != "allow" || d["persist"] != "session" || d["cause"] != "session" || d["frontend"] != "memory" {
		t.Errorf("same call: %v", d)
	}
	other := []byte(strings.Replace(string(req), `"s-1"`, `"s-2"`, 1))
	if d := checkDecision(t, runPipe(t, other, env, "--frontend", "none").stdout); d["cause"] != "unavailable" {
		t.Errorf("another session: %v", d)
	}
}

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

// TestRulesListAndForget: a remembered rule is listed, and once forgotten
// the next request is asked again.
func TestRulesListAndForget(t *testing.T) {
	env := memoryEnv()
	req := readFile(t, "requests/write-file.json")
	checkDecision(t, runPipe(t, req, env, "--answer", "deny-always", "--message", "no").stdout)
	var rules []map[string]any
	if err := json.Unmarshal([]byte(runIn(t, env, "rules", "list", "--json")), &rules); err != nil || len(rules) != 1 ||
		rules[0]["decision"] != "deny" || rules[0]["tool"] != "write_file" {
		t.Fatalf("rules: %v, %v", rules, err)
	}
	if table := runIn(t, env, "rules", "list"); !strings.Contains(table, "write_file") || !strings.HasPrefix(table, "ID") {
		t.Errorf("table: %q", table)
	}
	runIn(t, env, "rules", "forget", fmt.Sprint(rules[0]["id"]))
	if d := checkDecision(t, runPipe(t, req, env, "--frontend", "none").stdout); d["cause"] != "unavailable" {
		t.Errorf("after forget: %v", d)
	}
	if r := runPipe(t, nil, env, "rules", "forget", "99"); r.code != 64 {
		t.Errorf("forgetting a rule that is not there: exit %d", r.code)
	}
}

// TestAuditLogOfEveryDecision: every decision, whoever made it, is a line
// of the audit log, and askperm log filters them.
func TestAuditLogOfEveryDecision(t *testing.T) {
	env := memoryEnv()
	write, run := readFile(t, "requests/write-file.json"), readFile(t, "requests/run-command.json")
	runPipe(t, write, env, "--answer", "allow-always")
	runPipe(t, write, env, "--frontend", "none")
	runPipe(t, run, env, "--frontend", "none")
	var causes []string
	for _, line := range strings.Split(strings.TrimSpace(runIn(t, env, "log", "--json")), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		causes = append(causes, fmt.Sprint(e["cause"], "/", e["frontend"]))
	}
	if want := []string{"user/answers", "rule/memory", "unavailable/none"}; !slices.Equal(causes, want) {
		t.Errorf("logged %v, want %v", causes, want)
	}
	if out := runIn(t, env, "log", "--decision", "deny", "--json"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "run_command") {
		t.Errorf("filtered: %q", out)
	}
}

// TestBreakerStopsTheTurn: the third denial in a row of one session tells
// the caller to stop the agent's turn.
func TestBreakerStopsTheTurn(t *testing.T) {
	env := memoryEnv()
	req := readFile(t, "requests/write-file.json")
	var stops []any
	for range 4 {
		stops = append(stops, checkDecision(t, runPipe(t, req, env, "--answer", "deny-once").stdout)["stop"])
	}
	if want := []any{nil, nil, true, nil}; !slices.Equal(stops, want) {
		t.Errorf("stop: %v, want %v", stops, want)
	}
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

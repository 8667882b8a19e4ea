package e2e

import (
	"strings"
	"testing"
)

// TestRememberedAlwaysRule: an always-answer is remembered, and decides
// the next covered request in another process before anyone is asked;
// --no-remember neither uses nor records it.
func TestRememberedAlwaysRule(t *testing.T) {
	req := readFile(t, "requests/write-file.json")
	for _, tc := range []struct{ answer, decision string }{{"allow-always", "allow"}, {"deny-always", "deny"}} {
		env := baseEnv()
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
	env := baseEnv()
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

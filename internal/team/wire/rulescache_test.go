package wire

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
)

// Team memory on a real server: the rules are fetched by this test
// binary as askperm-team's rules-fetch (TestMain).

var ruleTime = time.Unix(1_800_000_000, 0)

// said collects a Memory's diagnostics.
type said []string

func (w *said) warn(s string) { *w = append(*w, s) }

// decides says which rule ids decide req on m at now, and how.
func decides(m team.Memory, req *decision.Request, now time.Time) []string {
	var out []string
	matches, known := m.Matching(req, now)
	for _, x := range matches {
		out = append(out, x.Decision+" "+x.ID)
	}
	if !known {
		out = append(out, "unknown")
	}
	return out
}

// writeRequest is testRequest for another path.
func writeRequest(t testing.TB, path string) *decision.Request {
	return parse(t, strings.Replace(testRequest, `"value":"/p/a"`, `"value":"`+path+`"`, 1))
}

// team is a server with its streams and buckets, and the rules bucket as
// an approver writes to it.
type teamServer struct {
	*testServer
	rules jetstream.KeyValue
}

func startTeam(t testing.TB) teamServer {
	t.Helper()
	ts := startServer(t)
	c := validConfig()
	c.URL = ts.url()
	js := jetStream(t, c)
	ctx := context.Background()
	if err := EnsureStreams(ctx, js, c); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, c.Names().RulesBucket())
	if err != nil {
		t.Fatal(err)
	}
	return teamServer{ts, kv}
}

// host is the team memory of host name trusting approvers, with a state
// directory of its own.
func (ts teamServer) host(t testing.TB, name string, w *said, approvers ...string) team.Memory {
	t.Helper()
	c := validConfig(approvers...)
	c.URL, c.Host = ts.url(), name
	return team.Memory{Config: c, Dir: filepath.Join(t.TempDir(), "state"), Warn: w.warn}
}

// writeRule writes kp's team rule for answer a to raw, at ruleTime.
func (ts teamServer) writeRule(t testing.TB, kp nkeys.KeyPair, raw string, a form.Answer) string {
	t.Helper()
	id, err := WriteRule(context.Background(), ts.rules, kp, []byte(raw), decide(t, parse(t, raw), a), ruleTime)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A rule written by approver K decides on every host that trusts K, by
// its scope, and on no other host; a deny-always likewise.
func TestTeamRuleDecidesOnHostsTrustingItsApprover(t *testing.T) {
	ts := startTeam(t)
	k, other := userKey(t), userKey(t)
	allow := ts.writeRule(t, k, testRequest, form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": "/p/"}})
	deny := ts.writeRule(t, k, strings.Replace(testRequest, `"write"`, `"delete"`, 1), form.Answer{Choice: form.DenyAlways})
	var w said
	a := ts.host(t, "alpha", &w, team.PublicKey(k))
	b := ts.host(t, "beta", &w, team.PublicKey(other), team.PublicKey(k))
	c := ts.host(t, "gamma", &w, team.PublicKey(other))
	later := writeRequest(t, "/p/b")
	now := ruleTime.Add(time.Hour)
	for _, m := range []team.Memory{a, b} {
		if got := decides(m, later, now); !slices.Equal(got, []string{"allow " + allow}) {
			t.Errorf("host %s: %v, want the allow", m.Config.Host, got)
		}
		if got := decides(m, writeRequest(t, "/q"), now); got != nil {
			t.Errorf("host %s: a path outside the scope: %v", m.Config.Host, got)
		}
		del := parse(t, strings.Replace(testRequest, `"write"`, `"delete"`, 1))
		if got := decides(m, del, now); !slices.Equal(got, []string{"deny " + deny}) {
			t.Errorf("host %s: %v, want the deny", m.Config.Host, got)
		}
	}
	if got := decides(c, later, now); got != nil {
		t.Errorf("a host not trusting the approver: %v", got)
	}
	if len(w) > 0 {
		t.Errorf("said: %q", w)
	}
	if m, _ := a.Matching(later, now); len(m) != 1 || m[0].Approver != team.PublicKey(k) || m[0].Name() != "team rule "+allow+" by "+team.PublicKey(k) {
		t.Errorf("match %+v", m)
	}
}

// A rule forged in the bucket (a bad signature, a widened scope, an
// unlisted approver, another approver's key) decides nothing; the ones
// that would have matched are said.
func TestForgedTeamRulesIgnored(t *testing.T) {
	ts := startTeam(t)
	k, rogue := userKey(t), userKey(t)
	req := parse(t, testRequest)
	narrow := form.Answer{Choice: form.AllowAlways}
	_, good, err := team.SignRule(k, []byte(testRequest), decide(t, req, narrow), ruleTime)
	if err != nil {
		t.Fatal(err)
	}
	var s team.SignedRule
	if err := json.Unmarshal(good, &s); err != nil {
		t.Fatal(err)
	}
	widened := s
	widened.Rule = []byte(strings.Replace(string(s.Rule), `"scopes":{"path":"/p/a"}`, `"scopes":{"path":"/p/"}`, 1))
	wb, _ := json.Marshal(widened)
	ctx := context.Background()
	put := func(key string, value []byte) {
		if _, err := ts.rules.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	wid := digestOf(string(widened.Rule))[:32]
	put(team.RuleKey(team.PublicKey(k), wid), wb)                                                                        // scope changed after signing
	ts.writeRule(t, rogue, testRequest, form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": "/p/"}}) // unlisted approver
	_, rv, _ := team.SignRule(rogue, []byte(testRequest), decide(t, req, form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": "/p/"}}), ruleTime.Add(time.Second))
	put(team.RuleKey(team.PublicKey(k), strings.Repeat("1", 32)), rv) // a rogue's rule under K's key
	var w said
	m := ts.host(t, "alpha", &w, team.PublicKey(k))
	if got := decides(m, writeRequest(t, "/p/c"), ruleTime); got != nil {
		t.Errorf("the widened rule decided: %v", got)
	}
	if got := decides(m, writeRequest(t, "/p/b"), ruleTime); got != nil {
		t.Errorf("a rogue's rule decided: %v", got)
	}
	if !slices.ContainsFunc(w, func(s string) bool {
		return strings.Contains(s, "signature does not verify") && strings.Contains(s, wid)
	}) {
		t.Errorf("the forged rule was not said: %q", w)
	}
}

// Removing K from approvers stops its rules at once, also from the cache
// with the server down; with the server down, cached rules still decide,
// the server tried again only team.RulesFresh after a failure; a rule whose
// lifetime ended stops.
func TestTeamRulesOfflineRevokedExpired(t *testing.T) {
	ts := startTeam(t)
	k := userKey(t)
	req := parse(t, testRequest)
	id := ts.writeRule(t, k, testRequest, form.Answer{Choice: form.AllowAlways, Lifetime: "900"})
	var w said
	m := ts.host(t, "alpha", &w, team.PublicKey(k))
	now := ruleTime.Add(time.Minute)
	if got := decides(m, req, now); !slices.Equal(got, []string{"allow " + id}) {
		t.Fatalf("online: %v", got)
	}
	ts.stop()
	stale := now.Add(team.RulesFresh)
	if got := decides(m, req, stale); !slices.Equal(got, []string{"allow " + id}) {
		t.Errorf("offline: %v", got)
	}
	if len(w) != 1 || !strings.Contains(w[0], "deciding by those cached at") {
		t.Errorf("offline said: %q", w)
	}
	revoked := m
	revoked.Config.Approvers = []string{team.PublicKey(userKey(t))}
	if got := decides(revoked, req, now); got != nil {
		t.Errorf("revoked approver, cache fresh: %v", got)
	}
	if got := decides(revoked, req, stale); got != nil {
		t.Errorf("revoked approver, offline: %v", got)
	}
	if got := decides(m, req, stale.Add(team.RulesFresh-time.Millisecond)); !slices.Equal(got, []string{"allow " + id}) || len(w) != 1 {
		t.Errorf("offline, a fetch failed lately: %v, not tried again: %q", got, w)
	}
	if got := decides(m, req, ruleTime.Add(901*time.Second)); got != nil {
		t.Errorf("expired: %v", got)
	}
}

// A fresh cache decides without the server; a stale one is fetched again
// and sees a rule forgotten (deleted) by then.
func TestTeamRulesCacheFreshness(t *testing.T) {
	ts := startTeam(t)
	k := userKey(t)
	req := parse(t, testRequest)
	id := ts.writeRule(t, k, testRequest, form.Answer{Choice: form.AllowAlways})
	var w said
	m := ts.host(t, "alpha", &w, team.PublicKey(k))
	now := ruleTime.Add(time.Minute)
	decides(m, req, now)
	if err := ts.rules.Delete(context.Background(), team.RuleKey(team.PublicKey(k), id)); err != nil {
		t.Fatal(err)
	}
	if got := decides(m, req, now.Add(team.RulesFresh-time.Millisecond)); !slices.Equal(got, []string{"allow " + id}) {
		t.Errorf("fresh cache: %v", got)
	}
	if got := decides(m, req, now.Add(team.RulesFresh)); got != nil {
		t.Errorf("stale cache refetched, the rule forgotten: %v", got)
	}
	if len(w) > 0 {
		t.Errorf("said: %q", w)
	}
}

// A cache others can write decides nothing, and says so.
func TestTeamRulesCacheChecked(t *testing.T) {
	var w said
	k := userKey(t)
	m := team.Memory{Config: validConfig(team.PublicKey(k)), Dir: t.TempDir(), Warn: w.warn}
	req := parse(t, testRequest)
	id, value, err := team.SignRule(k, []byte(testRequest), decide(t, req, form.Answer{Choice: form.AllowAlways}), ruleTime)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := team.SaveRules(m.Config, m.Dir, []team.RuleEntry{{Key: team.RuleKey(team.PublicKey(k), id), Value: value}}, ruleTime)
	if err != nil || len(rc.Rules) != 1 || rc.Rules[0].Rule == nil {
		t.Fatalf("saved %+v, %v", rc, err)
	}
	path := filepath.Join(m.Dir, team.RulesCacheName)
	if got := decides(m, req, ruleTime); len(got) != 1 {
		t.Fatalf("the cache did not decide: %v %q", got, w)
	}
	if err := os.Chmod(path, 0o622); err != nil {
		t.Fatal(err)
	}
	// Refused, and the team's denies unknown: no allow stands by itself.
	if got := decides(m, req, ruleTime); !slices.Equal(got, []string{"unknown"}) {
		t.Errorf("a world-writable cache decided: %v", got)
	}
	if len(w) != 1 || !strings.Contains(w[0], "unsafe permissions") {
		t.Errorf("said: %q", w)
	}
	os.Remove(path)
	if err := os.Symlink(filepath.Join(t.TempDir(), "x"), path); err != nil {
		t.Fatal(err)
	}
	if got := decides(m, req, ruleTime); !slices.Equal(got, []string{"unknown"}) {
		t.Errorf("a symlinked cache decided: %v", got)
	}
}

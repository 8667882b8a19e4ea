package team

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/state"
)

// said collects a Memory's diagnostics.
type said []string

func (w *said) warn(s string) { *w = append(*w, s) }

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
func (ts teamServer) host(t testing.TB, name string, w *said, approvers ...string) Memory {
	t.Helper()
	c := validConfig(approvers...)
	c.URL, c.Host = ts.url(), name
	return Memory{Config: c, Dir: filepath.Join(t.TempDir(), "state"), Warn: w.warn}
}

// writeRule writes kp's team rule for answer a to req, at ruleTime.
func (ts teamServer) writeRule(t testing.TB, kp nkeys.KeyPair, req *decision.Request, a form.Answer) string {
	t.Helper()
	id, err := WriteRule(context.Background(), ts.rules, kp, req, decide(t, req, a), ruleTime)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// decides says which rule ids decide req on m at now, and how.
func decides(m Memory, req *decision.Request, now time.Time) []string {
	var out []string
	for _, x := range m.Matching(req, now) {
		out = append(out, x.Decision+" "+x.ID)
	}
	return out
}

// writeRequest is testRequest for another path.
func writeRequest(t testing.TB, path string) *decision.Request {
	return parse(t, strings.Replace(testRequest, `"value":"/p/a"`, `"value":"`+path+`"`, 1))
}

// A rule written by approver K decides on every host that trusts K, by
// its scope, and on no other host; a deny-always likewise.
func TestTeamRuleDecidesOnHostsTrustingItsApprover(t *testing.T) {
	ts := startTeam(t)
	k, other := userKey(t), userKey(t)
	req := parse(t, testRequest)
	allow := ts.writeRule(t, k, req, form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": "/p/"}})
	deny := ts.writeRule(t, k, parse(t, strings.Replace(testRequest, `"write"`, `"delete"`, 1)), form.Answer{Choice: form.DenyAlways})
	var w said
	a := ts.host(t, "alpha", &w, PublicKey(k))
	b := ts.host(t, "beta", &w, PublicKey(other), PublicKey(k))
	c := ts.host(t, "gamma", &w, PublicKey(other))
	later := writeRequest(t, "/p/b")
	now := ruleTime.Add(time.Hour)
	for _, m := range []Memory{a, b} {
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
	if m := a.Matching(later, now); len(m) != 1 || m[0].Approver != PublicKey(k) || m[0].Name() != "team rule "+allow+" by "+PublicKey(k) {
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
	_, good, err := SignRule(k, req, decide(t, req, narrow), ruleTime)
	if err != nil {
		t.Fatal(err)
	}
	var s SignedRule
	if err := json.Unmarshal(good, &s); err != nil {
		t.Fatal(err)
	}
	widened := s
	widened.Rule = []byte(strings.Replace(string(s.Rule), `"match":"/p/a"`, `"match":"/etc/passwd"`, 1))
	wb, _ := json.Marshal(widened)
	ctx := context.Background()
	put := func(key string, value []byte) {
		if _, err := ts.rules.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	wid := ruleID(widened.Rule)
	put(RuleKey(PublicKey(k), wid), wb)                                                                          // scope changed after signing
	ts.writeRule(t, rogue, req, form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": "/p/"}}) // unlisted approver
	_, rv, _ := SignRule(rogue, req, decide(t, req, form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": "/p/"}}), ruleTime.Add(time.Second))
	put(RuleKey(PublicKey(k), strings.Repeat("1", ruleIDLen)), rv) // a rogue's rule under K's key
	var w said
	m := ts.host(t, "alpha", &w, PublicKey(k))
	if got := decides(m, writeRequest(t, "/etc/passwd"), ruleTime); got != nil {
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
// the server tried again only RulesFresh after a failure; a rule whose
// lifetime ended stops.
func TestTeamRulesOfflineRevokedExpired(t *testing.T) {
	ts := startTeam(t)
	k := userKey(t)
	req := parse(t, testRequest)
	id := ts.writeRule(t, k, req, form.Answer{Choice: form.AllowAlways, Lifetime: "900"})
	var w said
	m := ts.host(t, "alpha", &w, PublicKey(k))
	now := ruleTime.Add(time.Minute)
	if got := decides(m, req, now); !slices.Equal(got, []string{"allow " + id}) {
		t.Fatalf("online: %v", got)
	}
	ts.stop()
	stale := now.Add(RulesFresh)
	if got := decides(m, req, stale); !slices.Equal(got, []string{"allow " + id}) {
		t.Errorf("offline: %v", got)
	}
	if len(w) != 1 || !strings.Contains(w[0], "deciding by those cached at") {
		t.Errorf("offline said: %q", w)
	}
	revoked := m
	revoked.Config.Approvers = []string{PublicKey(userKey(t))}
	if got := decides(revoked, req, now); got != nil {
		t.Errorf("revoked approver, cache fresh: %v", got)
	}
	if got := decides(revoked, req, stale); got != nil {
		t.Errorf("revoked approver, offline: %v", got)
	}
	if got := decides(m, req, stale.Add(RulesFresh-time.Millisecond)); !slices.Equal(got, []string{"allow " + id}) || len(w) != 1 {
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
	id := ts.writeRule(t, k, req, form.Answer{Choice: form.AllowAlways})
	var w said
	m := ts.host(t, "alpha", &w, PublicKey(k))
	now := ruleTime.Add(time.Minute)
	decides(m, req, now)
	if err := ts.rules.Delete(context.Background(), RuleKey(PublicKey(k), id)); err != nil {
		t.Fatal(err)
	}
	if got := decides(m, req, now.Add(RulesFresh-time.Millisecond)); !slices.Equal(got, []string{"allow " + id}) {
		t.Errorf("fresh cache: %v", got)
	}
	if got := decides(m, req, now.Add(RulesFresh)); got != nil {
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
	m := Memory{Config: validConfig(PublicKey(k)), Dir: t.TempDir(), Warn: w.warn}
	rc := RulesCache{URL: m.Config.URL, Prefix: m.Config.Prefix, Fetched: ruleTime.UnixMilli()}
	req := parse(t, testRequest)
	key, value := signRule(t, k, req, form.Answer{Choice: form.AllowAlways})
	rc.Rules = []RuleEntry{{key, value}}
	b, _ := json.Marshal(rc)
	path := filepath.Join(m.Dir, RulesCacheName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := decides(m, req, ruleTime); len(got) != 1 {
		t.Fatalf("the cache did not decide: %v %q", got, w)
	}
	if err := os.Chmod(path, 0o622); err != nil {
		t.Fatal(err)
	}
	if got := decides(m, req, ruleTime); got != nil {
		t.Errorf("a world-writable cache decided: %v", got)
	}
	if len(w) != 1 || !strings.Contains(w[0], "unsafe permissions") {
		t.Errorf("said: %q", w)
	}
	os.Remove(path)
	if err := os.Symlink(filepath.Join(t.TempDir(), "x"), path); err != nil {
		t.Fatal(err)
	}
	if got := decides(m, req, ruleTime); got != nil {
		t.Errorf("a symlinked cache decided: %v", got)
	}
}

// Pools of generated requests and answers, small so that rules and
// requests meet.
var (
	genActions = []string{"write", "exec"}
	genValues  = []string{"/p/a", "/p/b", "/p", "/q/a", "rm -rf x", "ls -la", "git commit -m x", "ls; rm x"}
	genScopes  = [][]map[string]string{
		{{"label": "file", "match": "/p/a"}, {"label": "dir", "match": "/p/", "kind": "prefix"}},
		{{"label": "exact", "match": "rm -rf x"}, {"label": "rm", "match": "rm", "kind": "words"}, {"label": "any", "match": "", "kind": "any"}},
		{{"label": "glob", "match": "/p/*", "kind": "glob"}, {"label": "ls", "match": "ls", "kind": "words"}},
	}
	genChoices = []form.Choice{form.AllowAlways, form.DenyAlways}
)

// genRequest is a request drawn from the pools.
func genRequest(t testing.TB, r *rand.Rand) *decision.Request {
	scopes := genScopes[r.IntN(len(genScopes))]
	dim := map[string]any{"name": []string{"path", "command"}[r.IntN(2)], "value": genValues[r.IntN(len(genValues))], "scopes": scopes}
	if dim["name"] == "command" && r.IntN(2) == 0 {
		dim["syntax"] = "shell"
	}
	req := map[string]any{"id": fmt.Sprint("r", r.IntN(1000)), "action": genActions[r.IntN(2)], "dimensions": []any{dim},
		"grants": [][]map[string]string{{{"name": "fs.write"}}, {{"name": "fs.write"}, {"name": "fs.create"}}}[r.IntN(2)]}
	switch r.IntN(3) {
	case 0:
		req["workdir"] = map[string]string{"value": "/p"}
	case 1:
		req["workdir"] = map[string]string{"value": "/w"}
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(b))
}

// withValue is req with its first dimension's value v.
func withValue(t testing.TB, req *decision.Request, v string) *decision.Request {
	raw, _, err := decision.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["dimensions"].([]any)[0].(map[string]any)["value"] = v
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(b))
}

// A team rule and the same rule remembered locally decide the same
// requests, the same way, generated ones: team memory is local memory's
// matching on the rule the same answer saves.
func TestTeamRuleMatchesAsLocalMemory(t *testing.T) {
	k := userKey(t)
	var w said
	m := Memory{Config: validConfig(PublicKey(k)), Warn: w.warn}
	r := rand.New(rand.NewPCG(23, 11))
	decided := 0
	for range 400 {
		req := genRequest(t, r)
		f := form.New(req, form.Options{})
		a := f.Defaults()
		a.Choice = genChoices[r.IntN(len(genChoices))]
		if len(req.Dimensions) > 0 && r.IntN(2) == 0 {
			dim := req.Dimensions[0]
			a.Scopes = map[string]string{dim.Name: dim.Scopes[r.IntN(len(dim.Scopes))].Match}
		}
		if r.IntN(3) == 0 {
			a.Lifetime = "900"
		}
		d, err := f.Decide(a, decision.FrontendTeam, ruleTime)
		if err != nil {
			continue // an answer the form refuses saves nothing either way
		}
		id, value, err := SignRule(k, req, d, ruleTime)
		local, ok := state.RuleOf(req, d, ruleTime)
		if (err == nil) != ok {
			t.Fatalf("SignRule %v, RuleOf %v", err, ok)
		}
		if !ok {
			continue
		}
		entries := []RuleEntry{{RuleKey(PublicKey(k), id), value}}
		for range 10 {
			later := genRequest(t, r)
			if r.IntN(2) == 0 {
				later = withValue(t, req, genValues[r.IntN(len(genValues))])
			}
			now := ruleTime.Add(time.Duration(r.IntN(2000)) * time.Second)
			team := m.match(entries, later, now)
			want := state.Matching([]state.Rule{local}, later, now)
			var got []state.Match
			for _, x := range team {
				x.Match.Rule.ID = 0
				got = append(got, x.Match)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("rule %+v, request %+v: team %+v, local %+v", local, later, got, want)
			}
			decided += len(got)
		}
	}
	if decided == 0 {
		t.Fatal("no generated request was decided: the test tests nothing")
	}
	if len(w) > 0 {
		t.Errorf("said: %q", w)
	}
	t.Logf("%d decided", decided)
}

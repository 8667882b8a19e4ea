package team

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/state"
)

// said collects a Memory's diagnostics.
type said []string

func (w *said) warn(s string) { *w = append(*w, s) }

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
	_, req := genRaw(t, r)
	return req
}

// genRaw is a request drawn from the pools, as sent and parsed.
func genRaw(t testing.TB, r *rand.Rand) (string, *decision.Request) {
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
	return string(b), parse(t, string(b))
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
// requests, the same way, generated ones from generated answers the form
// takes (every choice of scope, grants, workdir scope and lifetime): team
// memory is local memory's matching on the rule the same answer saves,
// derived from the request and the decision signed.
func TestTeamRuleMatchesAsLocalMemory(t *testing.T) {
	k := userKey(t)
	var w said
	m := Memory{Config: validConfig(PublicKey(k)), Warn: w.warn}
	r := rand.New(rand.NewPCG(23, 11))
	decided, expired := 0, 0
	for range 400 {
		raw, req := genRaw(t, r)
		f := form.New(req, form.Options{})
		a := f.Defaults()
		a.Choice = genChoices[r.IntN(len(genChoices))]
		for _, dim := range req.Dimensions {
			if r.IntN(2) == 0 {
				a.Scopes = map[string]string{dim.Name: dim.Scopes[r.IntN(len(dim.Scopes))].Match}
			}
		}
		if a.Choice == form.AllowAlways && r.IntN(2) == 0 {
			a.Grants = req.GrantNames()[:1+r.IntN(len(req.Grants))]
		}
		if req.Workdir != nil {
			a.WorkdirScope = []string{decision.WorkdirSelected, decision.WorkdirAll}[r.IntN(2)]
		}
		a.Lifetime = decision.Lifetimes[r.IntN(len(decision.Lifetimes))]
		answered := ruleTime.Add(time.Duration(r.IntN(100_000)) * time.Second)
		d, err := f.Decide(a, decision.FrontendTeam, answered)
		if err != nil {
			continue // an answer the form refuses saves nothing either way
		}
		id, value, err := SignRule(k, []byte(raw), d, answered)
		local, ok := state.RuleOf(req, d, answered)
		if (err == nil) != ok {
			t.Fatalf("SignRule %v, RuleOf %v", err, ok)
		}
		if !ok {
			continue
		}
		entries := derived([]RuleEntry{{Key: RuleKey(PublicKey(k), id), Value: value}})
		for range 10 {
			later := genRequest(t, r)
			if r.IntN(2) == 0 {
				later = withValue(t, req, genValues[r.IntN(len(genValues))])
			}
			now := answered.Add(time.Duration(r.IntN(60_000)-60) * time.Second)
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
			if len(got) == 0 && local.Expired(now) {
				expired++
			}
		}
	}
	if decided == 0 || expired == 0 {
		t.Fatalf("%d decided, %d expired: the test tests too little", decided, expired)
	}
	if len(w) > 0 {
		t.Errorf("said: %q", w)
	}
	t.Logf("%d decided, %d expired", decided, expired)
}

// The rule a cache holds beside a value only finds the rules that may
// match: a cache whose rule was widened after it was saved (kind any)
// decides nothing the value does not derive, and says so.
func TestCachedRuleMustBeDerived(t *testing.T) {
	k := userKey(t)
	var w said
	m := Memory{Config: validConfig(PublicKey(k)), Warn: w.warn}
	key, value := signRule(t, k, testRequest, form.Answer{Choice: form.AllowAlways})
	entries := derived([]RuleEntry{{Key: key, Value: value}})
	if got := m.match(entries, parse(t, testRequest), ruleTime); len(got) != 1 {
		t.Fatalf("the rule as saved: %+v %q", got, w)
	}
	wide := *entries[0].Rule
	wide.Dimensions = []state.Dimension{{Name: "path", Match: "", Kind: decision.KindAny}}
	entries[0].Rule = &wide
	other := parse(t, strings.Replace(testRequest, `"/p/a"`, `"/etc/passwd"`, 1))
	if got := m.match(entries, other, ruleTime); got != nil {
		t.Errorf("a widened cached rule decided: %+v", got)
	}
	if len(w) != 1 || !strings.Contains(w[0], "the cache's rule is not the one its value derives") {
		t.Errorf("said: %q", w)
	}
	if got := derived(entries); !reflect.DeepEqual(got[0].Rule.Dimensions[0].Kind, decision.KindExact) {
		t.Errorf("derived again: %+v", got[0].Rule)
	}
}

// A host that cannot fetch the rules keeps deciding by the cache, but
// its allow rules only for RulesAllowBound after the last fetch: a rule
// forgotten meanwhile must not allow for ever. Deny rules keep deciding.
// Generated ages of the cache, allow and deny rules alike.
func TestStaleCacheStopsAllowRules(t *testing.T) {
	kp := userKey(t)
	c := validConfig(PublicKey(kp))
	c.Program = "/bin/false" // the server cannot be reached
	req := parse(t, testRequest)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 200 {
		choice := genChoices[r.IntN(len(genChoices))]
		age := time.Duration(r.Int64N(int64(3 * RulesAllowBound)))
		switch i {
		case 0:
			choice, age = form.AllowAlways, RulesAllowBound
		case 1:
			choice, age = form.AllowAlways, RulesAllowBound+time.Second
		}
		key, value := signRule(t, kp, testRequest, form.Answer{Choice: choice})
		var w said
		m := Memory{Config: c, Dir: t.TempDir(), Warn: w.warn}
		if _, err := SaveRules(c, m.Dir, []RuleEntry{{Key: key, Value: value}}, ruleTime); err != nil {
			t.Fatal(err)
		}
		got, _ := m.Matching(req, ruleTime.Add(age))
		want := choice == form.DenyAlways || age <= RulesAllowBound
		if (len(got) == 1) != want {
			t.Fatalf("%s, cache %s old: %+v, want deciding %v; said %q", choice, age, got, want, w)
		}
		if !want && !strings.Contains(strings.Join(w, "\n"), "allow rules decide again after a fetch") {
			t.Errorf("%s, cache %s old: not said: %q", choice, age, w)
		}
	}
}

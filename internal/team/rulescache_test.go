package team

import (
	"fmt"
	"math/rand/v2"
	"reflect"
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

package policy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// gatedRules allow every execute_action tool by rule, so that only the
// verb policy and the spellings check stand between a call and an allow.
const gatedRules = `
[[rule]]
tool = "execute_action*"
[verbs]
always_require = ["delete"]
require = ["create"]
auto = ["read", "list"]
`

func verdictOf(t *testing.T, p *Policy, raw string) (Verdict, string) {
	t.Helper()
	v, winners := Combine(p.Opinions(req(t, raw)))
	return v, names(winners)
}

// The server reads "action" in whichever spelling it folds to: arguments
// giving the key in two spellings, or only in another one, are denied,
// whatever the verb policy would say of either.
func TestActionSpellings(t *testing.T) {
	p := parse(t, gatedRules)
	for _, tc := range []struct{ args, want string }{
		{`{"action":"delete_all_records","Action":"read"}`, "arguments.spellings:deny verbs.action:deny"},
		{`{"Action":"read","action":"delete_all_records"}`, "arguments.spellings:deny verbs.action:deny"},
		{`{"action":"read","ACTION":"delete_all_records"}`, "arguments.spellings:deny verbs.action:deny"},
		{`{"Action":"delete_all_records"}`, "verbs.action:deny"},
		{`{"action":"read","q":{"id":1,"ID":2}}`, "arguments.spellings:deny"},
		{`{"action":"read","pathſ":1,"paths":2}`, "arguments.spellings:deny"},  // ſ folds to s
		{`{"action":"read","\u212aey":1,"key":2}`, "arguments.spellings:deny"}, // the Kelvin sign folds to k
		{`{"action":"read"}`, "rules.toml#1:allow verbs.auto:allow"},
	} {
		raw := `{"action":"x","tool":"execute_action","arguments":` + tc.args + `}`
		if v, got := verdictOf(t, p, raw); got != tc.want {
			t.Errorf("%s: %v by %q, want %q", tc.args, v, got, tc.want)
		}
	}
}

// An execute_action verb is cut at "_" as a tool name is: a delete of
// many records is a delete.
func TestActionVerbCut(t *testing.T) {
	p := parse(t, gatedRules)
	for args, want := range map[string]string{
		`{"action":"delete_records"}`: "verbs.always_require:prompt",
		`{"action":"Create_user"}`:    "verbs.require:prompt",
		`{"action":"list_users"}`:     "rules.toml#1:allow verbs.auto:allow",
		`{"action":"get_user"}`:       "rules.toml#1:allow verbs.auto:allow",
	} {
		raw := `{"action":"x","tool":"execute_action","arguments":` + args + `}`
		if v, got := verdictOf(t, p, raw); got != want {
			t.Errorf("%s: %v by %q, want %q", args, v, got, want)
		}
	}
}

// spelling is one way of writing name that a case-folding reader takes
// for it: each rune any member of its simple folding orbit.
func spelling(rng *rand.Rand, name string) string {
	var b strings.Builder
	for _, r := range name {
		orbit := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		b.WriteRune(orbit[rng.IntN(len(orbit))])
	}
	return b.String()
}

// Over generated arguments that give "action" in one or more spellings,
// each naming a verb, no call is allowed when any spelling names a verb
// the policy gates, whichever spelling a server would read.
func TestActionSpellingsProperty(t *testing.T) {
	p := parse(t, gatedRules)
	rng := rand.New(rand.NewPCG(19, 6))
	actions := []string{"delete_all_records", "delete", "DELETE_x", "create_user", "Create", "read", "read_all", "list", "get_x", "approve"}
	gated := func(a string) bool {
		verb, _, _ := strings.Cut(strings.ToLower(a), "_")
		return verb == "delete" || verb == "create"
	}
	for range 3000 {
		members := map[string]string{}
		var keys []string
		for range 1 + rng.IntN(3) {
			k := "action"
			if rng.IntN(3) > 0 {
				k = spelling(rng, "action")
			}
			if _, dup := members[k]; dup {
				continue // the strict parser refuses a name given twice
			}
			members[k] = actions[rng.IntN(len(actions))]
			keys = append(keys, k)
		}
		if rng.IntN(2) == 0 {
			k := spelling(rng, "ids")
			members[k], keys = "1", append(keys, k)
		}
		var parts []string
		for _, k := range keys {
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(members[k])
			parts = append(parts, string(kb)+":"+string(vb))
		}
		args := "{" + strings.Join(parts, ",") + "}"
		raw := fmt.Sprintf(`{"action":"x","tool":"execute_action_x","arguments":%s}`, args)
		v, by := verdictOf(t, p, raw)
		anyGated := slices.ContainsFunc(keys, func(k string) bool { return strings.EqualFold(k, "action") && gated(members[k]) })
		if anyGated && v == Allow {
			t.Fatalf("%s: allowed by %s, although a spelling of action names a gated verb", args, by)
		}
	}
}

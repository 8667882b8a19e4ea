package policy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/askperm/askperm/decision"
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

// wordRules allow every call of server fs by rule, so that only the verb
// policy stands between a call and an allow.
const wordRules = `
[[rule]]
tool = "*"
server = "fs"
[verbs]
always_require = ["purge", "cancel"]
require = ["create", "submit"]
auto = ["read", "list", "search"]
`

// A name is read word by word, at every separator and case change: a
// word that asks anywhere in it asks, and every delete* word asks.
func TestVerbWords(t *testing.T) {
	p := parse(t, wordRules)
	g := parse(t, gatedRules)
	for _, tc := range []struct {
		p         *Policy
		tool, act string
		want      string
	}{
		{p, "deleteRecords", "", "verbs.always_require:prompt"},
		{p, "delete-records", "", "verbs.always_require:prompt"},
		{p, "DeleteRecords", "", "verbs.always_require:prompt"},
		{p, "read_and_delete_all", "", "verbs.always_require:prompt"},
		{p, "listThenPurge", "", "verbs.always_require:prompt"},
		{p, "search.create", "", "verbs.require:prompt"},
		{p, "read_records", "", "rules.toml#1:allow verbs.auto:allow"},
		{p, "readRecords", "", "rules.toml#1:allow verbs.auto:allow"},
		{p, "records_read", "", "rules.toml#1:allow"},
		{g, "execute_action", "deleteRecords", "verbs.always_require:prompt"},
		{g, "execute_action", "delete-records", "verbs.always_require:prompt"},
		{g, "execute_action", "read_and_delete_all", "verbs.always_require:prompt"},
		{g, "execute_action", "readThenCreate", "verbs.require:prompt"},
		{g, "execute_action", "ſearch", "rules.toml#1:allow"}, // read narrowly for an allow
		{g, "execute_action", "read", "rules.toml#1:allow verbs.auto:allow"},
	} {
		args := "{}"
		if tc.act != "" {
			args = fmt.Sprintf(`{"action":%q}`, tc.act)
		}
		raw := fmt.Sprintf(`{"action":"x","server":"fs","tool":%q,"arguments":%s}`, tc.tool, args)
		if v, got := verdictOf(t, tc.p, raw); got != tc.want {
			t.Errorf("%s %s: %v by %q, want %q", tc.tool, tc.act, v, got, tc.want)
		}
	}
	// A name given twice in the arguments is refused, whichever the
	// server would read.
	r := &decision.Request{Action: "x", Tool: "execute_action", Arguments: []byte(`{"action":"read","action":"delete_all"}`)}
	if v, by := Combine(g.Opinions(r)); v != Deny {
		t.Errorf("an action given twice: %v by %v", v, names(by))
	}
}

// Over generated names that mix separators and case, with a word the
// verb policy asks for anywhere among them, no call is auto-allowed, as
// a tool's name or as an execute_action's action.
func TestVerbWordsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 11))
	p := parse(t, wordRules)
	g := parse(t, gatedRules+"\n[[rule]]\ntool = \"*\"\nserver = \"fs\"\n")
	plain := []string{"read", "list", "search", "get", "records", "all", "user", "and", "then"}
	asking := map[*Policy][]string{p: {"purge", "cancel", "create", "submit", "delete", "deleted", "deleteall"}, g: {"delete", "create", "deletes"}}
	style := []func(string) string{strings.ToLower, strings.ToUpper, func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }}
	for range 4000 {
		pol := p
		if rng.IntN(2) == 0 {
			pol = g
		}
		var ws []string
		for range rng.IntN(4) {
			ws = append(ws, plain[rng.IntN(len(plain))])
		}
		gated := asking[pol][rng.IntN(len(asking[pol]))]
		ws = slices.Insert(ws, rng.IntN(len(ws)+1), gated)
		var b strings.Builder
		for i, w := range ws {
			sep := []string{"_", "-", ".", " ", ""}[rng.IntN(5)]
			s := style[rng.IntN(3)](w)
			if i > 0 {
				if sep == "" {
					s = style[2](w) // camelCase: a capital starts the word
				}
				b.WriteString(sep)
			}
			b.WriteString(s)
		}
		name := b.String()
		raw := fmt.Sprintf(`{"action":"x","server":"fs","tool":%q}`, name)
		if rng.IntN(2) == 0 {
			raw = fmt.Sprintf(`{"action":"x","server":"fs","tool":"execute_action","arguments":{"action":%q}}`, name)
		}
		ops := pol.Opinions(req(t, raw))
		if v, by := Combine(ops); v == Allow {
			t.Fatalf("%s: allowed by %s, although %q asks", raw, names(by), gated)
		}
	}
}

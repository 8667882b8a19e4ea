package form

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
)

// The rule sentence is what a person approves: each part of the answer
// shows in it, exactly.
func TestRuleSummary(t *testing.T) {
	f := New(writeReq(), Options{})
	base := f.Defaults()
	base.Choice = AllowAlways
	with := func(change func(a *Answer)) Answer {
		a := base
		a.Scopes = map[string]string{"path": "/p/", "host": "h"}
		change(&a)
		return a
	}
	for _, tc := range []struct {
		name string
		a    Answer
		want string
	}{
		{"defaults", with(func(*Answer) {}),
			`allow write_file, with path anything under "/p/", with host exactly "h", in workdir "/p", granting fs.write, fs.create, until removed`},
		{"narrowed", with(func(a *Answer) {
			a.Scopes["path"], a.WorkdirScope, a.Grants, a.Lifetime = "/p/a", decision.WorkdirAll, []string{"fs.create"}, "900"
		}), `allow write_file, with path exactly "/p/a", with host exactly "h", in any workdir, granting fs.create, for 15 minutes`},
		{"any value", with(func(a *Answer) { a.Scopes["path"], a.Lifetime = "*", "57600" }),
			`allow write_file, with path any value, with host exactly "h", in workdir "/p", granting fs.write, fs.create, for 16 hours`},
		{"deny grants nothing", with(func(a *Answer) { a.Choice = DenyAlways }),
			`deny write_file, with path anything under "/p/", with host exactly "h", in workdir "/p", until removed`},
	} {
		if got := f.RuleSummary(tc.a); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}

	// Without a tool, the rule names the action; request text is rendered.
	req := &decision.Request{Action: "exec\x1b[2J", Dimensions: []decision.Dimension{{Name: "cmd", Label: "Command\n", Value: "go test",
		Scopes: []decision.Scope{{Label: "w", Match: "go test", Kind: decision.KindWords}, {Label: "x", Match: "/bin/", Kind: decision.KindPrefix}, {Label: "g", Match: "a*", Kind: decision.KindGlob}}}}}
	g := New(req, Options{})
	for match, want := range map[string]string{
		"go test": `deny action exec\e[2J, with Command\n [cmd] commands starting with the words "go test" (without shell syntax), until removed`,
		"/bin/":   `deny action exec\e[2J, with Command\n [cmd] anything under "/bin/", until removed`,
		"a*":      `deny action exec\e[2J, with Command\n [cmd] anything matching "a*", until removed`,
	} {
		a := g.Defaults()
		a.Choice, a.Scopes["cmd"] = DenyAlways, match
		if got := g.RuleSummary(a); got != want {
			t.Errorf("%q:\n got %s\nwant %s", match, got, want)
		}
	}
}

// The note of who keeps the rule ends the sentence, for the answer being
// chosen.
func TestRuleSummaryNote(t *testing.T) {
	f := New(writeReq(), Options{RuleNote: func(a Answer) string { return "kept by " + string(a.Choice) }})
	a := f.Defaults()
	a.Choice = DenyAlways
	if got := f.RuleSummary(a); !strings.HasSuffix(got, ", until removed — kept by deny-always") {
		t.Errorf("got %s", got)
	}
}

func TestRuleQuestions(t *testing.T) {
	f := New(writeReq(), Options{})
	a := f.Defaults()
	a.Choice = AllowAlways
	var names []string
	for _, q := range f.RuleQuestions(a) {
		names = append(names, q.Name)
	}
	if want := []string{"Grants", "Scope", "Workdir", "Lifetime"}; !reflect.DeepEqual(names, want) {
		t.Errorf("allow always asks %v, want %v", names, want)
	}
	a.Choice = DenyAlways
	if qs := f.RuleQuestions(a); qs[0].Name != "Scope" {
		t.Errorf("deny always asks for grants: %v", qs[0].Name)
	}

	// Two asked dimensions are numbered; none and no workdir leave the
	// lifetime alone.
	two := writeReq()
	two.Dimensions[1].Scopes = append(two.Dimensions[1].Scopes, decision.Scope{Label: "any", Match: "*", Kind: decision.KindAny})
	if qs := New(two, Options{}).RuleQuestions(Answer{Choice: DenyAlways}); qs[0].Name != "Scope 1" || qs[1].Name != "Scope 2" ||
		!strings.Contains(qs[1].Title, "host") {
		t.Errorf("two scopes: %+v", qs[:2])
	}
	bare := New(&decision.Request{Action: "x"}, Options{})
	if qs := bare.RuleQuestions(Answer{Choice: AllowAlways}); len(qs) != 1 || qs[0].Name != "Lifetime" {
		t.Errorf("a bare request asks %+v", qs)
	}
}

// Chosen and Choose read and write the answer a question is about, and
// an answer is a value: choosing on a copy never changes the original.
func TestQuestionChooses(t *testing.T) {
	f := New(writeReq(), Options{})
	a := f.Defaults()
	a.Choice = AllowAlways
	qs := f.RuleQuestions(a)
	grants, scope, workdir, life := qs[0], qs[1], qs[2], qs[3]
	if !grants.Multi || grants.Item != "Grant" || scope.Multi {
		t.Errorf("kinds: %+v %+v", grants, scope)
	}
	for _, tc := range []struct {
		q       Question
		before  []string
		choose  []string
		after   []string
		changed func(Answer) any
	}{
		{grants, []string{"fs.write", "fs.create"}, []string{"fs.create", "fs.write"}, []string{"fs.write", "fs.create"}, func(a Answer) any { return a.Grants }},
		{grants, []string{"fs.write", "fs.create"}, []string{"fs.create"}, []string{"fs.create"}, func(a Answer) any { return a.Grants }},
		{scope, []string{"/p/"}, []string{"*"}, []string{"*"}, func(a Answer) any { return a.Scopes["path"] }},
		{workdir, []string{"selected"}, []string{"all"}, []string{"all"}, func(a Answer) any { return a.WorkdirScope }},
		{life, []string{"indefinite"}, []string{"900"}, []string{"900"}, func(a Answer) any { return a.Lifetime }},
	} {
		if got := tc.q.Chosen(a); !reflect.DeepEqual(got, tc.before) {
			t.Errorf("%s: chosen %v, want %v", tc.q.Name, got, tc.before)
		}
		b := a
		tc.q.Choose(&b, tc.choose)
		if got := tc.q.Chosen(b); !reflect.DeepEqual(got, tc.after) {
			t.Errorf("%s: after choosing %v: %v", tc.q.Name, tc.choose, got)
		}
		if tc.q.Name != "Grants" && reflect.DeepEqual(tc.changed(a), tc.changed(b)) {
			t.Errorf("%s: nothing changed", tc.q.Name)
		}
	}
	if !reflect.DeepEqual(a.Scopes, map[string]string{"path": "/p/", "host": "h"}) || len(a.Grants) != 2 {
		t.Errorf("the original answer changed: %+v", a)
	}
	if i := scope.Index("*"); i != 2 || scope.Index("/nowhere") != -1 {
		t.Errorf("Index: %d", i)
	}
	// Every option says what it covers, in the frontends' one wording.
	if got := workdir.Options[1].Label; got != "in any workdir (every configured workdir, including future ones)" {
		t.Errorf("workdir option: %q", got)
	}
	if got := scope.Options[1].Label; got != `dir: anything under "/p/"` {
		t.Errorf("scope option: %q", got)
	}
}

func TestFixedScopesInTheRuleMessage(t *testing.T) {
	f := New(writeReq(), Options{})
	want := `host: h: exactly "h" (the only scope offered)`
	if got := f.FixedScopes(); !reflect.DeepEqual(got, []string{want}) {
		t.Errorf("got %q", got)
	}
	a := f.Defaults()
	a.Choice = DenyAlways
	if msg := f.Message(StageRule, a); !strings.Contains(msg, want) {
		t.Errorf("the rule message does not state it:\n%s", msg)
	}
}

// impliesReq has a chain create → write → read, a grant outside it, and a
// cycle of two.
func impliesReq() *decision.Request {
	return &decision.Request{
		Tool: "fs", Action: "write",
		Grants: []decision.Grant{
			{Name: "fs.read", Description: "read files"},
			{Name: "fs.write", Description: "write files", Implies: []string{"fs.read"}},
			{Name: "fs.create", Implies: []string{"fs.write"}},
			{Name: "net", Description: "reach the network"},
			{Name: "a", Implies: []string{"b"}},
			{Name: "b", Implies: []string{"a"}},
		},
	}
}

// A grant says what it implies, transitively, wherever grants are shown:
// the grants question's options (with the description), the facts' Grant
// fields (the description is the agent's words, apart).
func TestGrantTextSaysWhatItImplies(t *testing.T) {
	f := New(impliesReq(), Options{})
	want := []string{
		"fs.read — read files",
		"fs.write — write files (implies fs.read)",
		"fs.create (implies fs.read, fs.write)",
		"net — reach the network",
		"a (implies b)",
		"b (implies a)",
	}
	var options, summary, names []string
	for _, o := range f.RuleQuestions(Answer{Choice: AllowAlways})[0].Options {
		options = append(options, o.Label)
	}
	for _, fl := range f.Facts() {
		if fl.Label == "Grant" {
			summary = append(summary, fl.Value)
		}
	}
	for _, g := range f.Req.Grants {
		names = append(names, f.GrantName(g))
	}
	if !reflect.DeepEqual(options, want) {
		t.Errorf("options:\n got %q\nwant %q", options, want)
	}
	if w := []string{"fs.read", "fs.write (implies fs.read)", "fs.create (implies fs.read, fs.write)", "net", "a (implies b)", "b (implies a)"}; !reflect.DeepEqual(names, w) || !reflect.DeepEqual(summary, w) {
		t.Errorf("names:\n got %q\nfacts %q\nwant %q", names, summary, w)
	}

	// The implied names are request text: rendered like any other.
	evil := New(&decision.Request{Action: "x", Grants: []decision.Grant{
		{Name: "ok", Implies: []string{"fs\x1b[2J\u202e"}}, {Name: "fs\x1b[2J\u202e"},
	}}, Options{})
	if got := evil.GrantText(evil.Req.Grants[0]); got != `ok (implies fs\e[2J\u{202e})` {
		t.Errorf("hostile implied name: %q", got)
	}
}

// The rule sentence names the grants chosen, then each grant they imply
// that was not chosen, with the chosen grants that imply it: exactly the
// grants the decision gives.
func TestRuleSummaryNamesImpliedGrants(t *testing.T) {
	f := New(impliesReq(), Options{})
	for _, tc := range []struct {
		grants   []string
		sentence string
		granted  []string
	}{
		{[]string{"fs.create"}, "granting fs.create, fs.read (implied by fs.create), fs.write (implied by fs.create)",
			[]string{"fs.read", "fs.write", "fs.create"}},
		{[]string{"fs.write", "fs.create"}, "granting fs.write, fs.create, fs.read (implied by fs.write, fs.create)",
			[]string{"fs.read", "fs.write", "fs.create"}},
		{[]string{"fs.read", "fs.write"}, "granting fs.read, fs.write",
			[]string{"fs.read", "fs.write"}},
		{[]string{"net"}, "granting net", []string{"net"}},
		{[]string{"a"}, "granting a, b (implied by a)", []string{"a", "b"}},
		{[]string{"b", "net"}, "granting net, b, a (implied by b)", []string{"net", "a", "b"}},
		{[]string{"a", "b"}, "granting a, b", []string{"a", "b"}},
	} {
		q := f.RuleQuestions(Answer{Choice: AllowAlways})[0]
		a := f.Defaults()
		a.Choice = AllowAlways
		q.Choose(&a, tc.grants)
		want := "allow fs, " + tc.sentence + ", until removed"
		if got := f.RuleSummary(a); got != want {
			t.Errorf("%q:\n got %s\nwant %s", tc.grants, got, want)
		}
		d, err := f.Decide(a, decision.FrontendTUI, time.Unix(0, 0))
		if err != nil || !reflect.DeepEqual(d.Grants, tc.granted) {
			t.Errorf("%q: decision grants %q, %v; want %q", tc.grants, d.Grants, err, tc.granted)
		}
	}
}

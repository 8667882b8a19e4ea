package form

import (
	"reflect"
	"strings"
	"testing"

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

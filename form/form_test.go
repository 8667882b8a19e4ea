package form

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
)

func ptr[T any](v T) *T { return &v }

// writeReq is a request with two grants, one dimension of three scopes, one
// of a sole scope, and a workdir.
func writeReq() *decision.Request {
	return &decision.Request{
		ID:     ptr("r1"),
		Tool:   "write_file",
		Action: "write",
		Dimensions: []decision.Dimension{
			{Name: "path", Value: "/p/a", Default: 1, Scopes: []decision.Scope{
				{Label: "file", Match: "/p/a", Kind: decision.KindExact},
				{Label: "dir", Match: "/p/", Kind: decision.KindPrefix},
				{Label: "any", Match: "*", Kind: decision.KindAny},
			}},
			{Name: "host", Value: "h", Scopes: []decision.Scope{{Label: "h", Match: "h"}}},
		},
		Workdir:   &decision.Workdir{Value: "/p"},
		Grants:    []decision.Grant{{Name: "fs.write"}, {Name: "fs.create"}},
		SessionID: "s1",
		SHA256:    strings.Repeat("ab", 32),
	}
}

func TestChoicesOffered(t *testing.T) {
	unscoped := writeReq()
	unscoped.Dimensions = append(unscoped.Dimensions, decision.Dimension{Name: "x", Value: "v"})
	noSession := writeReq()
	noSession.SessionID = ""
	for _, tc := range []struct {
		name string
		req  *decision.Request
		opts Options
		want []Choice
	}{
		{"persistent with session memory", writeReq(), Options{SessionMemory: true},
			[]Choice{AllowSession, AllowOnce, AllowAlways, DenyAlways, DenyOnce}},
		{"no session memory", writeReq(), Options{},
			[]Choice{AllowOnce, AllowAlways, DenyAlways, DenyOnce}},
		{"no session id", noSession, Options{SessionMemory: true},
			[]Choice{AllowOnce, AllowAlways, DenyAlways, DenyOnce}},
		{"persistent false", &decision.Request{Action: "a", SessionID: "s", Persistent: ptr(false)}, Options{SessionMemory: true},
			[]Choice{AllowOnce, DenyOnce}},
		{"a dimension without scopes", unscoped, Options{},
			[]Choice{AllowOnce, DenyOnce}},
		{"no dimensions at all", &decision.Request{Action: "a"}, Options{},
			[]Choice{AllowOnce, AllowAlways, DenyAlways, DenyOnce}},
	} {
		if got := New(tc.req, tc.opts).Choices(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	f := New(writeReq(), Options{})
	want := Answer{
		Choice:       DenyOnce,
		Grants:       []string{"fs.write", "fs.create"},
		Scopes:       map[string]string{"path": "/p/", "host": "h"},
		WorkdirScope: decision.WorkdirSelected,
		Lifetime:     decision.LifetimeIndefinite,
	}
	if got := f.Defaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := f.AskedDimensions(); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("asked dimensions %v", got)
	}
}

func TestCheckRejects(t *testing.T) {
	f := New(writeReq(), Options{})
	always := func(edit func(*Answer)) Answer {
		a := f.Defaults()
		a.Choice = AllowAlways
		edit(&a)
		return a
	}
	for _, tc := range []struct {
		name string
		a    Answer
		want string
	}{
		{"unknown choice", Answer{Choice: "allow-forever"}, `choice "allow-forever" is not offered`},
		{"not offered", Answer{Choice: AllowSession}, `choice "allow-session" is not offered`},
		{"long message", Answer{Choice: DenyOnce, Message: strings.Repeat("x", MaxMessageBytes+1)}, "longer than"},
		{"bad utf-8 message", Answer{Choice: DenyOnce, Message: "\xff"}, "UTF-8"},
		{"grant not requested", always(func(a *Answer) { a.Grants = []string{"net"} }), `"net" was not requested`},
		{"empty grants", always(func(a *Answer) { a.Grants = nil }), "at least one"},
		{"grant twice", always(func(a *Answer) { a.Grants = []string{"fs.write", "fs.write"} }), "given twice"},
		{"unknown dimension", always(func(a *Answer) { a.Scopes["url"] = "x" }), `no dimension "url"`},
		{"scope not offered", always(func(a *Answer) { a.Scopes["path"] = "/" }), `"/" is not a scope offered for dimension "path" (offered: "/p/a", "/p/", "*")`},
		{"sole scope changed", always(func(a *Answer) { a.Scopes["host"] = "other" }), `"other" is not a scope offered`},
		{"asked scope missing", always(func(a *Answer) { delete(a.Scopes, "path") }), `no scope chosen for dimension "path"`},
		{"bad workdir scope", always(func(a *Answer) { a.WorkdirScope = "some" }), "workdir_scope"},
		{"bad lifetime", always(func(a *Answer) { a.Lifetime = "60" }), `lifetime: "60" is not a lifetime (one of: "indefinite", "900", "57600")`},
		{"numeric lifetime spelled differently", always(func(a *Answer) { a.Lifetime = "0900" }), "lifetime"},
	} {
		_, err := f.Decide(tc.a, "answers", time.Unix(0, 0))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	noWorkdir := writeReq()
	noWorkdir.Workdir = nil
	a := New(noWorkdir, Options{}).Defaults()
	a.Choice, a.WorkdirScope = DenyAlways, decision.WorkdirAll
	if _, err := New(noWorkdir, Options{}).Decide(a, "answers", time.Now()); err == nil {
		t.Error("workdir_scope accepted for a request without workdir")
	}
}

func TestDecide(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	f := New(writeReq(), Options{SessionMemory: true})
	base := decision.Decision{Version: 1, ID: ptr("r1"), Persist: "once", Cause: "user", Frontend: "tui", RequestSHA256: strings.Repeat("ab", 32)}
	with := func(edit func(*decision.Decision)) decision.Decision {
		d := base
		edit(&d)
		return d
	}
	for _, tc := range []struct {
		name string
		edit func(*Answer)
		want decision.Decision
	}{
		{"allow once grants all and drops the message",
			func(a *Answer) { a.Choice, a.Message, a.Grants = AllowOnce, "ignored", []string{"fs.write"} },
			with(func(d *decision.Decision) { d.Decision, d.Grants = "allow", []string{"fs.write", "fs.create"} })},
		{"deny once keeps the message",
			func(a *Answer) { a.Message = "not now" },
			with(func(d *decision.Decision) { d.Decision, d.Message = "deny", "not now" })},
		{"allow session",
			func(a *Answer) { a.Choice = AllowSession },
			with(func(d *decision.Decision) {
				d.Decision, d.Persist, d.Grants = "allow", "session", []string{"fs.write", "fs.create"}
			})},
		{"allow always narrowed, all workdirs, 15 minutes",
			func(a *Answer) {
				a.Choice, a.Grants, a.Scopes["path"], a.WorkdirScope, a.Lifetime = AllowAlways, []string{"fs.create"}, "*", decision.WorkdirAll, "900"
			},
			with(func(d *decision.Decision) {
				d.Decision, d.Persist, d.Grants = "allow", "always", []string{"fs.create"}
				d.Rule = &decision.Rule{Scopes: map[string]string{"path": "*", "host": "h"}, WorkdirScope: "all", Lifetime: "900", Expires: 1_800_000_900}
			})},
		{"deny always with defaults",
			func(a *Answer) { a.Choice, a.Message = DenyAlways, "never" },
			with(func(d *decision.Decision) {
				d.Decision, d.Persist, d.Message = "deny", "always", "never"
				d.Rule = &decision.Rule{Scopes: map[string]string{"path": "/p/", "host": "h"}, WorkdirScope: "selected", Lifetime: "indefinite"}
			})},
	} {
		a := f.Defaults()
		tc.edit(&a)
		got, err := f.Decide(a, "tui", now)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v %+v\nwant %+v %+v", tc.name, got, got.Rule, tc.want, tc.want.Rule)
		}
	}
}

func TestDecideRuleWithoutDimensionsHasEmptyScopes(t *testing.T) {
	f := New(&decision.Request{Action: "a"}, Options{})
	a := f.Defaults()
	a.Choice = AllowAlways
	d, err := f.Decide(a, "answers", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if d.Rule == nil || d.Rule.Scopes == nil || len(d.Rule.Scopes) != 0 || d.Grants != nil {
		t.Errorf("got %+v", d)
	}
	if got := string(decision.Encode(d)); !strings.Contains(got, `"scopes":{}`) {
		t.Errorf("encoded %s", got)
	}
}

// script is a Stager that replays steps and records what it was shown.
type script struct {
	steps []func(*Answer) (back bool, err error)
	seen  []Answer
}

func (s *script) next(a *Answer) (bool, error) {
	s.seen = append(s.seen, *a)
	if len(s.steps) == 0 {
		return false, errors.New("unexpected prompt")
	}
	step := s.steps[0]
	s.steps = s.steps[1:]
	return step(a)
}

func (s *script) AskChoice(_ context.Context, _ *Form, a *Answer) error {
	_, err := s.next(a)
	return err
}

func (s *script) AskRule(_ context.Context, _ *Form, a *Answer) (bool, error) { return s.next(a) }

func TestWalkBackKeepsWhatWasTyped(t *testing.T) {
	f := New(writeReq(), Options{})
	s := &script{steps: []func(*Answer) (bool, error){
		func(a *Answer) (bool, error) { a.Choice, a.Message = DenyAlways, "typed"; return false, nil },
		func(a *Answer) (bool, error) { a.Lifetime = "900"; return true, nil }, // Back
		func(a *Answer) (bool, error) { a.Choice = AllowAlways; return false, nil },
		func(a *Answer) (bool, error) { return false, nil }, // Save
	}}
	a, err := Walk(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Choice != AllowAlways || a.Lifetime != "900" || a.Message != "typed" {
		t.Errorf("got %+v", a)
	}
	if s.seen[2].Choice != DenyAlways || s.seen[2].Message != "typed" {
		t.Errorf("stage choice after Back was shown %+v", s.seen[2])
	}
}

func TestWalkOnceChoiceSkipsRuleStage(t *testing.T) {
	s := &script{steps: []func(*Answer) (bool, error){
		func(a *Answer) (bool, error) { a.Choice = AllowOnce; return false, nil },
	}}
	a, err := Walk(context.Background(), New(writeReq(), Options{}), s)
	if err != nil || a.Choice != AllowOnce {
		t.Fatalf("got %+v, %v", a, err)
	}
}

func TestWalkErrorsNeverYieldAnAnswer(t *testing.T) {
	boom := errors.New("boom")
	for name, steps := range map[string][]func(*Answer) (bool, error){
		"stage choice fails": {func(a *Answer) (bool, error) { a.Choice = AllowOnce; return false, boom }},
		"stage rule fails": {
			func(a *Answer) (bool, error) { a.Choice = AllowAlways; return false, nil },
			func(a *Answer) (bool, error) { return false, boom },
		},
		"invalid choice": {func(a *Answer) (bool, error) { a.Choice = "allow"; return false, nil }},
		"invalid rule": {
			func(a *Answer) (bool, error) { a.Choice = AllowAlways; return false, nil },
			func(a *Answer) (bool, error) { a.Grants = nil; return false, nil },
		},
	} {
		a, err := Walk(context.Background(), New(writeReq(), Options{}), &script{steps: steps})
		if err == nil || a.Choice != "" {
			t.Errorf("%s: got %+v, %v", name, a, err)
		}
	}
}

func TestWalkRuleStageMayOnlySettleOnDenyOnce(t *testing.T) {
	s := &script{steps: []func(*Answer) (bool, error){
		func(a *Answer) (bool, error) { a.Choice, a.Message = AllowAlways, "kept"; return false, nil },
		func(a *Answer) (bool, error) { a.Choice = DenyOnce; return false, nil },
	}}
	a, err := Walk(context.Background(), New(writeReq(), Options{}), s)
	if err != nil || a.Choice != DenyOnce || a.Message != "kept" {
		t.Fatalf("got %+v, %v", a, err)
	}
	s = &script{steps: []func(*Answer) (bool, error){
		func(a *Answer) (bool, error) { a.Choice = DenyAlways; return false, nil },
		func(a *Answer) (bool, error) { a.Choice = AllowOnce; return false, nil },
	}}
	if a, err := Walk(context.Background(), New(writeReq(), Options{}), s); err == nil || a.Choice != "" {
		t.Fatalf("a rule stage turned into allow once: %+v, %v", a, err)
	}
}

// Decide completes any allow-always answer, however it was given (a canned
// answer sets Grants directly, in any order): the grants kept and every
// grant they imply, in request order. One-time and session allows grant
// everything requested, which holds what any grant implies.
func TestDecideAddsImpliedGrants(t *testing.T) {
	req := impliesReq()
	req.SessionID = "s"
	f := New(req, Options{SessionMemory: true})
	all := f.Req.GrantNames()
	for _, tc := range []struct {
		choice Choice
		grants []string
		want   []string
	}{
		{AllowAlways, []string{"fs.create"}, []string{"fs.read", "fs.write", "fs.create"}},
		{AllowAlways, []string{"fs.create", "fs.read"}, []string{"fs.read", "fs.write", "fs.create"}},
		{AllowAlways, []string{"net", "fs.write"}, []string{"fs.read", "fs.write", "net"}},
		{AllowAlways, []string{"fs.read"}, []string{"fs.read"}},
		{AllowAlways, []string{"b"}, []string{"a", "b"}},
		{AllowOnce, []string{"net"}, all},
		{AllowSession, []string{"net"}, all},
	} {
		a := f.Defaults()
		a.Choice, a.Grants = tc.choice, tc.grants
		d, err := f.Decide(a, decision.FrontendAnswers, time.Unix(0, 0))
		if err != nil || !reflect.DeepEqual(d.Grants, tc.want) {
			t.Errorf("%s %q: got %q, %v; want %q", tc.choice, tc.grants, d.Grants, err, tc.want)
		}
	}
}

// On random implies graphs (cycles included) and random choices, the
// decision grants exactly the chosen grants and what they imply: a set
// that holds every grant any of its grants implies.
func TestDecideGrantsAreClosed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		n := 1 + rng.IntN(12)
		req := &decision.Request{Action: "x"}
		for i := range n {
			g := decision.Grant{Name: fmt.Sprintf("g%d", i)}
			for j := range n {
				if j != i && rng.IntN(4) == 0 {
					g.Implies = append(g.Implies, fmt.Sprintf("g%d", j))
				}
			}
			req.Grants = append(req.Grants, g)
		}
		f := New(req, Options{})
		a := f.Defaults()
		a.Choice = AllowAlways
		var chosen []string
		for _, g := range req.Grants {
			if rng.IntN(3) == 0 {
				chosen = append(chosen, g.Name)
			}
		}
		if len(chosen) == 0 {
			chosen = []string{req.Grants[0].Name}
		}
		f.RuleQuestions(a)[0].Choose(&a, chosen)
		d, err := f.Decide(a, decision.FrontendTUI, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range req.Grants {
			granted := slices.Contains(d.Grants, g.Name)
			if slices.Contains(chosen, g.Name) && !granted {
				t.Fatalf("%s was chosen but not granted: %q of %+v", g.Name, d.Grants, req.Grants)
			}
			for _, n := range g.Implies {
				if granted && !slices.Contains(d.Grants, n) {
					t.Fatalf("%s is granted but %s, which it implies, is not: %q of %+v", g.Name, n, d.Grants, req.Grants)
				}
			}
		}
		reached := map[string]bool{}
		for queue := slices.Clone(chosen); len(queue) > 0; queue = queue[1:] {
			if !reached[queue[0]] {
				reached[queue[0]] = true
				queue = append(queue, req.Grants[slices.IndexFunc(req.Grants, func(g decision.Grant) bool { return g.Name == queue[0] })].Implies...)
			}
		}
		sentence := f.RuleSummary(a)
		for _, name := range d.Grants {
			if !reached[name] {
				t.Fatalf("%s granted, neither chosen nor implied: %q of %+v", name, d.Grants, req.Grants)
			}
			if !strings.Contains(sentence, " "+name+",") && !strings.Contains(sentence, " "+name+" (implied by") {
				t.Fatalf("the rule sentence does not name %s: %s", name, sentence)
			}
		}
	}
}

func TestQuotedList(t *testing.T) {
	for _, c := range []struct {
		items []string
		max   int
		want  string
	}{
		{nil, 5, ""},
		{[]string{"a", "b\n"}, 5, `"a", "b\n"`},
		{[]string{"a", "b", "c", "d"}, 2, `"a", "b", and 2 more`},
	} {
		if got := quotedList(c.items, c.max); got != c.want {
			t.Errorf("quotedList(%q, %d) = %s, want %s", c.items, c.max, got, c.want)
		}
	}
}

package form_test

import (
	"context"
	"fmt"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

func request() *decision.Request {
	req, err := decision.Parse([]byte(`{"id":"7","tool":"write_file","action":"write",
		"dimensions":[{"name":"path","value":"/home/a/p/notes.md","scopes":[
			{"label":"this file","match":"/home/a/p/notes.md"},
			{"label":"the project","match":"/home/a/p/","kind":"prefix"}]}]}`))
	if err != nil {
		panic(err)
	}
	return req
}

func ExampleForm_Decide() {
	f := form.New(request(), form.Options{})
	fmt.Println(f.Choices())
	a := f.Defaults() // deny once, the default scopes, an indefinite lifetime
	a.Choice = form.AllowAlways
	a.Scopes["path"] = "/home/a/p/"
	a.Lifetime = "900"
	fmt.Println(f.RuleSummary(a))
	d, err := f.Decide(a, decision.FrontendTUI, time.Unix(1_700_000_000, 0))
	fmt.Println(d.Decision, d.Persist, d.Rule.Scopes["path"], d.Rule.Expires, err)
	// Output:
	// [allow-once allow-always deny-always deny-once]
	// allow write_file, with path anything under "/home/a/p/", for 15 minutes
	// allow always /home/a/p/ 1700000900 <nil>
}

func ExampleForm_RuleQuestions() {
	f := form.New(request(), form.Options{})
	a := f.Defaults()
	a.Choice = form.DenyAlways
	for _, q := range f.RuleQuestions(a) {
		fmt.Printf("%s: %s\n", q.Name, q.Title)
		for _, o := range q.Options {
			fmt.Printf("  %q %s\n", o.Value, o.Label)
		}
	}
	// Output:
	// Scope: Which path the rule covers
	//   "/home/a/p/notes.md" this file: exactly "/home/a/p/notes.md"
	//   "/home/a/p/" the project: anything under "/home/a/p/"
	// Lifetime: Lifetime
	//   "indefinite" until removed
	//   "900" for 15 minutes
	//   "57600" for 16 hours
}

// scripted answers each stage from a list, as a frontend would.
type scripted struct{ rule []bool }

func (s *scripted) AskChoice(_ context.Context, _ *form.Form, a *form.Answer) error {
	if len(s.rule) == 2 {
		a.Choice = form.AllowAlways
	} else {
		a.Choice, a.Message = form.DenyOnce, "not this one"
	}
	return nil
}

func (s *scripted) AskRule(_ context.Context, _ *form.Form, _ *form.Answer) (bool, error) {
	back := s.rule[0]
	s.rule = s.rule[1:]
	return back, nil
}

func ExampleWalk() {
	f := form.New(request(), form.Options{})
	// Allow always, then Back in the rule stage, then deny once.
	a, err := form.Walk(context.Background(), f, &scripted{rule: []bool{true, false}})
	fmt.Println(a.Choice, a.Message, err)
	// Output:
	// deny-once not this one <nil>
}

func ExampleLine() {
	fmt.Println(form.Line("rm -rf /\u202e\x1b[2J"))
	// Output:
	// rm -rf /\u{202e}\e[2J
}

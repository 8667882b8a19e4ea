package state

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// A remembered scope over a command line (syntax shell) is applied to
// each simple command (protocol section 10): an allow that covers all
// covers the line; one that covers some says which (Commands); exact is
// the whole line; a deny reaches the line through any command.
func TestRememberedScopesPerCommand(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rule := func(verdict, match string, kind decision.ScopeKind) Rule {
		return Rule{Decision: verdict, Tool: "Bash", Action: "exec", Dimensions: []Dimension{{Name: "command", Match: match, Kind: kind}}}
	}
	line := func(v string) *decision.Request {
		return &decision.Request{Tool: "Bash", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: v, Syntax: decision.SyntaxShell}}}
	}
	for _, tc := range []struct {
		rule  Rule
		line  string
		whole bool
		part  []bool // nil: no part
	}{
		{rule(decision.Allow, "go test", decision.KindWords), "go test ./a && go test ./b", true, nil},
		{rule(decision.Allow, "go test *", decision.KindGlob), "go test ./a; git status", false, []bool{true, false}},
		{rule(decision.Allow, "{go test ./a,git status}", decision.KindGlob), "go test ./a; git status", true, nil},
		{rule(decision.Allow, "{go test ./a,git status}", decision.KindGlob), "go test ./b; git status", false, []bool{false, true}},
		{rule(decision.Allow, "go test", decision.KindWords), "go test $(curl x)", false, nil},
		{rule(decision.Allow, "go test ./a; git status", decision.KindExact), "go test ./a; git status", true, nil},
		{rule(decision.Allow, "go test ./a", decision.KindExact), "go test ./a; git status", false, nil},
		{rule(decision.Deny, "rm -rf", decision.KindWords), "git status; rm -rf ~", true, nil},
	} {
		if got := tc.rule.Covers(line(tc.line), now) == shell.Covered; got != tc.whole {
			t.Errorf("%+v over %q: covers %v, want %v", tc.rule.Dimensions, tc.line, got, tc.whole)
		}
		_, part := tc.rule.covers(line(tc.line), now, &readings{req: line(tc.line)})
		var got []bool
		if part != nil {
			got = part.Covered
		}
		if !reflect.DeepEqual(got, tc.part) {
			t.Errorf("%+v over %q: part %v, want %v", tc.rule.Dimensions, tc.line, got, tc.part)
		}
	}
}

// Covering lists a remembered allow of some commands with which, and a
// deny with the commands it reaches.
func TestCoveringSaysWhichCommands(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for _, r := range []Rule{
		{Decision: decision.Allow, Tool: "Bash", Action: "exec", Dimensions: []Dimension{{Name: "command", Match: "git status", Kind: decision.KindGlob}}},
		{Decision: decision.Deny, Tool: "Bash", Action: "exec", Dimensions: []Dimension{{Name: "command", Match: "rm -rf", Kind: decision.KindWords}}},
	} {
		if _, err := s.Remember(r); err != nil {
			t.Fatal(err)
		}
	}
	req := &decision.Request{Tool: "Bash", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "git status; rm -rf ~; ls", Syntax: decision.SyntaxShell}}}
	ms, err := s.Covering(req, now)
	if err != nil || len(ms) != 2 {
		t.Fatalf("%v %+v", err, ms)
	}
	if !reflect.DeepEqual(ms[0].Commands[0].Covered, []bool{true, false, false}) || !reflect.DeepEqual(ms[1].Commands[0].Covered, []bool{false, true, false}) {
		t.Errorf("got %+v and %+v", ms[0].Commands, ms[1].Commands)
	}
}

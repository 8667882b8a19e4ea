package state

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
)

// commandRule is a remembered rule with a words scope on a command.
func commandRule(verdict, words string) Rule {
	return Rule{Decision: verdict, Tool: "Bash", Action: "exec",
		Dimensions: []Dimension{{Name: "command", Match: words, Kind: decision.KindWords}}}
}

func commandRequest(cmd string) *decision.Request {
	return &decision.Request{Tool: "Bash", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: cmd}}}
}

// A remembered words deny of rm -rf covers rm -rf whatever shell syntax
// follows or surrounds it; a words allow stays as narrow as before.
func TestWordsDenyErrsWide(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	deny, allow := commandRule(decision.Deny, "rm -rf"), commandRule(decision.Allow, "rm -rf")
	for _, cmd := range []string{"rm -rf ~", "rm -rf *", "rm -rf ~/.ssh", "cd / && 'rm' -rf \"$HOME\"", "echo $(rm -rf ~)", "rm -rf 'x"} {
		if !deny.Covers(commandRequest(cmd), now) {
			t.Errorf("the deny does not cover %q", cmd)
		}
		if allow.Covers(commandRequest(cmd), now) {
			t.Errorf("the allow covers %q", cmd)
		}
	}
	for _, cmd := range []string{"rm -r ~", "echo rm -rf", "ls; rmdir -rf x"} {
		if deny.Covers(commandRequest(cmd), now) {
			t.Errorf("the deny covers %q", cmd)
		}
	}
	if !allow.Covers(commandRequest("rm -rf build"), now) {
		t.Error("the allow does not cover plain words")
	}
}

// One path form: a remembered exact deny of …/sub/.env covers its other
// spellings; a path resolving out of an allowed prefix is not allowed,
// and a deny of where it resolves to covers it.
func TestRulePathForms(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rule := func(verdict, match string, kind decision.ScopeKind) Rule {
		return Rule{Decision: verdict, Tool: "Read", Action: "read", Dimensions: []Dimension{{Name: "path", Match: match, Kind: kind}}}
	}
	req := func(value, resolved string) *decision.Request {
		return &decision.Request{Tool: "Read", Action: "read", Dimensions: []decision.Dimension{{Name: "path", Value: value, Resolved: resolved}}}
	}
	deny := rule(decision.Deny, "/p/sub/.env", decision.KindExact)
	for _, v := range []string{"/p/sub/./.env", "/p//sub/.env", "/p/sub/x/../.env"} {
		if !deny.Covers(req(v, ""), now) {
			t.Errorf("the exact deny misses %q", v)
		}
	}
	escaped := req("/p/lnk/.bashrc", "/home/a/.bashrc")
	if rule(decision.Allow, "/p/", decision.KindPrefix).Covers(escaped, now) {
		t.Error("an allow of /p/ covers a path resolving outside")
	}
	if !rule(decision.Deny, "/home/a/.bashrc", decision.KindExact).Covers(escaped, now) {
		t.Error("a deny of the resolved path misses it")
	}
}

// A rule remembers who gave it; one stored without reads as unknown.
func TestRuleOrigin(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	req, d := alwaysDecision(t, decision.Allow, "/home/a", decision.WorkdirSelected, "fs.write", "fs.create")
	d.Frontend = decision.FrontendAnswers
	r, _ := RuleOf(req, d, now)
	if r.Origin != "answers" {
		t.Errorf("origin %q", r.Origin)
	}
	s := open(t, t.TempDir())
	r.Origin = ""
	if _, err := s.Remember(r); err != nil {
		t.Fatal(err)
	}
	if rules, err := s.Rules(now); err != nil || len(rules) != 1 || rules[0].Origin != OriginUnknown {
		t.Errorf("%+v, %v", rules, err)
	}
}

// Grants from memory are never wider: whatever grants a later request
// asks (more, other, implying more), a remembered allow covers it only
// when each is one the person gave, so the allow from memory (which
// grants the request's grants) carries none the rule lacks.
func TestRememberedAllowNeverWidensGrants(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rng := rand.New(rand.NewPCG(3, 19))
	names := []string{"fs.read", "fs.write", "net.all", "exec.any"}
	grants := func() []decision.Grant {
		var gs []decision.Grant
		for _, n := range names {
			if rng.IntN(2) == 0 {
				gs = append(gs, decision.Grant{Name: n})
			}
		}
		for i := range gs {
			if j := rng.IntN(len(gs) + 1); j < len(gs) && j != i {
				gs[i].Implies = []string{gs[j].Name}
			}
		}
		return gs
	}
	for range 3000 {
		req := request(t, pathRequest)
		req.Grants = grants()
		d := decision.Denied(req, decision.CauseUser, decision.FrontendTUI)
		d.Decision, d.Persist = decision.Allow, decision.PersistAlways
		var chosen []string
		for _, g := range req.GrantNames() {
			if rng.IntN(2) == 0 {
				chosen = append(chosen, g)
			}
		}
		d.Grants = req.WithImplied(chosen)
		d.Rule = &decision.Rule{Scopes: map[string]string{"path": "/home/a"}, WorkdirScope: decision.WorkdirSelected}
		r, ok := RuleOf(req, d, now)
		if !ok {
			t.Fatal("RuleOf")
		}
		later := request(t, pathRequest)
		later.Grants = grants()
		if !r.Covers(later, now) {
			continue
		}
		for _, g := range later.GrantNames() {
			if !slices.Contains(r.Grants, g) {
				t.Fatalf("rule granting %v covers a request for %v", r.Grants, later.GrantNames())
			}
		}
	}
}

// A remembered glob or exact deny covers a line holding the command.
func TestGlobAndExactDenyReadCommands(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	glob, exact := commandRule(decision.Deny, "rm -rf *"), commandRule(decision.Deny, "rm -rf build")
	glob.Dimensions[0].Kind, exact.Dimensions[0].Kind = decision.KindGlob, decision.KindExact
	for _, cmd := range []string{"cd / && rm -rf build", "(rm -rf 'build') > /dev/null"} {
		if !glob.Covers(commandRequest(cmd), now) || !exact.Covers(commandRequest(cmd), now) {
			t.Errorf("%q: not denied", cmd)
		}
	}
	if !glob.Covers(commandRequest("cd / && rm -rf ~"), now) {
		t.Error("the glob deny misses rm -rf ~ after cd")
	}
}

package state

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/shell"
)

// covered reports whether r decides req at now for certain (not Maybe).
func covered(r Rule, req *decision.Request, now time.Time) bool {
	return r.Covers(req, now) == shell.Covered
}

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
		if !covered(deny, commandRequest(cmd), now) {
			t.Errorf("the deny does not cover %q", cmd)
		}
		if covered(allow, commandRequest(cmd), now) {
			t.Errorf("the allow covers %q", cmd)
		}
	}
	for _, cmd := range []string{"rm -r ~", "ls; rmdir -rf x", `git commit -m "rm -rf stuff"`} {
		if covered(deny, commandRequest(cmd), now) {
			t.Errorf("the deny covers %q", cmd)
		}
	}
	if !covered(allow, commandRequest("rm -rf build"), now) {
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
		if !covered(deny, req(v, ""), now) {
			t.Errorf("the exact deny misses %q", v)
		}
	}
	escaped := req("/p/lnk/.bashrc", "/home/a/.bashrc")
	if covered(rule(decision.Allow, "/p/", decision.KindPrefix), escaped, now) {
		t.Error("an allow of /p/ covers a path resolving outside")
	}
	if !covered(rule(decision.Deny, "/home/a/.bashrc", decision.KindExact), escaped, now) {
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
		if !covered(r, later, now) {
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
		if !covered(glob, commandRequest(cmd), now) || !covered(exact, commandRequest(cmd), now) {
			t.Errorf("%q: not denied", cmd)
		}
	}
	if !covered(glob, commandRequest("cd / && rm -rf ~"), now) {
		t.Error("the glob deny misses rm -rf ~ after cd")
	}
}

// Finding 3: a remembered words deny of rm -rf is not missed through
// wrappers, quoting, brace expansion, -c strings, eval, here-strings and
// aliases; a command whose name is computed asks (Maybe), never allows.
func TestWordsDenyThroughShellSyntax(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	deny := commandRule(decision.Deny, "rm -rf")
	for _, cmd := range []string{
		"$'rm' -rf ~", "rm${IFS}-rf ~", "rm -$'rf' ~", "{rm,-rf,~}",
		"exec rm -rf ~", "builtin rm -rf ~", "nice rm -rf ~", "timeout 5 rm -rf ~", "sudo rm -rf ~", "env rm -rf ~", "xargs rm -rf",
		"eval 'rm -rf ~'", "bash <<< 'rm -rf ~'", "alias x='rm -rf'; x ~", "=rm -rf ~", "/bin/rm -rf ~",
	} {
		if got := deny.Covers(commandRequest(cmd), now); got != shell.Covered {
			t.Errorf("%q: %v, want covered", cmd, got)
		}
	}
	for _, cmd := range []string{"$(echo rm) -rf ~", "echo 'rm -rf ~' | sh"} {
		if got := deny.Covers(commandRequest(cmd), now); got != shell.Maybe {
			t.Errorf("%q: %v, want maybe", cmd, got)
		}
	}
	if got := commandRule(decision.Allow, "rm -rf").Covers(commandRequest("$(echo rm) -rf ~"), now); got != shell.Not {
		t.Errorf("an allow covers a computed command: %v", got)
	}
	// Maybe only where the value is a command line.
	path := Rule{Decision: decision.Deny, Tool: "Read", Action: "read", Dimensions: []Dimension{{Name: "path", Match: "/etc/*", Kind: decision.KindGlob}}}
	req := &decision.Request{Tool: "Read", Action: "read", Dimensions: []decision.Dimension{{Name: "path", Value: "$(x)/y"}}}
	if got := path.Covers(req, now); got != shell.Not {
		t.Errorf("a path deny: %v", got)
	}
}

// A remembered glob deny (rm -rf *) covers the same forms through its
// plain leading words.
func TestGlobDenyThroughShellSyntax(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	glob := commandRule(decision.Deny, "rm -rf *")
	glob.Dimensions[0].Kind = decision.KindGlob
	for _, cmd := range []string{"sudo rm -rf ~", "rm${IFS}-rf ~", "bash -c 'rm -rf ~'", "{rm,-rf,~}", "command rm -rf ~", "/bin/rm -rf /"} {
		if !covered(glob, commandRequest(cmd), now) {
			t.Errorf("%q: not denied", cmd)
		}
	}
}

// Covering says which deny only may cover a request (a computed command):
// that one asks.
func TestCoveringMarksMaybe(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := open(t, t.TempDir())
	if _, err := s.Remember(commandRule(decision.Deny, "rm -rf")); err != nil {
		t.Fatal(err)
	}
	for cmd, maybe := range map[string]bool{"sudo rm -rf ~": false, "$(echo rm) -rf ~": true} {
		got, err := s.Covering(commandRequest(cmd), now)
		if err != nil || len(got) != 1 || got[0].Maybe != maybe {
			t.Errorf("%q: %+v, %v; want one rule, maybe %v", cmd, got, err, maybe)
		}
	}
	if got, err := s.Covering(commandRequest("ls"), now); err != nil || len(got) != 0 {
		t.Errorf("ls: %+v, %v", got, err)
	}
}

// A remembered glob allow matches a command word by word (protocol
// section 10): its `*` within one word, a lone last `*` across the rest;
// a word holding a blank is never several. A remembered glob deny still
// reads the words joined.
func TestGlobAllowWordByWord(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		glob, line  string
		allow, deny bool
	}{
		{"rm -rf build/*", "rm -rf build/x ..", false, true},
		{"rm -rf build/*", "rm -rf build/x", true, true},
		{"cat src/*", "cat src/a .env", false, true},
		{"git status *", "git status -s", true, true},
		{"rm -rf status", `"rm -rf" status`, false, false},
		{"'rm -rf' status", `"rm -rf" status`, true, true},
	} {
		req := commandRequest(tc.line)
		req.Dimensions[0].Syntax = decision.SyntaxShell
		for _, verdict := range []string{decision.Allow, decision.Deny} {
			r := commandRule(verdict, tc.glob)
			r.Dimensions[0].Kind = decision.KindGlob
			want := tc.allow
			if verdict == decision.Deny {
				want = tc.deny
			}
			if got := covered(r, req, now); got != want {
				t.Errorf("%s %q on %q: %v, want %v", verdict, tc.glob, tc.line, got, want)
			}
		}
	}
}

// A remembered glob allow, the rules' matcher (match) and the reading
// describe offers scopes by (shell.Line.Allowed) judge each command by
// one routine (shell.ScopeCovers): on generated lines and globs they
// agree.
func TestGlobAllowOneRoutine(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	words := []string{"rm", "-rf", "build/x", "/", "..", "src/a", ".env", "git", "status", "'rm -rf'", `"a b"`, "$'a\\tb'", "x*y"}
	globs := []string{"rm -rf build/*", "cat src/*", "git *", "git status *", "rm *", "*", "{git status,rm -rf *}", "'rm -rf' *",
		"rm -rf status", "*s*", "git st?tus", "rm -rf ?", "\"a b\" *"}
	c := match.NewCompiler()
	r := rand.New(rand.NewPCG(21, 22))
	allowed := 0
	for range 1000 {
		var line []string
		for range 1 + r.IntN(2) {
			cmd := []string{words[r.IntN(9)]}
			for range r.IntN(4) {
				cmd = append(cmd, words[r.IntN(len(words))])
			}
			line = append(line, strings.Join(cmd, " "))
		}
		value := strings.Join(line, " && ")
		req := commandRequest(value)
		req.Dimensions[0].Syntax = decision.SyntaxShell
		for _, g := range globs {
			m, err := c.Matcher(match.Spec{Dimensions: map[string]string{"command": g}})
			if err != nil {
				t.Fatal(err)
			}
			rule := commandRule(decision.Allow, g)
			rule.Dimensions[0].Kind = decision.KindGlob
			rule.Tool, rule.Action, req.Tool, req.Action = "", "", "", ""
			rules := covered(rule, req, now)
			line := shell.Of(req.Dimensions[0]).Allowed(shell.ScopeCovers(decision.Scope{Kind: decision.KindGlob, Match: g}))
			if matcher := m.Match(match.NewCache(req)); rules != matcher || rules != line {
				t.Fatalf("%q on %q: remembered %v, rules file %v, shell.Line.Allowed %v", g, value, rules, matcher, line)
			}
			if rules {
				allowed++
			}
		}
	}
	if allowed == 0 {
		t.Fatal("no generated line is allowed: the comparison says nothing")
	}
}

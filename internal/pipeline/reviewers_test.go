package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/reviewer/reviewertest"
	"github.com/askperm/askperm/internal/state"
)

// verbsRequire is the verb policy's always_require asking a person.
var verbsRequire = policy.Opinion{Verdict: policy.Prompt, By: decision.FrontendRules, Cause: decision.CauseRule, Source: "verbs", Name: "always_require"}

// chainOf is the chain of fake reviewers (name, mode, args...), each
// logging to log when asked.
func chainOf(t *testing.T, log string, rs ...[]string) *reviewer.Chain {
	t.Helper()
	var specs []reviewer.Spec
	for _, r := range rs {
		specs = append(specs, reviewer.Spec{Name: r[0], Command: reviewertest.Command(log, r[0], r[1], r[2:]...), Timeout: 5 * time.Second})
	}
	c, err := reviewer.New(specs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The reviewers' step in the order of steps: policy and memory first
// (reviewers never asked when they decide), then the reviewers in order,
// then canned answers and the person; nobody deciding is the person's,
// then a deny.
func TestReviewersInTheOrderOfSteps(t *testing.T) {
	const req = `{"tool":"read_file","action":"read","session_id":"s1"}`
	canned, err := answers.Single("allow-once", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		policy    []policy.Opinion
		reviewers [][]string
		canned    bool
		// want: decision, cause, frontend; asked: the reviewers run;
		// person: whether the frontend was asked.
		decision, cause, frontend string
		message                   string
		asked                     []string
		person                    bool
	}{
		{name: "allow", reviewers: [][]string{{"a", "allow"}}, decision: "allow", cause: "reviewer", frontend: "reviewer", asked: []string{"a"}},
		{name: "deny with message", reviewers: [][]string{{"a", "deny", "use", "the", "API"}}, decision: "deny", cause: "reviewer", frontend: "reviewer", message: "use the API", asked: []string{"a"}},
		{name: "two in order", reviewers: [][]string{{"a", "abstain"}, {"b", "crash"}, {"c", "deny", "no"}, {"d", "allow"}}, decision: "deny", cause: "reviewer", frontend: "reviewer", message: "no", asked: []string{"a", "b", "c"}},
		{name: "all abstain: the person", reviewers: [][]string{{"a", "abstain"}, {"b", "garbage"}}, decision: "allow", cause: "user", frontend: "tui", asked: []string{"a", "b"}, person: true},
		{name: "rules allow", policy: []policy.Opinion{ruleAllow}, reviewers: [][]string{{"a", "deny", "x"}}, decision: "allow", cause: "rule", frontend: "rules"},
		{name: "rules deny", policy: []policy.Opinion{ruleDeny}, reviewers: [][]string{{"a", "allow"}}, decision: "deny", cause: "rule", frontend: "rules", message: "ask a human"},
		// A source that asks a person is not answered by a reviewer: a
		// rule's decision = "prompt", the verb policy's always_require.
		{name: "rules prompt: the person", policy: []policy.Opinion{rulePrompt}, reviewers: [][]string{{"a", "allow"}}, decision: "allow", cause: "user", frontend: "tui", person: true},
		{name: "verbs require: the person", policy: []policy.Opinion{verbsRequire}, reviewers: [][]string{{"a", "deny", "no"}}, decision: "allow", cause: "user", frontend: "tui", person: true},
		{name: "rules allow, verbs require: the person", policy: []policy.Opinion{ruleAllow, verbsRequire}, reviewers: [][]string{{"a", "allow"}}, decision: "allow", cause: "user", frontend: "tui", person: true},
		// A canned answer is the person's answer given in advance.
		{name: "canned answers, no reviewer", reviewers: [][]string{{"a", "deny", "no"}}, canned: true, decision: "allow", cause: "user", frontend: "answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "asked")
			asked := 0
			c := Config{Policy: []Source{source(tc.policy...)}, Reviewers: chainOf(t, log, tc.reviewers...), Memory: &Memory{Dir: t.TempDir(), SessionIdle: time.Hour}}
			if tc.canned {
				c.Answers = canned
			}
			d, err := decideRaw(t, context.Background(), pipe(c, answering{form.AllowOnce, &asked}), req)
			if err != nil || d.Decision != tc.decision || string(d.Cause) != tc.cause || string(d.Frontend) != tc.frontend || d.Message != tc.message || d.Persist != "once" {
				t.Errorf("got %+v, %v", d, err)
			}
			if got := reviewertest.Asked(t, log); !slices.Equal(got, tc.asked) {
				t.Errorf("reviewers asked %q, want %q", got, tc.asked)
			}
			if (asked > 0) != tc.person {
				t.Errorf("the person was asked %d times", asked)
			}
		})
	}
}

// A reviewer's allow is never remembered: no rule, no session approval,
// no count for the breaker; the next identical request asks the reviewer
// again. The audit log names the reviewer.
func TestReviewerAllowNeverPersisted(t *testing.T) {
	const req = `{"tool":"read_file","action":"read","session_id":"s1","dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"dir","match":"/p/","kind":"prefix"}]}]}`
	dir, log := t.TempDir(), filepath.Join(t.TempDir(), "asked")
	asked := 0
	p := pipe(Config{Reviewers: chainOf(t, log, []string{"model", "allow"}), Memory: &Memory{Dir: dir, SessionIdle: time.Hour, Breaker: state.DefaultBreaker}},
		answering{form.AllowOnce, &asked})
	for i := range 3 {
		d, err := decideRaw(t, context.Background(), p, req)
		if err != nil || d.Decision != "allow" || d.Frontend != "reviewer" {
			t.Fatalf("%d: got %+v, %v", i, d, err)
		}
	}
	if got := reviewertest.Asked(t, log); len(got) != 3 || asked != 0 {
		t.Errorf("reviewer asked %q, person %d times", got, asked)
	}
	s, err := state.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(func(tx *state.Tx) error {
		rules, err := tx.Rules(time.Now())
		if len(rules) > 0 {
			t.Errorf("remembered %+v", rules)
		}
		parsed, _ := decision.Parse([]byte(req)) // decided three times above
		sess, _ := state.SessionOf(parsed)
		if ok, _ := tx.SessionApproved(sess, time.Now(), time.Hour); ok {
			t.Error("approved for the session")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := state.ReadAudit(dir, func(state.AuditEntry) bool { return true })
	if err != nil || len(entries) != 3 {
		t.Fatalf("audit %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.Frontend != "reviewer" || e.Cause != "reviewer" || !slices.Equal(e.DecidedBy, []string{"model"}) {
			t.Errorf("audit line %+v", e)
		}
	}
}

// A remembered rule decides before the reviewers; a remembered deny
// could go unseen without memory, so an unusable store asks no reviewer
// (whose allow would be automatic): a person decides.
func TestReviewersAfterMemory(t *testing.T) {
	const req = `{"tool":"write_file","action":"write","arguments":{"p":1},"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"dir","match":"/p/","kind":"prefix"}]}]}`
	log := filepath.Join(t.TempDir(), "asked")
	dir := t.TempDir()
	asked := 0
	p := pipe(Config{Reviewers: chainOf(t, log, []string{"r", "allow"}), Memory: &Memory{Dir: dir}}, answering{form.DenyAlways, &asked})
	// The person denies always, no reviewer configured yet; then the
	// remembered deny decides before the reviewer that would allow.
	p.c.Reviewers = nil
	if d, _ := decideRaw(t, context.Background(), p, req); d.Persist != "always" || asked != 1 {
		t.Fatalf("got %+v", d)
	}
	p.c.Reviewers = chainOf(t, log, []string{"r", "allow"})
	if d, _ := decideRaw(t, context.Background(), p, req); d.Decision != "deny" || d.Frontend != "memory" {
		t.Errorf("memory's deny: got %+v", d)
	}
	if got := reviewertest.Asked(t, log); got != nil {
		t.Errorf("reviewers asked %q after memory decided", got)
	}

	unsafe := t.TempDir()
	if err := os.Chmod(unsafe, 0o777); err != nil {
		t.Fatal(err)
	}
	var warned []string
	p = pipe(Config{Reviewers: chainOf(t, log, []string{"r", "allow"}), Memory: &Memory{Dir: unsafe}, Warn: func(m string) { warned = append(warned, m) }},
		answering{form.AllowOnce, &asked})
	if d, _ := decideRaw(t, context.Background(), p, req); d.Frontend != "tui" {
		t.Errorf("without memory: got %+v", d)
	}
	if got := reviewertest.Asked(t, log); got != nil || !strings.Contains(strings.Join(warned, "\n"), "reviewers are not asked: memory cannot be consulted") {
		t.Errorf("without memory: reviewers asked %q; warned %q", got, warned)
	}
}

// check names the reviewers that would be asked, in order, only when
// nothing above decides, and runs none.
func TestCheckNamesReviewers(t *testing.T) {
	log := filepath.Join(t.TempDir(), "asked")
	chain := chainOf(t, log, []string{"a", "allow"}, []string{"b", "allow"})
	for _, tc := range []struct {
		policy []policy.Opinion
		want   []string
	}{
		{nil, []string{"a", "b"}},
		{[]policy.Opinion{rulePrompt}, nil},
		{[]policy.Opinion{verbsRequire}, nil},
		{[]policy.Opinion{ruleAllow}, nil},
		{[]policy.Opinion{ruleDeny}, nil},
	} {
		p := pipe(Config{Policy: []Source{source(tc.policy...)}, Reviewers: chain})
		c, err := p.Check(context.Background(), strings.NewReader(`{"action":"read"}`))
		if err != nil || !slices.Equal(c.Reviewers, tc.want) {
			t.Errorf("%v: got %q, %v; want %q", tc.policy, c.Reviewers, err, tc.want)
		}
	}
	if got := reviewertest.Asked(t, log); got != nil {
		t.Errorf("check ran %q", got)
	}
}

// A canned deny-once is the person's answer: a reviewer allowing never
// overrides it (nor is it asked).
func TestReviewersNeverOverCannedDeny(t *testing.T) {
	canned, err := answers.Single("deny-once", "not now")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "asked")
	p := pipe(Config{Reviewers: chainOf(t, log, []string{"a", "allow"}), Answers: canned, Memory: &Memory{Dir: t.TempDir()}}, answering{form.AllowOnce, new(int)})
	d, err := decideRaw(t, context.Background(), p, `{"tool":"delete_branch","action":"write"}`)
	if err != nil || d.Decision != "deny" || d.Frontend != "answers" {
		t.Errorf("got %+v, %v", d, err)
	}
	if got := reviewertest.Asked(t, log); got != nil {
		t.Errorf("reviewers asked %q", got)
	}
}

// Property: over every set of opinions of a pool, a reviewer is asked
// exactly when the opinions leave a question no source asked a person
// for, and never decides a request a source sent to a person.
func TestReviewersOnlyForUndecided(t *testing.T) {
	pool := []policy.Opinion{ruleAllow, rulePrompt, ruleDeny, verbsRequire, abstain}
	for mask := range 1 << len(pool) {
		var ops []policy.Opinion
		for i, o := range pool {
			if mask&(1<<i) != 0 {
				ops = append(ops, o)
			}
		}
		log := filepath.Join(t.TempDir(), "asked")
		p := pipe(Config{Policy: []Source{source(ops...)}, Reviewers: chainOf(t, log, []string{"a", "allow"}), Memory: &Memory{Dir: t.TempDir()}}, answering{form.DenyOnce, new(int)})
		d, err := decideRaw(t, context.Background(), p, `{"tool":"read_file","action":"read"}`)
		v, _ := policy.Combine(ops)
		want := v == policy.Prompt && !slices.ContainsFunc(ops, func(o policy.Opinion) bool { return o.Verdict == policy.Prompt })
		got := reviewertest.Asked(t, log) != nil
		if err != nil || got != want || (!want && d.Frontend == "reviewer") {
			t.Errorf("%v: reviewer asked %v (want %v), decision %+v, %v", ops, got, want, d, err)
		}
	}
}

// A reviewer's deny counts for the denial breaker as any deny the agent
// receives: rewording a denied request again and again trips it.
func TestReviewerDenyCountsForBreaker(t *testing.T) {
	log := filepath.Join(t.TempDir(), "asked")
	mem := &Memory{Dir: t.TempDir(), SessionIdle: time.Hour, Breaker: state.Breaker{Session: state.Thresholds{Consecutive: 3}}}
	p := pipe(Config{Reviewers: chainOf(t, log, []string{"a", "deny", "no"}), Memory: mem}, answering{form.AllowOnce, new(int)})
	for i, wantStop := range []bool{false, false, true} {
		d, err := decideRaw(t, context.Background(), p, `{"tool":"read_file","action":"read","session_id":"s1","arguments":{"n":`+string(rune('0'+i))+`}}`)
		if err != nil || d.Frontend != "reviewer" || d.Stop != wantStop {
			t.Errorf("%d: got %+v, %v; want stop %v", i, d, err, wantStop)
		}
	}
}

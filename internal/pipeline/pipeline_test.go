package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/prompt"
)

// fake is a frontend with a scripted outcome.
type fake struct {
	name   string
	answer form.Answer
	err    error
	block  bool // wait for ctx to end
	panics bool
	asked  *int
}

func (f fake) Name() decision.Frontend { return decision.Frontend(f.name) }

func (f fake) Ask(ctx context.Context, _ *form.Form) (form.Answer, error) {
	if f.asked != nil {
		*f.asked++
	}
	if f.panics {
		panic("frontend bug")
	}
	if f.block {
		<-ctx.Done()
		return form.Answer{}, ctx.Err()
	}
	return f.answer, f.err
}

// pipe is a pipeline over chain whose other settings tests change in c.
func pipe(c Config, chain ...prompt.Frontend) *Pipeline {
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	if c.MaxRequest == 0 {
		c.MaxRequest = 1 << 20
	}
	p := New(c)
	p.chain = func() []prompt.Frontend { return chain }
	return p
}

// rulesText is the policy of a rules file holding text.
func rulesText(t *testing.T, text string) (*policy.Policy, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return policy.Load("", []string{path}, "")
}

// decideRaw decides the request raw, already read (as an adapter hands
// one over), and fails the test on an outcome without a decision.
func decideRaw(t *testing.T, ctx context.Context, p *Pipeline, raw string) (decision.Decision, error) {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	out := p.DecideRequest(ctx, req)
	if out.Decision == nil {
		t.Fatalf("%s: no decision: %v", raw, out.Err)
	}
	return *out.Decision, out.Err
}

func TestDecideMapsEveryFrontendOutcome(t *testing.T) {
	req := `{"action":"write","grants":[{"name":"g"}]}`
	unavailable := fake{name: "tui", err: fmt.Errorf("no tty: %w", prompt.ErrUnavailable)}
	for _, tc := range []struct {
		name                      string
		chain                     []prompt.Frontend
		decision, cause, frontend string
		internal                  bool
	}{
		{"allow", []prompt.Frontend{fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}}}, "allow", "user", "tui", false},
		{"unavailable passes on", []prompt.Frontend{unavailable, fake{name: "line", answer: form.Answer{Choice: form.AllowOnce}}}, "allow", "user", "line", false},
		{"nobody", []prompt.Frontend{unavailable}, "deny", "unavailable", "none", false},
		{"empty chain", nil, "deny", "unavailable", "none", false},
		{"dismissed", []prompt.Frontend{fake{name: "yad", err: fmt.Errorf("escape: %w", prompt.ErrCancelled)}, fake{name: "zenity", answer: form.Answer{Choice: form.AllowOnce}}}, "deny", "cancelled", "yad", false},
		{"broken frontend", []prompt.Frontend{fake{name: "tui", err: errors.New("boom")}}, "deny", "error", "none", true},
		{"invalid answer", []prompt.Frontend{fake{name: "tui", answer: form.Answer{Choice: "allow"}}}, "deny", "error", "none", true},
		{"panic", []prompt.Frontend{fake{name: "tui", panics: true}}, "deny", "error", "none", true},
	} {
		d, err := decideRaw(t, context.Background(), pipe(Config{}, tc.chain...), req)
		if d.Decision != tc.decision || string(d.Cause) != tc.cause || string(d.Frontend) != tc.frontend || (err != nil) != tc.internal {
			t.Errorf("%s: got %+v, %v", tc.name, d, err)
		}
	}
}

func TestDecideContextEnds(t *testing.T) {
	req := `{"action":"write"}`
	t.Run("deadline", func(t *testing.T) {
		p := pipe(Config{Timeout: 50 * time.Millisecond}, fake{name: "tui", block: true})
		d, err := decideRaw(t, context.Background(), p, req)
		if err != nil || d.Decision != "deny" || d.Cause != decision.CauseTimeout || d.Frontend != "tui" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("signal", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(fmt.Errorf("signal %v", syscall.SIGTERM)) })
		d, err := decideRaw(t, ctx, pipe(Config{}, fake{name: "line", block: true}), req)
		if err != nil || d.Decision != "deny" || d.Cause != decision.CauseCancelled || d.Frontend != "line" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("ended before asking", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		asked := 0
		d, err := decideRaw(t, ctx, pipe(Config{}, fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}, asked: &asked}), req)
		if err != nil || d.Cause != decision.CauseCancelled || d.Frontend != "none" || asked != 0 {
			t.Errorf("got %+v, %v, asked %d", d, err, asked)
		}
	})
	t.Run("caller deadline of one second asks nobody", func(t *testing.T) {
		asked := 0
		d, err := decideRaw(t, context.Background(), pipe(Config{}, fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}, asked: &asked}), `{"action":"x","timeout":1}`)
		if err != nil || d.Cause != decision.CauseTimeout || d.Frontend != "none" || asked != 0 {
			t.Errorf("got %+v, %v, asked %d", d, err, asked)
		}
	})
	t.Run("a huge caller deadline changes nothing", func(t *testing.T) {
		d, err := decideRaw(t, context.Background(), pipe(Config{}, fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}}), `{"action":"x","timeout":1e300}`)
		if err != nil || d.Decision != "allow" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("caller deadline shortens ours", func(t *testing.T) {
		start := time.Now()
		d, _ := decideRaw(t, context.Background(), pipe(Config{}, fake{name: "tui", block: true}), `{"action":"x","timeout":1.2}`)
		if d.Cause != decision.CauseTimeout || time.Since(start) > 2*time.Second {
			t.Errorf("got %+v after %v", d, time.Since(start))
		}
	})
}

// In a long-running process each request has its own deadline, counted
// from when it started: a pipeline made long ago still gives a new request
// its whole time.
func TestDeadlineCountsFromTheRequest(t *testing.T) {
	p := pipe(Config{Timeout: 300 * time.Millisecond}, fake{name: "tui", block: true})
	for range 3 {
		start := time.Now()
		d, _ := decideRaw(t, context.Background(), p, `{"action":"x"}`)
		if took := time.Since(start); d.Cause != decision.CauseTimeout || took < 250*time.Millisecond {
			t.Errorf("got %+v after %v", d, took)
		}
	}
}

func TestDecideCannedAnswers(t *testing.T) {
	req := `{"action":"write","tool":"write_file"}`
	file, err := answers.Parse([]byte("[[answer]]\ntool = \"read_*\"\nchoice = \"allow-once\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	tui := fake{name: "tui", answer: form.Answer{Choice: form.DenyOnce}, asked: &asked}
	if d, err := decideRaw(t, context.Background(), pipe(Config{Answers: file}, tui), req); err != nil || d.Frontend != "tui" || asked != 1 {
		t.Errorf("unmatched request was not asked: %+v, %v", d, err)
	}
	if out := pipe(Config{Answers: file, Strict: true}, tui).Run(context.Background(), strings.NewReader(req)); out.Decision != nil || !errors.Is(out.Err, ErrNoMatch) {
		t.Errorf("strict: got %+v", out)
	}
	single, _ := answers.Single("allow-session", "")
	if out := pipe(Config{Answers: single}, tui).Run(context.Background(), strings.NewReader(req)); out.Decision != nil || !errors.Is(out.Err, ErrBadAnswer) || asked != 1 {
		t.Errorf("a choice not offered: got %+v, asked %d", out, asked)
	}
	var warned []string
	single, _ = answers.Single("allow-once", "because")
	d, err := decideRaw(t, context.Background(), pipe(Config{Answers: single, Warn: func(m string) { warned = append(warned, m) }}, tui), req)
	if err != nil || d.Decision != "allow" || d.Message != "" || d.Frontend != "answers" || len(warned) != 1 {
		t.Errorf("got %+v, %v, warnings %q", d, err, warned)
	}
}

func TestInvalidRequestsWriteNothing(t *testing.T) {
	recorded := 0
	p := pipe(Config{MaxRequest: 64, Record: func(Record) { recorded++ }}, fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}})
	for _, raw := range []string{``, `{}`, `{"action":1}`, `{"action":"x"}` + strings.Repeat(" ", 64)} {
		if out := p.Run(context.Background(), strings.NewReader(raw)); out.Decision != nil || out.Request != nil || !errors.Is(out.Err, ErrInvalidRequest) {
			t.Errorf("%q: got %+v", raw, out)
		}
	}
	if recorded != 0 {
		t.Errorf("%d invalid requests recorded", recorded)
	}
}

// source is a policy source giving fixed opinions.
func source(ops ...policy.Opinion) Source {
	return func(*decision.Request) []policy.Opinion { return ops }
}

var (
	ruleAllow   = policy.Opinion{Verdict: policy.Allow, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "allow-reads"}
	rulePrompt  = policy.Opinion{Verdict: policy.Prompt, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "ask-writes"}
	ruleDeny    = policy.Opinion{Verdict: policy.Deny, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "no-push", Message: "ask a human"}
	ruleDeny2   = policy.Opinion{Verdict: policy.Deny, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "no-force", Message: "second"}
	memoryAllow = policy.Opinion{Verdict: policy.Allow, By: decision.FrontendMemory, Cause: decision.CauseRule, Name: "r1"}
	memoryDeny  = policy.Opinion{Verdict: policy.Deny, By: decision.FrontendMemory, Cause: decision.CauseRule, Name: "r2"}
	session     = policy.Opinion{Verdict: policy.Allow, By: decision.FrontendMemory, Cause: decision.CauseSession, Name: "s1"}
	abstain     = policy.Opinion{Name: "silent"}
)

// Policy decides before anyone is asked, canned answers included; it
// says prompt when it knows nothing.
func TestPolicyDecides(t *testing.T) {
	req := `{"action":"write","grants":[{"name":"fs.write"}]}`
	for _, tc := range []struct {
		name              string
		sources           []Source
		decision, persist string
		cause             decision.Cause
		frontend          decision.Frontend
		message           string
		asked             bool
	}{
		{"nothing to say", nil, "deny", "once", decision.CauseUser, "tui", "", true},
		{"abstentions", []Source{source(abstain)}, "deny", "once", decision.CauseUser, "tui", "", true},
		{"a rule allows", []Source{source(ruleAllow)}, "allow", "once", decision.CauseRule, "rules", "", false},
		{"a rule prompts over an allow", []Source{source(ruleAllow), source(rulePrompt)}, "deny", "once", decision.CauseUser, "tui", "", true},
		{"deny wins, first message", []Source{source(ruleAllow, ruleDeny), source(ruleDeny2)}, "deny", "once", decision.CauseRule, "rules", "ask a human", false},
		{"memory alone", []Source{source(memoryAllow)}, "allow", "once", decision.CauseRule, "memory", "", false},
		{"memory deny", []Source{source(memoryDeny)}, "deny", "once", decision.CauseRule, "memory", "", false},
		{"memory and rules", []Source{source(memoryAllow), source(ruleAllow)}, "allow", "once", decision.CauseRule, "rules", "", false},
		{"a session approval", []Source{source(session)}, "allow", "session", decision.CauseSession, "memory", "", false},
	} {
		asked := 0
		tui := fake{name: "tui", answer: form.Answer{Choice: form.DenyOnce}, asked: &asked}
		canned, _ := answers.Single("deny-once", "")
		c := Config{Policy: tc.sources}
		if !tc.asked {
			c.Answers = canned // policy answers before canned answers
		}
		d, err := decideRaw(t, context.Background(), pipe(c, tui), req)
		if err != nil || d.Decision != tc.decision || d.Persist != tc.persist || d.Cause != tc.cause || d.Frontend != tc.frontend ||
			d.Message != tc.message || (asked == 1) != tc.asked {
			t.Errorf("%s: got %+v, %v, asked %d", tc.name, d, err, asked)
		}
		if d.Decision == "allow" && !reflect.DeepEqual(d.Grants, []string{"fs.write"}) {
			t.Errorf("%s: grants %v", tc.name, d.Grants)
		}
	}
}

// Every decision, whoever made it, is recorded once, with the policy's
// opinions; a script's mistake writes and records nothing.
func TestRecordStep(t *testing.T) {
	var records []Record
	record := func(r Record) { records = append(records, r) }
	canned, _ := answers.Single("allow-session", "")
	for _, tc := range []struct {
		name  string
		c     Config
		chain []prompt.Frontend
		want  int
	}{
		{"by a person", Config{}, []prompt.Frontend{fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}}}, 1},
		{"by policy", Config{Policy: []Source{source(ruleDeny, abstain)}}, nil, 1},
		{"on timeout", Config{Timeout: 20 * time.Millisecond}, []prompt.Frontend{fake{name: "tui", block: true}}, 1},
		{"on panic", Config{}, []prompt.Frontend{fake{name: "tui", panics: true}}, 1},
		{"bad canned answer", Config{Answers: canned}, nil, 0},
	} {
		records = nil
		tc.c.Record = record
		out := pipe(tc.c, tc.chain...).Run(context.Background(), strings.NewReader(`{"action":"x","id":"7"}`))
		if len(records) != tc.want {
			t.Fatalf("%s: %d records", tc.name, len(records))
		}
		if tc.want == 1 && (!reflect.DeepEqual(records[0].Decision, *out.Decision) || records[0].Request != out.Request || records[0].Start.IsZero()) {
			t.Errorf("%s: recorded %+v for %+v", tc.name, records[0], out)
		}
	}
	pipe(Config{Record: record, Policy: []Source{source(ruleDeny, abstain)}}).Run(context.Background(), strings.NewReader(`{"action":"x"}`))
	if got := records[len(records)-1].Opinions; !reflect.DeepEqual(got, []policy.Opinion{ruleDeny}) {
		t.Errorf("opinions recorded: %+v", got)
	}
}

func TestRunReadsTheRequest(t *testing.T) {
	p := pipe(Config{MaxRequest: 64}, fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}})
	if out := p.Run(context.Background(), strings.NewReader(`{"action":"x"}`)); out.Decision == nil || out.Decision.Decision != "allow" {
		t.Errorf("got %+v", out)
	}
	if out := p.Run(context.Background(), strings.NewReader(`{"action":"x"}`+strings.Repeat(" ", 64))); !errors.Is(out.Err, ErrInvalidRequest) || !strings.Contains(out.Err.Error(), "larger than 64 bytes") {
		t.Errorf("oversized: got %+v", out)
	}
}

func TestReadRequest(t *testing.T) {
	b, err := Read(context.Background(), strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Errorf("got %q, %v", b, err)
	}
	if _, err := Read(context.Background(), strings.NewReader("123456"), 5); err == nil || !strings.Contains(err.Error(), "larger than 5 bytes") {
		t.Errorf("oversized: got %v", err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, ErrTimeout)
	defer cancel()
	if _, err := Read(ctx, pr, 5); !errors.Is(err, ErrTimeout) {
		t.Errorf("never closed: got %v", err)
	}
}

// A caller that never closes a real pipe gets an error at the deadline,
// and the read leaves no goroutine behind and the pipe in blocking mode.
func TestReadRequestFromPipeLeavesNothing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// As the process's stdin would be: a blocking descriptor.
	in := os.NewFile(r.Fd(), "stdin")
	before := runtime.NumGoroutine()
	if _, err := w.Write([]byte(`{"act`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, ErrTimeout)
	defer cancel()
	if _, err := Read(ctx, in, 1<<20); !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
	flags, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0)
	if err != nil || flags&unix.O_NONBLOCK != 0 {
		t.Errorf("stdin left non-blocking: %#x, %v", flags, err)
	}
	// What is written later is still there to read.
	if _, err := w.Write([]byte(`ion":"x"}`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, err := Read(context.Background(), in, 1<<20); err != nil || string(b) != `ion":"x"}` {
		t.Errorf("second read: %q, %v", b, err)
	}
}

// answering is a frontend that gives one answer, built from the form's
// defaults, and counts its questions.
type answering struct {
	choice form.Choice
	asked  *int
}

func (answering) Name() decision.Frontend { return decision.FrontendTUI }

func (a answering) Ask(_ context.Context, f *form.Form) (form.Answer, error) {
	*a.asked++
	ans := f.Defaults()
	ans.Choice = a.choice
	return ans, nil
}

// An always-answer is remembered and decides the next covered request
// before anyone is asked; so does an approval for the session.
func TestMemory(t *testing.T) {
	const req = `{"tool":"write_file","action":"write","session_id":"s1","arguments":{"p":1},
		"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"dir","match":"/p/","kind":"prefix"}]}]}`
	other := strings.Replace(req, "/p/a", "/p/b", 1)
	outside := strings.Replace(req, "/p/a", "/q/a", 1)
	for _, tc := range []struct {
		choice            form.Choice
		next              string
		decision, persist string
		cause             decision.Cause
	}{
		{form.AllowAlways, other, "allow", "once", decision.CauseRule},
		{form.DenyAlways, other, "deny", "once", decision.CauseRule},
		{form.AllowSession, req, "allow", "session", decision.CauseSession},
	} {
		asked := 0
		p := pipe(Config{Memory: &Memory{Dir: t.TempDir(), SessionIdle: time.Hour}}, answering{tc.choice, &asked})
		first, err := decideRaw(t, context.Background(), p, req)
		if err != nil || first.Frontend != "tui" || asked != 1 {
			t.Fatalf("%s: first %+v, %v", tc.choice, first, err)
		}
		d, err := decideRaw(t, context.Background(), p, tc.next)
		if err != nil || asked != 1 || d.Decision != tc.decision || d.Persist != tc.persist || d.Cause != tc.cause || d.Frontend != "memory" {
			t.Errorf("%s: next %+v, %v, asked %d", tc.choice, d, err, asked)
		}
		if d, _ := decideRaw(t, context.Background(), p, outside); asked != 2 || d.Frontend != "tui" {
			t.Errorf("%s: a request outside the rule was not asked: %+v", tc.choice, d)
		}
	}
}

// An unusable store is said once on the diagnostics and the request is
// decided as if askperm remembered nothing: asked, without allow-session,
// never allowed by it.
// Without memory an always-answer is a decision like any other, and
// nothing is remembered.
func TestNoMemory(t *testing.T) {
	asked := 0
	p := pipe(Config{}, answering{form.AllowAlways, &asked})
	for range 2 {
		if d, err := decideRaw(t, context.Background(), p, `{"action":"x"}`); err != nil || d.Persist != "always" {
			t.Fatalf("got %+v, %v", d, err)
		}
	}
	if asked != 2 {
		t.Errorf("asked %d times", asked)
	}
}

func TestMemoryUnusable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	var warned []string
	var offered []form.Choice
	probe := fakeFunc(func(f *form.Form) { offered = f.Choices() })
	p := pipe(Config{Memory: &Memory{Dir: dir}, Warn: func(m string) { warned = append(warned, m) }}, probe)
	d, err := decideRaw(t, context.Background(), p, `{"action":"x","session_id":"s"}`)
	if err != nil || d.Frontend != "tui" || slices.Contains(offered, form.AllowSession) || len(warned) != 2 ||
		!strings.Contains(warned[0], "deciding without memory") || !strings.HasPrefix(warned[1], "audit log: ") {
		t.Errorf("got %+v, %v; offered %v; warned %q", d, err, offered, warned)
	}
}

// fakeFunc is a frontend that looks at the form, then denies.
type fakeFunc func(*form.Form)

func (fakeFunc) Name() decision.Frontend { return decision.FrontendTUI }

func (fn fakeFunc) Ask(_ context.Context, f *form.Form) (form.Answer, error) {
	fn(f)
	return f.Defaults(), nil
}

// The third denial in a row of a session carries stop; decisions by
// memory are not counted; another session counts apart.
func TestBreakerStops(t *testing.T) {
	asked := 0
	mem := &Memory{Dir: t.TempDir(), SessionIdle: time.Hour, Breaker: state.DefaultBreaker}
	p := pipe(Config{Memory: mem}, answering{form.DenyOnce, &asked})
	const s1, s2 = `{"action":"x","session_id":"s1"}`, `{"action":"x","session_id":"s2"}`
	var stops []bool
	for _, raw := range []string{s1, s1, s2, s1, s1} {
		d, err := decideRaw(t, context.Background(), p, raw)
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, d.Stop)
	}
	if want := []bool{false, false, false, true, false}; !reflect.DeepEqual(stops, want) {
		t.Errorf("stops %v, want %v", stops, want)
	}
	// A remembered deny decides, and is not counted.
	deny := pipe(Config{Memory: mem}, answering{form.DenyAlways, &asked})
	for range 4 {
		if d, _ := decideRaw(t, context.Background(), deny, `{"action":"y","session_id":"s3"}`); d.Stop {
			t.Errorf("a decision by memory tripped the breaker: %+v", d)
		}
	}
}

// Beyond the prompts a session may have in a minute, a request is denied
// at once, asking nobody.
func TestPromptRateLimit(t *testing.T) {
	asked := 0
	p := pipe(Config{Memory: &Memory{Dir: t.TempDir(), Prompts: state.Rate{Session: 2}}}, answering{form.AllowOnce, &asked})
	var causes []decision.Cause
	for range 3 {
		d, _ := decideRaw(t, context.Background(), p, `{"action":"x","session_id":"s1"}`)
		causes = append(causes, d.Cause)
	}
	d, _ := decideRaw(t, context.Background(), p, `{"action":"x","session_id":"s2"}`)
	causes = append(causes, d.Cause)
	if want := []decision.Cause{"user", "user", "rate-limit", "user"}; !reflect.DeepEqual(causes, want) || asked != 3 {
		t.Errorf("causes %v, asked %d", causes, asked)
	}
}

// A mode of the annotation policy that asks each time offers no
// allow-session, but its prompts are rate-limited, recorded and queued
// all the same.
func TestAskEachTimeStillLimited(t *testing.T) {
	pol, err := rulesText(t, "[[annotations]]\ntool = \"t\"\nmode = \"prompt\"\n")
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	offered := false
	p := pipe(Config{Policy: []Source{pol.Opinions}, Memory: &Memory{Dir: t.TempDir(), Prompts: state.Rate{Session: 2}, Breaker: state.DefaultBreaker}},
		askingFunc(func(f *form.Form) form.Answer {
			asked++
			offered = offered || f.Offers(form.AllowSession)
			return f.Defaults()
		}))
	var causes []decision.Cause
	for range 3 {
		d, _ := decideRaw(t, context.Background(), p, `{"action":"x","tool":"t","session_id":"s1","annotations":{"destructiveHint":true}}`)
		causes = append(causes, d.Cause)
	}
	if want := []decision.Cause{"user", "user", "rate-limit"}; !reflect.DeepEqual(causes, want) || asked != 2 || offered {
		t.Errorf("causes %v, asked %d, allow-session offered %v", causes, asked, offered)
	}
}

// Prompts of one user are asked one at a time; a helper that waited finds
// the answer its twin was given for the session, and asks nobody.
func TestQueuedPromptsConsultMemoryAgain(t *testing.T) {
	mem := &Memory{Dir: t.TempDir(), SessionIdle: time.Hour}
	release := make(chan struct{})
	var mu sync.Mutex
	asking, most, asked := 0, 0, 0
	twin := askingFunc(func(f *form.Form) form.Answer {
		mu.Lock()
		asking++
		asked++
		most = max(most, asking)
		mu.Unlock()
		<-release
		mu.Lock()
		asking--
		mu.Unlock()
		a := f.Defaults()
		a.Choice = form.AllowSession
		return a
	})
	var warned atomic.Int32
	p := pipe(Config{Memory: mem, Warn: func(m string) {
		if strings.Contains(m, "waiting for another prompt") {
			warned.Add(1)
		}
	}}, twin)
	const raw = `{"action":"x","tool":"t","session_id":"s"}`
	results := make(chan decision.Decision, 3)
	for range 3 {
		go func() {
			d, _ := decideRaw(t, context.Background(), p, raw)
			results <- d
		}()
	}
	time.Sleep(300 * time.Millisecond)
	close(release)
	causes := map[decision.Cause]int{}
	for range 3 {
		causes[(<-results).Cause]++
	}
	if most != 1 || asked != 1 || causes[decision.CauseUser] != 1 || causes[decision.CauseSession] != 2 || warned.Load() != 2 {
		t.Errorf("most at once %d, asked %d, causes %v, waiting said %d times", most, asked, causes, warned.Load())
	}
}

// askingFunc is a frontend whose answer a function gives.
type askingFunc func(*form.Form) form.Answer

func (askingFunc) Name() decision.Frontend { return decision.FrontendTUI }

func (fn askingFunc) Ask(_ context.Context, f *form.Form) (form.Answer, error) { return fn(f), nil }

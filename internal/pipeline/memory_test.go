package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/prompt"
)

// holdLock locks the state directory's file name exclusively through a
// read-only descriptor, as a process that may only read it can, until
// the test ends or release is called.
func holdLock(t *testing.T, dir, name string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { f.Close() }) }
	t.Cleanup(release)
	return release
}

// warnings collects a pipeline's diagnostics.
type warnings struct {
	mu   sync.Mutex
	said []string
}

func (w *warnings) warn(m string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.said = append(w.said, m)
}

func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.said, "\n")
}

const writeReq = `{"tool":"write_file","action":"write","session_id":"s1","arguments":{"p":1},
	"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"dir","match":"/p/","kind":"prefix"}]}]}`

// A remembered deny-always of a call, a rules file allowing the same
// call, and the store held locked by another process: the call is never
// allowed. With nobody to ask it is denied (unavailable); a person is
// asked otherwise. Without the lock, the remembered deny decides.
func TestLockedStoreNeverWeakensADeny(t *testing.T) {
	dir := t.TempDir()
	deny, _ := answers.Single("deny-always", "")
	if d, _ := decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: dir}, Answers: deny}), writeReq); d.Cause != decision.CauseUser {
		t.Fatalf("remembering the deny: %+v", d)
	}
	rules := []Source{source(ruleAllow)}
	if d, _ := decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: dir}, Policy: rules}), writeReq); d.Decision != decision.Deny || d.Frontend != decision.FrontendMemory {
		t.Fatalf("the remembered deny did not decide: %+v", d)
	}
	holdLock(t, dir, state.DBName)
	var w warnings
	p := pipe(Config{Memory: &Memory{Dir: dir}, Policy: rules, Timeout: time.Second, Warn: w.warn}, prompt.None{})
	d, err := decideRaw(t, context.Background(), p, writeReq)
	if err != nil || d.Decision != decision.Deny || d.Cause != decision.CauseUnavailable {
		t.Errorf("store locked, nobody to ask: %+v, %v", d, err)
	}
	want := filepath.Join(dir, state.DBName) + " is locked by another process (held past"
	if !strings.Contains(w.all(), want) || !strings.Contains(w.all(), "automatic allows become a question") || strings.Contains(w.all(), "another askperm") {
		t.Errorf("diagnostics %q; want them to name the held file", w.all())
	}
	asked := 0
	p = pipe(Config{Memory: &Memory{Dir: dir}, Policy: rules, Timeout: time.Second}, answering{form.DenyOnce, &asked})
	if d, _ := decideRaw(t, context.Background(), p, writeReq); asked != 1 || d.Frontend != decision.FrontendTUI {
		t.Errorf("store locked, a person there: %+v, asked %d", d, asked)
	}
}

// Property: whatever the policy's opinions, when memory cannot be
// consulted no decision is an automatic allow: an allow comes only from
// whoever is asked, and here nobody can be.
func TestNoAutomaticAllowWithoutMemory(t *testing.T) {
	unusable := map[string]func(t *testing.T) string{
		"unsafe": func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		"corrupt": func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, state.DBName), []byte("not a database, not at all, no page in it"), 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		},
	}
	pool := []policy.Opinion{ruleAllow, rulePrompt, ruleDeny, abstain,
		{Verdict: policy.Allow, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "verbs: read", Source: "verbs"},
		{Verdict: policy.Allow, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "annotations: auto", Source: "annotations"},
		{Verdict: policy.Prompt, By: decision.FrontendRules, Cause: decision.CauseRule, Name: "annotations: prompt", Source: "annotations", NoSession: true},
	}
	rng := rand.New(rand.NewPCG(19, 1))
	for i := range 200 {
		var ops []policy.Opinion
		for range rng.IntN(5) {
			ops = append(ops, pool[rng.IntN(len(pool))])
		}
		kind := []string{"unsafe", "corrupt"}[i%2]
		p := pipe(Config{Memory: &Memory{Dir: unusable[kind](t)}, Policy: []Source{source(ops...)}}, prompt.None{})
		d, _ := decideRaw(t, context.Background(), p, writeReq)
		v, _ := policy.Combine(ops)
		switch {
		case d.Decision == decision.Allow:
			t.Fatalf("memory %s, opinions %v: allowed %+v", kind, ops, d)
		case v == policy.Deny && d.Cause != decision.CauseRule:
			t.Fatalf("memory %s, opinions %v: a deny did not stand: %+v", kind, ops, d)
		case v != policy.Deny && d.Cause != decision.CauseUnavailable:
			t.Fatalf("memory %s, opinions %v: %+v, want a question nobody could answer", kind, ops, d)
		}
	}
}

// A held audit log or prompts file never keeps a decision past the
// request's deadline, and the diagnostics name the file; a request
// cancelled while one is waited for is denied as cancelled.
func TestHeldFilesBoundedByTheDeadline(t *testing.T) {
	allow, _ := answers.Single("allow-once", "")
	for _, name := range []string{state.AuditName, state.PromptsFile, state.DBName} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			holdLock(t, dir, name)
			var w warnings
			p := pipe(Config{Memory: &Memory{Dir: dir, Prompts: state.DefaultRate}, Answers: allow, Timeout: 600 * time.Millisecond, Warn: w.warn})
			done := make(chan Outcome, 1)
			go func() { done <- p.Run(context.Background(), strings.NewReader(writeReq)) }()
			select {
			case out := <-done:
				if out.Decision == nil {
					t.Errorf("no decision: %v", out.Err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("a request hung on %s", name)
			}
			if !strings.Contains(w.all(), filepath.Join(dir, name)+" is locked by another process") {
				t.Errorf("diagnostics %q do not name the held file", w.all())
			}

			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			p = pipe(Config{Memory: &Memory{Dir: dir, Prompts: state.DefaultRate}, Answers: allow, Timeout: time.Hour})
			go func() { done <- p.Run(ctx, strings.NewReader(writeReq)) }()
			select {
			case out := <-done:
				if d := out.Decision; d == nil || d.Decision != decision.Deny || d.Cause != decision.CauseCancelled {
					t.Errorf("cancelled while %s was held: %+v", name, d)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("a cancelled request hung on %s", name)
			}
		})
	}
}

// A decision whose memory write failed says so on the diagnostics and in
// its audit entry; the decision still says what the person chose.
func TestNotRememberedNoted(t *testing.T) {
	dir := t.TempDir()
	var w warnings
	// The person answers while another process takes the store's lock.
	asker := askingFunc(func(f *form.Form) form.Answer {
		holdLock(t, dir, state.DBName)
		a := f.Defaults()
		a.Choice = form.AllowAlways
		return a
	})
	p := pipe(Config{Memory: &Memory{Dir: dir}, Timeout: time.Second, Warn: w.warn}, asker)
	d, err := decideRaw(t, context.Background(), p, writeReq)
	if err != nil || d.Decision != decision.Allow || d.Persist != decision.PersistAlways {
		t.Fatalf("got %+v, %v", d, err)
	}
	if !strings.Contains(w.all(), "is not remembered") {
		t.Errorf("diagnostics %q", w.all())
	}
	entries, err := state.ReadAudit(dir, func(state.AuditEntry) bool { return true })
	if err != nil || len(entries) != 1 || !strings.Contains(entries[0].NotRemembered, "locked by another process") {
		t.Errorf("audit %+v, %v; want the entry to say why nothing was remembered", entries, err)
	}
}

// When memory decides a request a canned answer would have answered, one
// line says which remembered rule decided and when it was saved.
func TestMemoryOverCannedSaid(t *testing.T) {
	dir := t.TempDir()
	deny, _ := answers.Single("deny-always", "")
	decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: dir}, Answers: deny}), writeReq)
	var w warnings
	allow, _ := answers.Single("allow-once", "")
	d, _ := decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: dir}, Answers: allow, Warn: w.warn}), writeReq)
	year := fmt.Sprint(time.Now().UTC().Year())
	if d.Frontend != decision.FrontendMemory || len(w.said) != 1 || !strings.Contains(w.said[0], "remembered rule 1 (saved "+year) ||
		!strings.Contains(w.said[0], "decided deny before the canned answer") {
		t.Errorf("got %+v; said %q", d, w.said)
	}
	// Without a canned answer that matches, nothing to say.
	w.said = nil
	decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: dir}, Warn: w.warn}), writeReq)
	if len(w.said) != 0 {
		t.Errorf("said %q", w.said)
	}
}

// holding answers deny-once, holding the store locked while it is asked,
// so the decision's record finds the store held past its deadline.
type holding struct {
	t       *testing.T
	dir     string
	release *func()
}

func (holding) Name() decision.Frontend { return decision.FrontendTUI }

func (h holding) Ask(_ context.Context, f *form.Form) (form.Answer, error) {
	*h.release = holdLock(h.t, h.dir, state.DBName)
	ans := f.Defaults()
	ans.Choice = form.DenyOnce
	return ans, nil
}

// A deny whose store stayed held past its deadline is said and counted
// when the store frees: with two denials in a row tripping the breaker,
// the next deny of the session (the store free) carries stop.
func TestHeldStoreDecisionCountedLater(t *testing.T) {
	dir := t.TempDir()
	mem := &Memory{Dir: dir, SessionIdle: time.Hour, Breaker: state.Breaker{Session: state.Thresholds{Consecutive: 2}}}
	var w warnings
	var release func()
	held := pipe(Config{Memory: mem, Timeout: 200 * time.Millisecond, Warn: w.warn}, holding{t, dir, &release})
	if d, _ := decideRaw(t, context.Background(), held, writeReq); d.Decision != decision.Deny || d.Stop {
		t.Fatalf("the deny made while the store was held: %+v", d)
	}
	if !strings.Contains(w.all(), "counted when the store frees") {
		t.Errorf("diagnostics %q do not say the decision is counted later", w.all())
	}
	release()
	asked := 0
	free := pipe(Config{Memory: mem}, answering{form.DenyOnce, &asked})
	d, err := decideRaw(t, context.Background(), free, writeReq)
	if err != nil || !d.Stop {
		t.Errorf("the second deny in a row, the first counted late: %+v, %v; want stop", d, err)
	}
}

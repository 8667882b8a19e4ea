package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
)

// toolReq is a request for tool in session, with id.
func toolReq(t *testing.T, id, tool, session string) *decision.Request {
	t.Helper()
	req, err := decision.Parse(fmt.Appendf(nil, `{"id":%q,"tool":%q,"action":"write","session_id":%q,"arguments":{"p":1},
		"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"dir","match":"/p/","kind":"prefix"}]}]}`, id, tool, session))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// countOpens makes p count its openings of the store, and keep it open as
// long as calls keep coming. After each call of arriving, the next opening
// is held back until calls are waiting for the store, so that a burst
// has arrived before the store opens.
func countOpens(p *Pipeline, calls int) (opens *atomic.Int32, arriving func()) {
	opens = new(atomic.Int32)
	var burst atomic.Bool
	h := &p.store
	h.hold = time.Hour
	allWaiting := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.waiting == calls
	}
	h.open = func(ctx context.Context, dir string) (*state.Store, error) {
		opens.Add(1)
		if burst.Swap(false) {
			for !allWaiting() {
				time.Sleep(time.Millisecond)
			}
		}
		return state.Open(ctx, dir)
	}
	return opens, func() { burst.Store(true) }
}

// A store open for its hold is closed after the call using it though
// others wait, so that other helpers get their turn: with no hold, each
// call of a burst opens it anew, and each is recorded.
func TestStoreClosedAfterItsHold(t *testing.T) {
	const calls = 10
	p, dir, opens, arriving := countingPipe(t, calls)
	p.store.hold = 0
	arriving()
	decideAtOnce(t, p, "h", calls)
	if opens.Load() != calls {
		t.Errorf("%d calls, each past the hold, opened the store %d times", calls, opens.Load())
	}
	ids := auditIDs(t, dir)
	for i := range calls {
		if n := ids[fmt.Sprint("h", i)]; n != 1 {
			t.Errorf("call %d is %d times in the audit log", i, n)
		}
	}
}

// countingPipe is a pipeline with memory in a new directory, answering
// allow-once, that counts its openings of the store (countOpens).
func countingPipe(t *testing.T, calls int) (p *Pipeline, dir string, opens *atomic.Int32, arriving func()) {
	dir = t.TempDir()
	canned, _ := answers.Single("allow-once", "")
	p = pipe(Config{Memory: &Memory{Dir: dir, SessionIdle: time.Hour, Breaker: state.DefaultBreaker}, Answers: canned})
	opens, arriving = countOpens(p, calls)
	return p, dir, opens, arriving
}

// decideAtOnce decides calls requests at once on p, each of its own
// session, the i-th with id prefix+i, each to be allowed.
func decideAtOnce(t *testing.T, p *Pipeline, prefix string, calls int) {
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			out := p.DecideRequest(context.Background(), toolReq(t, fmt.Sprint(prefix, i), "write_file", fmt.Sprint("s", i)))
			if out.Err != nil || out.Decision == nil || out.Decision.Decision != decision.Allow {
				t.Errorf("call %d: %+v, %v", i, out.Decision, out.Err)
			}
		})
	}
	wg.Wait()
}

// openFree opens the store at once, as another process would, and closes
// it: it fails when anyone holds the store.
func openFree(t *testing.T, dir, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s, err := state.Open(ctx, dir)
	if err != nil {
		t.Fatalf("%s, the store could not be opened: %v", when, err)
	}
	s.Close()
}

// auditIDs counts the audit log's entries by request id.
func auditIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	entries, err := state.ReadAudit(dir, func(state.AuditEntry) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, e := range entries {
		if e.ID != nil {
			ids[*e.ID]++
		}
	}
	return ids
}

// A burst of calls decided with memory opens the store once: every call
// joins the opening of the first, each recorded in its own transaction and
// in the audit log once. Between bursts the store is closed: another
// process opens it, and the next burst opens it again.
func TestBurstOpensStoreOnce(t *testing.T) {
	const calls = 30
	p, dir, opens, arriving := countingPipe(t, calls)
	for burst := range 2 {
		arriving()
		decideAtOnce(t, p, fmt.Sprintf("b%d-", burst), calls)
		if got := opens.Load(); got != int32(burst+1) {
			t.Errorf("after burst %d the store was opened %d times; want once a burst", burst+1, got)
		}
		openFree(t, dir, fmt.Sprintf("after burst %d", burst+1))
	}
	ids := auditIDs(t, dir)
	for burst := range 2 {
		for i := range calls {
			if id := fmt.Sprintf("b%d-%d", burst, i); ids[id] != 1 {
				t.Errorf("call %s is %d times in the audit log; want once", id, ids[id])
			}
		}
	}
}

// Property: many calls at once on one pipeline with memory, each asked
// of a person who answers allow-always, allow-session or deny-once at
// random: every decision is in the audit log exactly once, every
// remembered rule and session approval is in the store, and the store is
// closed afterwards.
func TestConcurrentCallsAllRecorded(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(22, 8))
	const calls = 40
	choices := make([]form.Choice, calls)
	for i := range calls {
		choices[i] = []form.Choice{form.AllowAlways, form.AllowSession, form.DenyOnce}[rng.IntN(3)]
	}
	asker := askingFunc(func(f *form.Form) form.Answer {
		a := f.Defaults()
		var i int
		fmt.Sscanf(f.Req.Tool, "t%d", &i)
		a.Choice = choices[i]
		return a
	})
	p := pipe(Config{Memory: &Memory{Dir: dir, SessionIdle: time.Hour, Breaker: state.DefaultBreaker}}, asker)
	decided := make([]*decision.Decision, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			out := p.DecideRequest(context.Background(), toolReq(t, fmt.Sprint("c", i), fmt.Sprint("t", i), fmt.Sprint("s", i)))
			if out.Decision == nil {
				t.Errorf("call %d: no decision: %v", i, out.Err)
			}
			decided[i] = out.Decision
		})
	}
	wg.Wait()
	openFree(t, dir, "after the calls")
	ids := auditIDs(t, dir)
	s, err := state.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	remembered := map[string]bool{}
	err = s.Do(func(tx *state.Tx) error {
		rules, err := tx.Rules(time.Now())
		for _, r := range rules {
			remembered[r.Tool] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range decided {
		if d == nil {
			continue
		}
		if n := ids[fmt.Sprint("c", i)]; n != 1 {
			t.Errorf("call %d (%+v) is %d times in the audit log; want once", i, d, n)
		}
		sess, _ := state.SessionOf(toolReq(t, "x", fmt.Sprint("t", i), fmt.Sprint("s", i)))
		var approved bool
		if err := s.Do(func(tx *state.Tx) error {
			var err error
			approved, err = tx.SessionApproved(sess, time.Now(), time.Hour)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		always := d.Persist == decision.PersistAlways
		session := d.Persist == decision.PersistSession
		if remembered[fmt.Sprint("t", i)] != always || approved != session {
			t.Errorf("call %d decided %+v: remembered %v, approved for its session %v", i, d, remembered[fmt.Sprint("t", i)], approved)
		}
	}
}

// While a call waits for a person, the calls decided by memory around it
// done, another process opens the store: it is not held while a person
// is asked.
func TestStoreFreeWhileAPersonIsAsked(t *testing.T) {
	dir := t.TempDir()
	mem := &Memory{Dir: dir, SessionIdle: time.Hour, Breaker: state.DefaultBreaker}
	always, _ := answers.Single("allow-always", "")
	if d, _ := decideRaw(t, context.Background(), pipe(Config{Memory: mem, Answers: always}), writeReq); d.Persist != decision.PersistAlways {
		t.Fatalf("remembering the allow: %+v", d)
	}
	const others = 20
	var wg sync.WaitGroup
	freed := make(chan bool, 1)
	asker := askingFunc(func(f *form.Form) form.Answer {
		if f.Req.Tool != "ask" {
			return f.Defaults() // memory should have decided it
		}
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		s, err := state.Open(ctx, dir)
		if err == nil {
			s.Close()
		}
		freed <- err == nil
		return f.Defaults()
	})
	// "ask" is asked of a person; the others are allowed by the remembered
	// rule, each looking it up in the store.
	ask := func(r *decision.Request) []policy.Opinion {
		if r.Tool == "ask" {
			return []policy.Opinion{rulePrompt}
		}
		return nil
	}
	p := pipe(Config{Memory: mem, Policy: []Source{ask}}, asker)
	wg.Add(others)
	for i := range others {
		go func() {
			defer wg.Done()
			out := p.DecideRequest(context.Background(), toolReq(t, fmt.Sprint("o", i), "write_file", "s1"))
			if out.Decision == nil || out.Decision.Frontend != decision.FrontendMemory {
				t.Errorf("call %d: %+v, %v", i, out.Decision, out.Err)
			}
		}()
	}
	out := p.DecideRequest(context.Background(), toolReq(t, "asked", "ask", "s1"))
	if out.Decision == nil || out.Decision.Frontend != decision.FrontendTUI {
		t.Fatalf("the asked call: %+v, %v", out.Decision, out.Err)
	}
	if !<-freed {
		t.Error("the store was held while a person was asked")
	}
}

// A call that gives up waiting for the store at its deadline leaves, and
// the store is closed once nobody is left waiting for it: by the call
// using it, or, when that one left first, by the last to give up.
func TestGivingUpLeavesStoreClosed(t *testing.T) {
	dir := t.TempDir()
	p := pipe(Config{Memory: &Memory{Dir: dir}})
	h := &p.store
	h.hold = time.Hour
	opening, open := make(chan struct{}), make(chan struct{})
	h.open = func(ctx context.Context, dir string) (*state.Store, error) {
		close(opening)
		<-open
		return state.Open(ctx, dir)
	}
	used := make(chan error, 1)
	go func() { used <- p.withStore(context.Background(), func(*state.Store) error { return nil }) }()
	<-opening
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	ran := false
	if err := p.withStore(ctx, func(*state.Store) error { ran = true; return nil }); ran || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call past its deadline waiting for the store: ran %v, %v", ran, err)
	}
	close(open)
	if err := <-used; err != nil {
		t.Fatal(err)
	}
	openFree(t, dir, "the user gone, the other given up")

	// One still waits when the user leaves: the store stays open for it,
	// and is closed when it gives up.
	h.open = state.Open
	h.mu.Lock()
	h.waiting++
	h.mu.Unlock()
	if err := p.withStore(context.Background(), func(*state.Store) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if h.s == nil {
		t.Fatal("the store was closed with a call still waiting for it")
	}
	h.leave(false)
	openFree(t, dir, "the last waiting call given up")
}

// A panic while the store is opened or used gives back the turn and
// closes the store: the pipeline turns the panic into a deny, and the
// next call is not left waiting.
func TestPanicInStoreGivesBackTurn(t *testing.T) {
	dir := t.TempDir()
	p := pipe(Config{Memory: &Memory{Dir: dir}})
	panicking := func(run func()) {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.store.open = func(context.Context, string) (*state.Store, error) { panic("opening") }
	panicking(func() { p.withStore(ctx, func(*state.Store) error { return nil }) })
	p.store.open = state.Open
	panicking(func() { p.withStore(ctx, func(*state.Store) error { panic("using") }) })
	if err := p.withStore(ctx, func(*state.Store) error { return nil }); err != nil {
		t.Errorf("after the panics: %v", err)
	}
	openFree(t, dir, "after the panics")
}

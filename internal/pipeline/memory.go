package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
)

// Memory is where a pipeline remembers across requests, and its limits:
// the state directory, how long a session approval lives unused, the
// denial breaker, and the prompt rate limit.
type Memory struct {
	Dir         string
	SessionIdle time.Duration
	Breaker     state.Breaker
	Prompts     state.Rate
}

// answer decides c's request and returns the decision with the opinions
// that made it. The steps of one request, memory's among them, in order:
//
//  1. The policy's opinions (opinions), then the reviewers (review).
//  2. Under a prompt rate limit, memory first (consult, not prompted): a
//     remembered rule or session approval decides without spending a
//     prompt. Otherwise a prompt is taken (takePrompt) outside any
//     transaction of the store, since its file's lock may have to be
//     waited for, and nothing is waited for with the store open; none left
//     is a deny.
//  3. In one transaction of the store (consult): memory is looked up (again
//     after step 2: another helper may have recorded in between), policy
//     and memory decide (automatic), else a canned answer, recorded in the
//     same transaction, else, a person being needed, the turn to ask is
//     taken if nobody holds it. A request memory decides opens the store
//     once.
//  4. Otherwise the turn is waited for (waitTurn), and, after waiting,
//     memory looked up again (lookAgain): a twin may have been approved for
//     the session, or a rule remembered, meanwhile.
//  5. The frontend chain asks a person (ask).
//  6. Then decide has the decision recorded (record): what the person
//     chose to be remembered saved and the decision counted for the
//     breaker, before the turn is given back, and the audit line appended.
//
// Without Memory only steps 1, 3 (without the store) and 5 run. A nil
// decision comes with ErrNoMatch or ErrBadAnswer; a decision with an error
// is an internal failure.
func (p *Pipeline) answer(ctx context.Context, c *call) (*decision.Decision, []policy.Opinion, error) {
	req := c.req
	if ctx.Err() != nil {
		return ended(ctx, req, decision.FrontendNone), nil, nil
	}
	ops := opinions(p.c.Policy, req)
	if d, all := p.review(ctx, c, ops); d != nil {
		return d, all, nil
	}
	if m := p.c.Memory; m != nil && (m.Prompts.Session > 0 || m.Prompts.User > 0) {
		d, all, err := p.consult(ctx, c, ops, false)
		if d == nil && err == nil {
			d = p.takePrompt(ctx, c)
		}
		if d != nil || err != nil {
			return d, all, err
		}
	}
	d, ops, err := p.consult(ctx, c, ops, true)
	if d != nil || err != nil {
		return d, ops, err
	}
	queued, err := p.waitTurn(ctx, c)
	if err != nil {
		return ended(ctx, req, decision.FrontendNone), ops, nil
	}
	if queued {
		if more := p.lookAgain(ctx, c); len(more) > 0 {
			ops = append(ops, more...)
			if d := decide(req, ops); d != nil {
				p.sayWhy(d, ops)
				return d, ops, nil
			}
		}
	}
	d, err = p.ask(ctx, c)
	return d, ops, err
}

// call is one valid request on its way through the pipeline.
type call struct {
	req *decision.Request
	// raw is the request as sent, whose digest is req.SHA256.
	raw   []byte
	start time.Time
	// memory says the state store could be used when first opened for
	// the request; storeFailed that it could not, so it is not tried
	// again and its problem is said once.
	memory, storeFailed bool
	// recorded says the store's part of the record step was done (or
	// tried) before anyone was asked.
	recorded bool
	// notRemembered says why a decision to be remembered was not.
	notRemembered string
	// saved is when each remembered rule consulted (by opinion name) was
	// saved.
	saved map[string]time.Time
	// form is the form a person is asked with.
	form *form.Form
	// approver is the team approver who answered (form.Answer.Approver),
	// ignored the answers not taken (form.Answer.Ignored).
	approver string
	ignored  []string
	// asked is how long the frontends took, nil when none was asked.
	asked *time.Duration
	// release gives back the turn to ask a person, when held.
	release func()
	// notify starts the notification of the question (notifying).
	notify func(decision.Frontend)
	// sess is the request's binding for session memory, once computed.
	sess           state.Session
	sessOK, sessIn bool
}

// session is c's request's binding for session memory, computed once:
// its arguments digested once per request. False without a session.
func (c *call) session() (state.Session, bool) {
	if !c.sessIn {
		c.sess, c.sessOK = state.SessionOf(c.req)
		c.sessIn = true
	}
	return c.sess, c.sessOK
}

// releaseTurn gives back the turn to ask a person, if held.
func (c *call) releaseTurn() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// sayWhy names, with Verbose, the rules or memory entries whose opinion
// made the decision d.
func (p *Pipeline) sayWhy(d *decision.Decision, ops []policy.Opinion) {
	if !p.c.Verbose {
		return
	}
	_, winners := policy.Combine(ops)
	names := make([]string, len(winners))
	for i, w := range winners {
		names[i] = w.Name
	}
	p.c.Warn(fmt.Sprintf("%s by %s: %s", d.Decision, d.Frontend, strings.Join(names, ", ")))
}

// consult decides c's request in one transaction of the store by the
// opinions ops and memory's (automatic), and, when prompted (a prompt is
// taken), by a canned answer or by taking the turn to ask a person. When
// memory cannot be consulted (the store unsafe, corrupt or locked past the
// wait) it says so and decides without it: a remembered deny may then go
// unseen, so no automatic allow stands (withoutMemory). Without Memory it
// decides by ops alone.
func (p *Pipeline) consult(ctx context.Context, c *call, ops []policy.Opinion, prompted bool) (d *decision.Decision, all []policy.Opinion, err error) {
	if p.c.Memory == nil {
		d, err, _ = p.automatic(c, nil, ops, prompted)
		return d, ops, err
	}
	if !c.storeFailed {
		looked := false
		serr := p.inStore(ctx, c, func(tx *state.Tx, mem []policy.Opinion) error {
			looked, c.memory = true, true
			all = append(slices.Clip(ops), mem...)
			var serr error
			d, err, serr = p.automatic(c, tx, all, prompted)
			return serr
		})
		switch {
		case serr == nil:
			return d, all, err
		case looked && d != nil && c.recorded:
			d.Stop = false
			p.notRemembered(c, d, serr, false)
			return d, all, err
		case looked:
			p.c.Warn(fmt.Sprintf("state store: %v", serr))
			return d, all, err
		}
		p.c.Warn(fmt.Sprintf("state store: %v; deciding without memory: automatic allows become a question", serr))
		c.memory, c.storeFailed = false, true
	}
	if ctx.Err() != nil {
		return ended(ctx, c.req, decision.FrontendNone), ops, nil
	}
	all = withoutMemory(ops)
	d, err, _ = p.automatic(c, nil, all, prompted)
	return d, all, err
}

// inStore runs fn in one transaction of the store, with the opinions of
// what it remembers of c's request (memoryOpinions).
func (p *Pipeline) inStore(ctx context.Context, c *call, fn func(*state.Tx, []policy.Opinion) error) error {
	return p.withStore(ctx, func(s *state.Store) error {
		return s.Do(func(tx *state.Tx) error {
			mem, err := p.memoryOpinions(tx, c)
			if err != nil {
				return err
			}
			return fn(tx, mem)
		})
	})
}

// withoutMemory is ops as they stand when memory cannot be consulted: a
// remembered deny of the request may be unseen, so no allow stands by
// itself; each becomes a question. Denies stand.
func withoutMemory(ops []policy.Opinion) []policy.Opinion {
	out := slices.Clone(ops)
	for i := range out {
		if out[i].Verdict == policy.Allow {
			out[i].Verdict = policy.Prompt
		}
	}
	return out
}

// automatic decides c's request without a person when anything can: the
// opinions ops (policy and memory), then, once prompted (the prompt
// taken), a canned answer. tx is the store's transaction, nil without a
// usable store. storeErr is a failure to record a canned answer in tx.
func (p *Pipeline) automatic(c *call, tx *state.Tx, ops []policy.Opinion, prompted bool) (d *decision.Decision, err, storeErr error) {
	req := c.req
	if d := decide(req, ops); d != nil {
		p.sayWhy(d, ops)
		p.sayMemoryOverCanned(c, d, ops)
		return d, nil, nil
	}
	if !prompted {
		return nil, nil, nil
	}
	// A mode of the annotation policy that asks about a tool asks each
	// time: no allow-session then. The store still counts the prompt,
	// queues it and records it.
	noSession := slices.ContainsFunc(ops, func(o policy.Opinion) bool { return o.NoSession })
	opts := form.Options{SessionMemory: c.memory && !noSession, Commands: formCommands(req, ops), Sent: c.raw, Opened: c.opened}
	if p.c.RuleNote != nil {
		opts.RuleNote = func(a form.Answer) string { return p.c.RuleNote(req, a) }
	}
	f := form.New(req, opts)
	c.form = f
	if p.c.Answers != nil {
		if e, ok := p.c.Answers.Match(req); ok {
			if e.Message != "" && e.Choice.IsAllow() {
				p.c.Warn("the message of a canned allow is ignored")
			}
			d, err := f.Decide(e.Answer(f), decision.FrontendAnswers, p.c.Now())
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadAnswer, err), nil
			}
			if tx != nil {
				c.recorded = true
				storeErr = p.remember(tx, c, &d, true)
			}
			return &d, nil, storeErr
		}
	}
	if p.c.Strict {
		return nil, ErrNoMatch, nil
	}
	// A person is to be asked. The turn taken now, with the store open,
	// comes after every record of the helper that had it before: nothing
	// to look up again after it.
	if tx != nil && c.memory {
		if release, ok, _ := state.TryTurn(p.c.Memory.Dir); ok {
			c.release = release
		}
	}
	return nil, nil, nil
}

// memoryOpinions are the opinions of what tx remembers of c's request:
// covering rules, and an approval for the session, which counts as used
// unless tx is read-only.
func (p *Pipeline) memoryOpinions(tx *state.Tx, c *call) ([]policy.Opinion, error) {
	req := c.req
	now := p.c.Now()
	rules, err := tx.Covering(req, now)
	if err != nil {
		return nil, err
	}
	var ops []policy.Opinion
	for _, r := range rules {
		name := fmt.Sprintf("remembered rule %d", r.ID)
		ops = append(ops, ruleOpinion(r, "memory", name))
		if c.saved == nil {
			c.saved = map[string]time.Time{}
		}
		c.saved[name] = time.Unix(r.Created, 0)
	}
	sess, ok := c.session()
	if !ok {
		return ops, nil
	}
	ok, err = tx.SessionApproved(sess, now, p.c.Memory.SessionIdle)
	if ok {
		ops = append(ops, policy.Opinion{Verdict: policy.Allow, By: decision.FrontendMemory, Cause: decision.CauseSession, Source: "memory",
			Name: "session " + req.SessionID})
	}
	return ops, err
}

// takePrompt takes a prompt of the rate limit for c's request, which may
// then reach a canned answer or a person, and returns nil; or the deny
// when none is left, or when ctx ended while its file's lock was waited
// for. A rate limit that cannot be consulted is said and lifted: a person
// or a canned answer still decides.
func (p *Pipeline) takePrompt(ctx context.Context, c *call) *decision.Decision {
	ok, err := state.TakePrompt(ctx, p.c.Memory.Dir, c.req.SessionID, p.c.Now(), p.c.Memory.Prompts)
	switch {
	case ctx.Err() != nil:
		return ended(ctx, c.req, decision.FrontendNone)
	case err != nil:
		p.c.Warn(fmt.Sprintf("state: %v; no prompt rate limit", err))
	case !ok:
		p.c.Warn("too many prompts in the last minute; denied without asking")
		return denied(c.req, decision.CauseRateLimit, decision.FrontendNone)
	}
	return nil
}

// waitTurn waits, unless c holds the turn already, until no other helper
// of the user is asking a person, saying so on the diagnostics; queued
// then says that the store must be consulted again. It fails only when
// ctx ends first. Without a usable store there is no queue.
func (p *Pipeline) waitTurn(ctx context.Context, c *call) (queued bool, err error) {
	if !c.memory || c.release != nil {
		return false, nil
	}
	release, err := state.WaitTurn(ctx, p.c.Memory.Dir, func() {
		p.c.Warn("waiting for another prompt to be answered")
	})
	switch {
	case err != nil && ctx.Err() == nil:
		p.c.Warn(fmt.Sprintf("prompt queue: %v; asking without waiting", err))
		return false, nil
	case err != nil:
		return false, err
	}
	c.release = release
	return true, nil
}

// lookAgain returns the opinions of the remembered rules and session
// approvals covering c's request, looked up again after waiting for the
// turn (which only a request with a usable store waits for). The store is
// open only for the look-up, never while a person is asked.
func (p *Pipeline) lookAgain(ctx context.Context, c *call) []policy.Opinion {
	var ops []policy.Opinion
	err := p.inStore(ctx, c, func(_ *state.Tx, mem []policy.Opinion) error {
		ops = mem
		return nil
	})
	if err != nil {
		p.c.Warn(fmt.Sprintf("state store: %v; deciding without memory", err))
		c.memory, c.storeFailed = false, true
		return nil
	}
	return ops
}

// record remembers what a person chose to be remembered, an always-rule
// or an approval for the session, and counts the decision for the denial
// breaker, which marks the decision that trips it with stop: in one open
// and one transaction, unless it was done before anyone was asked (a
// canned answer). Then it appends the decision to the audit log, saying
// when what was to be remembered was not. A decision made with an
// internal failure (ok false) is only logged. ctx bounds every wait.
func (p *Pipeline) record(ctx context.Context, c *call, d *decision.Decision, ok bool, ops []policy.Opinion) {
	if p.c.Memory == nil {
		return
	}
	switch {
	case c.recorded:
	case c.storeFailed:
		p.notRemembered(c, d, errors.New("the state store could not be used"), false)
	case p.remembers(c, d, ok):
		err := p.withStore(ctx, func(s *state.Store) error {
			return s.Do(func(tx *state.Tx) error { return p.remember(tx, c, d, ok) })
		})
		if err != nil {
			d.Stop = false
			p.notRemembered(c, d, fmt.Errorf("state store: %w", err), p.keepCount(ctx, c, d, err))
		}
	}
	e := auditEntry(c, d, ops, p.c.Now())
	e.NotRemembered = c.notRemembered
	if err := p.appendAudit(ctx, e); err != nil {
		p.c.Warn(fmt.Sprintf("audit log: %v", err))
	}
	p.recordTeam(ctx, e, d, ops)
}

// appendAudit appends e to the audit log. The requests of one process
// take turns for it in memory first, as for the store: racing for the
// log's file lock they would wake each other in the kernel. One whose ctx
// ends while waiting still appends, as AppendAudit bounds its own waits
// and says what became of the line.
func (p *Pipeline) appendAudit(ctx context.Context, e state.AuditEntry) error {
	select {
	case p.audit <- struct{}{}:
		defer func() { <-p.audit }()
	case <-ctx.Done():
	}
	return state.AppendAudit(ctx, p.c.Memory.Dir, e)
}

// remembers says whether decision d of c's request is recorded in the
// store: a decision by a person or a canned answer, or a deny by timeout,
// cancellation or a reviewer (counted for the breaker only), made without an internal failure (ok) and with memory
// usable.
func (p *Pipeline) remembers(c *call, d *decision.Decision, ok bool) bool {
	counted := d.Cause == decision.CauseUser ||
		d.Decision == decision.Deny && (d.Cause == decision.CauseTimeout || d.Cause == decision.CauseCancelled || d.Cause == decision.CauseReviewer)
	return ok && c.memory && counted
}

// remember records decision d of c's request in tx, when it is recorded
// at all (remembers).
func (p *Pipeline) remember(tx *state.Tx, c *call, d *decision.Decision, ok bool) error {
	if !p.remembers(c, d, ok) {
		return nil
	}
	req := c.req
	now := p.c.Now()
	switch {
	case d.Cause != decision.CauseUser:
	case d.Frontend == decision.FrontendTeam:
		// A team's answers are remembered by the team, signed by their
		// approver (protocol section 11), never here: a rule kept here
		// would outlive the approver's removal from [team] approvers.
	case d.Persist == decision.PersistSession:
		sess, ok := c.session()
		if !ok {
			return fmt.Errorf("a request without session_id cannot be approved for its session")
		}
		if err := tx.ApproveSession(sess, now); err != nil {
			return err
		}
	case d.Persist == decision.PersistAlways:
		r, ok := state.RuleOf(req, *d, now)
		if !ok {
			return fmt.Errorf("the decision's rule does not fit its request")
		}
		if _, err := tx.Remember(r); err != nil {
			return err
		}
	}
	trips, err := tx.FoldLateCounts(p.c.Memory.Breaker)
	if err != nil {
		return err
	}
	if trips > 0 {
		p.c.Warn(fmt.Sprintf("%d decision(s) counted late, after their store was freed, tripped the denial breaker; they were answered without stop, and the breaker's counts start again", trips))
	}
	tripped, err := tx.CountDecision(req.SessionID, d.Decision == decision.Deny, p.c.Memory.Breaker)
	d.Stop = tripped
	return err
}

// keepCount keeps decision d's count for the breaker, to be folded in
// by the next transaction that counts one, when its store could not be
// opened in time (err), and says whether it was kept; ctx bounds the wait.
func (p *Pipeline) keepCount(ctx context.Context, c *call, d *decision.Decision, err error) bool {
	if !errors.Is(err, state.ErrLocked) && !errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return state.KeepCount(ctx, p.c.Memory.Dir, c.req.SessionID, d.Decision == decision.Deny) == nil
}

// notRemembered says that recording decision d of c's request failed
// (why), and, when d was to be remembered (for the session or always),
// notes it for the audit log: the decision itself still says so. kept
// says its count was kept to be counted when the store frees.
func (p *Pipeline) notRemembered(c *call, d *decision.Decision, why error, kept bool) {
	if d.Cause != decision.CauseUser || d.Persist == decision.PersistOnce {
		switch {
		case kept:
			p.c.Warn(fmt.Sprintf("%v; the decision is counted when the store frees", why))
		case c.memory:
			p.c.Warn(fmt.Sprintf("%v; the decision is not counted", why))
		}
		return
	}
	c.notRemembered = why.Error()
	counted := ""
	if kept {
		counted = ", but counted when the store frees"
	}
	p.c.Warn(fmt.Sprintf("%v; the decision (%s %s) is not remembered%s", why, d.Decision, d.Persist, counted))
}

// sayMemoryOverCanned says, in one line, that memory decided c's request
// although a canned answer would have answered it: which remembered
// rules or approvals, and when they were saved.
func (p *Pipeline) sayMemoryOverCanned(c *call, d *decision.Decision, ops []policy.Opinion) {
	if p.c.Answers == nil {
		return
	}
	if _, ok := p.c.Answers.Match(c.req); !ok {
		return
	}
	_, winners := policy.Combine(ops)
	var by []string
	for _, w := range winners {
		if w.Source != "memory" {
			continue
		}
		name := form.Line(w.Name)
		if at, ok := c.saved[w.Name]; ok {
			name += " (saved " + at.UTC().Format(time.RFC3339) + ")"
		}
		by = append(by, name)
	}
	if len(by) > 0 {
		p.c.Warn(fmt.Sprintf("%s decided %s before the canned answer, which was not used (askperm rules list; --no-remember to answer only as told)",
			strings.Join(by, ", "), d.Decision))
	}
}

// withStore runs fn on the state store. The requests of one process (the
// gate's and `askperm mcp`'s calls) share one open store while any of them
// needs it: the first opens it, those that ask while it is open join, and
// each runs fn in turn, its own transaction, its errors its own. The last
// to leave closes it, and so does any once it has been open for maxHold:
// its lock shuts out every other helper of the user, so it is never kept
// for the process's lifetime, nor while a person is asked (no call is in
// withStore then). Every wait, for the turn or for the lock, is bounded by
// the waiting request's ctx.
func (p *Pipeline) withStore(ctx context.Context, fn func(*state.Store) error) error {
	h := &p.store
	h.mu.Lock()
	h.waiting++
	h.mu.Unlock()
	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		h.leave(false)
		return fmt.Errorf("%s: waiting for this process's other requests: %w", state.DBName, ctx.Err())
	}
	defer h.leave(true) // also after a panic, which the pipeline turns into a deny
	if h.s == nil {
		s, err := h.open(ctx, p.c.Memory.Dir)
		if err != nil {
			return err
		}
		h.s, h.opened = s, time.Now()
	}
	return fn(h.s)
}

// maxHold bounds how long one process keeps the store open while its
// requests keep coming, so that other helpers of the user, waiting for
// its lock, get their turn between.
const maxHold = 20 * time.Millisecond

// storeHolder is one process's state store, open while its requests use
// it (withStore). The turn is one slot: whoever holds it alone opens,
// uses or closes the store, so s changes only in the turn, and bbolt's
// own writer lock, which no deadline reaches, is never waited for.
type storeHolder struct {
	turn chan struct{}
	// mu guards waiting, the requests in withStore, and makes a leaving
	// request's check of it one step with giving back the turn.
	mu      sync.Mutex
	waiting int
	s       *state.Store
	opened  time.Time
	// open is state.Open; hold is maxHold. Tests change them.
	open func(context.Context, string) (*state.Store, error)
	hold time.Duration
}

func newStoreHolder() storeHolder {
	return storeHolder{turn: make(chan struct{}, 1), open: state.Open, hold: maxHold}
}

// leave ends a request's use of the store, giving back the turn when it
// holds it (turn). The store is closed when no request is left waiting
// for it, or when it has been open for hold. A request that gave up
// waiting and was the last closes it too, taking the free turn: a turn
// held by another means that one has yet to leave, and will close it.
func (h *storeHolder) leave(turn bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting--
	if !turn {
		if h.waiting > 0 {
			return
		}
		select {
		case h.turn <- struct{}{}:
		default:
			return
		}
	}
	if h.s != nil && (h.waiting == 0 || time.Since(h.opened) >= h.hold) {
		// Nothing was written outside a committed transaction: closing
		// loses nothing, and its error leaves the lock released anyway.
		_ = h.s.Close()
		h.s = nil
	}
	<-h.turn
}

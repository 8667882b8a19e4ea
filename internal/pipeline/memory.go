package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
)

// Memory is where a pipeline remembers across requests, and its limits:
// the state directory, how long a session approval lives unused, the
// denial breaker, and how many prompts a session may have in a minute
// (zero: no limit).
type Memory struct {
	Dir              string
	SessionIdle      time.Duration
	Breaker          state.Breaker
	PromptsPerMinute int
}

// recordWait bounds recording a decision whose request's context has
// ended: the decision is made, and remembering it must not wait long.
const recordWait = 2 * time.Second

// beforeAsking is everything before a person is asked, in one open of
// the store and one transaction, committed only when it wrote: the look-up
// of remembered rules and session approvals, the decision by policy and
// memory, the rate limit, a canned answer and its record (remembered, and
// counted for the breaker), and, when a person is to be asked, the turn
// taken while the store is still open if nobody else is asking. It
// returns a nil decision and a nil error when a person is to be asked
// (c.form). Without a usable store it decides as if nothing were
// remembered.
func (p *Pipeline) beforeAsking(ctx context.Context, c *call, ops []policy.Opinion) (*decision.Decision, []policy.Opinion, error) {
	if p.c.Memory == nil {
		d, ops, err, _ := p.automatic(c, nil, ops)
		return d, ops, err
	}
	var d *decision.Decision
	var err error
	looked := false
	serr := p.withStore(ctx, func(s *state.Store) error {
		return s.Do(func(tx *state.Tx) error {
			mem, err0 := p.memoryOpinions(tx, c)
			if err0 != nil {
				return err0
			}
			looked, c.memory = true, true
			var serr error
			d, ops, err, serr = p.automatic(c, tx, append(slices.Clip(ops), mem...))
			return serr
		})
	})
	switch {
	case serr == nil:
	case !looked:
		p.c.Warn(fmt.Sprintf("state store: %v; deciding without memory", serr))
		c.memory, c.storeFailed = false, true
		d, ops, err, _ = p.automatic(c, nil, ops)
	case d != nil && c.recorded:
		d.Stop = false
		p.c.Warn(fmt.Sprintf("state store: %v; the decision is not remembered", serr))
	default:
		p.c.Warn(fmt.Sprintf("state store: %v", serr))
	}
	return d, ops, err
}

// automatic decides c's request without a person when anything can: the
// opinions ops (policy and memory), the rate limit, a canned answer. tx is
// the store's transaction, nil without a usable store. storeErr is a
// failure to record a canned answer in tx.
func (p *Pipeline) automatic(c *call, tx *state.Tx, ops []policy.Opinion) (d *decision.Decision, _ []policy.Opinion, err, storeErr error) {
	req := c.req
	if d := decide(req, ops); d != nil {
		p.sayWhy(d, ops)
		return d, ops, nil, nil
	}
	// A mode of the annotation policy that asks about a tool asks each
	// time: no allow-session then. The store still counts the prompt,
	// queues it and records it.
	noSession := slices.ContainsFunc(ops, func(o policy.Opinion) bool { return o.NoSession })
	if !p.takePrompt(tx, c) {
		p.c.Warn("too many prompts in the last minute; denied without asking")
		return denied(req, decision.CauseRateLimit, decision.FrontendNone), ops, nil, nil
	}
	opts := form.Options{SessionMemory: c.memory && !noSession}
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
				return nil, ops, fmt.Errorf("%w: %w", ErrBadAnswer, err), nil
			}
			if tx != nil {
				c.recorded = true
				storeErr = p.remember(tx, c, &d, true)
			}
			return &d, ops, nil, storeErr
		}
	}
	if p.c.Strict {
		return nil, ops, ErrNoMatch, nil
	}
	// A person is to be asked. The turn taken now, with the store open,
	// comes after every record of the helper that had it before: nothing
	// to look up again after it.
	if tx != nil && c.memory {
		if release, ok, _ := state.TryTurn(p.c.Memory.Dir); ok {
			c.release = release
		}
	}
	return nil, ops, nil, nil
}

// rememberedIf returns the opinions of the remembered rules and session
// approvals covering c's request, looked up again after waiting for the
// turn (queued). The store is open only for the look-up, never while a person is
// asked.
func (p *Pipeline) rememberedIf(ctx context.Context, c *call, queued bool) []policy.Opinion {
	if !queued || p.c.Memory == nil || c.storeFailed {
		return nil
	}
	var ops []policy.Opinion
	err := p.withStore(ctx, func(s *state.Store) error {
		return s.Do(func(tx *state.Tx) error {
			var err error
			ops, err = p.memoryOpinions(tx, c)
			return err
		})
	})
	if err != nil {
		p.c.Warn(fmt.Sprintf("state store: %v; deciding without memory", err))
		c.storeFailed = true
		return nil
	}
	return ops
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
		v := policy.Allow
		if r.Decision == decision.Deny {
			v = policy.Deny
		}
		ops = append(ops, policy.Opinion{Verdict: v, By: decision.FrontendMemory, Cause: decision.CauseRule, Source: "memory",
			Name: fmt.Sprintf("remembered rule %d", r.ID)})
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

// record remembers what a person chose to be remembered, an always-rule
// or an approval for the session, and counts the decision for the denial
// breaker, which marks the decision that trips it with stop: in one open
// and one transaction, unless it was done before anyone was asked (a
// canned answer). Then it appends the decision to the audit log. A
// decision made with an internal failure (ok false) is only logged.
func (p *Pipeline) record(ctx context.Context, c *call, d *decision.Decision, ok bool, ops []policy.Opinion) {
	if p.c.Memory == nil || c.storeFailed {
		return
	}
	if !c.recorded && p.remembers(c, d, ok) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
		defer cancel()
		err := p.withStore(ctx, func(s *state.Store) error {
			return s.Do(func(tx *state.Tx) error { return p.remember(tx, c, d, ok) })
		})
		if err != nil {
			d.Stop = false
			p.c.Warn(fmt.Sprintf("state store: %v; the decision is not remembered", err))
		}
	}
	if err := state.AppendAudit(p.c.Memory.Dir, auditEntry(c, d, ops, p.c.Now())); err != nil {
		p.c.Warn(fmt.Sprintf("audit log: %v", err))
	}
}

// remembers says whether decision d of c's request is recorded in the
// store: a decision by a person or a canned answer, or a deny by timeout
// or cancellation, made without an internal failure (ok) and with memory
// usable.
func (p *Pipeline) remembers(c *call, d *decision.Decision, ok bool) bool {
	counted := d.Cause == decision.CauseUser ||
		d.Decision == decision.Deny && (d.Cause == decision.CauseTimeout || d.Cause == decision.CauseCancelled)
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
	tripped, err := tx.CountDecision(req.SessionID, d.Decision == decision.Deny, p.c.Memory.Breaker)
	d.Stop = tripped
	return err
}

// takePrompt reports whether c's request may reach a canned answer or a
// person: the prompts of its session (or of the user's requests without
// one) are limited per minute. Without a usable store (tx nil) there is no
// limit. The count is kept beside the store (state.PromptsFile), so that
// a request for a person leaves the store's transaction unwritten.
func (p *Pipeline) takePrompt(tx *state.Tx, c *call) bool {
	if tx == nil || !c.memory || p.c.Memory.PromptsPerMinute <= 0 {
		return true
	}
	ok, err := state.TakePrompt(p.c.Memory.Dir, c.req.SessionID, p.c.Now(), p.c.Memory.PromptsPerMinute)
	if err != nil {
		p.c.Warn(fmt.Sprintf("state: %v; no prompt rate limit", err))
	}
	return ok || err != nil
}

func (p *Pipeline) withStore(ctx context.Context, fn func(*state.Store) error) error {
	s, err := state.Open(ctx, p.c.Memory.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
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

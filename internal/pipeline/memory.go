package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/askperm/askperm/decision"
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

// remembered returns the opinions of the remembered rules and session
// approvals covering c's request, and notes whether the store could be
// used. The store is open only for the look-up, never while a person is
// asked.
func (p *Pipeline) remembered(ctx context.Context, c *call) []policy.Opinion {
	if p.c.Memory == nil || c.storeFailed {
		return nil
	}
	req := c.req
	var ops []policy.Opinion
	err := p.withStore(ctx, func(s *state.Store) error {
		var err error
		ops, err = p.memoryOpinions(s, req, false)
		return err
	})
	if err != nil {
		p.c.Warn(fmt.Sprintf("state store: %v; deciding without memory", err))
		c.storeFailed = true
		return nil
	}
	c.memory = true
	return ops
}

// memoryOpinions are the opinions of what s remembers of req: covering
// rules, and an approval for the session, which counts as used unless
// peek.
func (p *Pipeline) memoryOpinions(s *state.Store, req *decision.Request, peek bool) ([]policy.Opinion, error) {
	now := p.c.Now()
	rules, err := s.Covering(req, now)
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
	approved := s.SessionApproved
	if peek {
		approved = s.PeekSession
	}
	ok, err := approved(req, now, p.c.Memory.SessionIdle)
	if ok {
		ops = append(ops, policy.Opinion{Verdict: policy.Allow, By: decision.FrontendMemory, Cause: decision.CauseSession, Source: "memory",
			Name: "session " + req.SessionID})
	}
	return ops, err
}

// record remembers what a person (or a canned answer) chose to be
// remembered, an always-rule or an approval for the session; counts the
// decision for the denial breaker, which marks the decision that trips it
// with stop; and appends the decision to the audit log. A decision made
// with an internal failure (ok false) is only logged.
func (p *Pipeline) record(ctx context.Context, c *call, d *decision.Decision, ok bool, ops []policy.Opinion) {
	if p.c.Memory == nil || c.storeFailed {
		return
	}
	counted := d.Cause == decision.CauseUser ||
		d.Decision == decision.Deny && (d.Cause == decision.CauseTimeout || d.Cause == decision.CauseCancelled)
	if ok && c.memory && counted {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
		defer cancel()
		if err := p.withStore(ctx, func(s *state.Store) error { return p.remember(s, c.req, d) }); err != nil {
			p.c.Warn(fmt.Sprintf("state store: %v; the decision is not remembered", err))
		}
	}
	if err := state.AppendAudit(p.c.Memory.Dir, auditEntry(c, d, ops, p.c.Now())); err != nil {
		p.c.Warn(fmt.Sprintf("audit log: %v", err))
	}
}

func (p *Pipeline) remember(s *state.Store, req *decision.Request, d *decision.Decision) error {
	now := p.c.Now()
	switch {
	case d.Cause != decision.CauseUser:
	case d.Persist == decision.PersistSession:
		if err := s.ApproveSession(req, now); err != nil {
			return err
		}
	case d.Persist == decision.PersistAlways:
		r, ok := state.RuleOf(req, *d, now)
		if !ok {
			return fmt.Errorf("the decision's rule does not fit its request")
		}
		if _, err := s.Remember(r); err != nil {
			return err
		}
	}
	tripped, err := s.CountDecision(req.SessionID, d.Decision == decision.Deny, p.c.Memory.Breaker)
	d.Stop = tripped
	return err
}

// takePrompt reports whether req may reach a canned answer or a person:
// the prompts of its session (or of the user's requests without one) are
// limited per minute. Without a usable store there is no limit.
func (p *Pipeline) takePrompt(ctx context.Context, c *call) bool {
	if !c.memory || p.c.Memory.PromptsPerMinute <= 0 {
		return true
	}
	req := c.req
	ok := true
	err := p.withStore(ctx, func(s *state.Store) error {
		var err error
		ok, err = s.TakePrompt(req.SessionID, p.c.Now(), p.c.Memory.PromptsPerMinute)
		return err
	})
	if err != nil {
		p.c.Warn(fmt.Sprintf("state store: %v; no prompt rate limit", err))
		return true
	}
	return ok
}

func (p *Pipeline) withStore(ctx context.Context, fn func(*state.Store) error) error {
	s, err := state.Open(ctx, p.c.Memory.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// waitTurn waits until no other helper of the user is asking a person,
// saying so on the diagnostics; it fails only when ctx ends first. Without
// a usable store there is no queue.
func (p *Pipeline) waitTurn(ctx context.Context, c *call) (release func(), err error) {
	if !c.memory {
		return func() {}, nil
	}
	release, err = state.WaitTurn(ctx, p.c.Memory.Dir, func() {
		p.c.Warn("waiting for another prompt to be answered")
	})
	if err != nil && ctx.Err() == nil {
		p.c.Warn(fmt.Sprintf("prompt queue: %v; asking without waiting", err))
		return func() {}, nil
	}
	return release, err
}

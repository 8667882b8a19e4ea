package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// Memory is where a pipeline remembers across requests: the state
// directory and how long a session approval lives unused.
type Memory struct {
	Dir         string
	SessionIdle time.Duration
}

// recordWait bounds recording a decision whose request's context has
// ended: the decision is made, and remembering it must not wait long.
const recordWait = 2 * time.Second

// remembered returns the opinions of the remembered rules and session
// approvals covering req, and whether the store could be used. The store
// is open only for the look-up, never while a person is asked.
func (p *Pipeline) remembered(ctx context.Context, req *decision.Request) ([]Opinion, bool) {
	if p.c.Memory == nil {
		return nil, false
	}
	var ops []Opinion
	err := p.withStore(ctx, func(s *state.Store) error {
		now := p.c.Now()
		rules, err := s.Covering(req, now)
		if err != nil {
			return err
		}
		for _, r := range rules {
			v := Allow
			if r.Decision == decision.Deny {
				v = Deny
			}
			ops = append(ops, Opinion{Verdict: v, By: decision.FrontendMemory, Cause: decision.CauseRule, Name: fmt.Sprintf("remembered rule %d", r.ID)})
		}
		ok, err := s.SessionApproved(req, now, p.c.Memory.SessionIdle)
		if ok {
			ops = append(ops, Opinion{Verdict: Allow, By: decision.FrontendMemory, Cause: decision.CauseSession, Name: "session " + req.SessionID})
		}
		return err
	})
	if err != nil {
		p.c.Warn(fmt.Sprintf("state store: %v; deciding without memory", err))
		return nil, false
	}
	return ops, true
}

// remember records what a person (or a canned answer) chose to be
// remembered: an always-rule, or an approval for the session.
func (p *Pipeline) remember(ctx context.Context, req *decision.Request, d decision.Decision) {
	if p.c.Memory == nil || d.Cause != decision.CauseUser || d.Persist == decision.PersistOnce {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
	defer cancel()
	err := p.withStore(ctx, func(s *state.Store) error {
		now := p.c.Now()
		if d.Persist == decision.PersistSession {
			return s.ApproveSession(req, now)
		}
		r, ok := state.RuleOf(req, d, now)
		if !ok {
			return fmt.Errorf("the decision's rule does not fit its request")
		}
		_, err := s.Remember(r)
		return err
	})
	if err != nil {
		p.c.Warn(fmt.Sprintf("state store: %v; the decision is not remembered", err))
	}
}

func (p *Pipeline) withStore(ctx context.Context, fn func(*state.Store) error) error {
	s, err := state.Open(ctx, p.c.Memory.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

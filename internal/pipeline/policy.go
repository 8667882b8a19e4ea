package pipeline

import (
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/policy"
)

// Source gives its opinions of a request, abstentions left out: a rules
// file one per matching rule.
type Source func(*decision.Request) []policy.Opinion

// opinions asks every source, in order.
func opinions(sources []Source, req *decision.Request) []policy.Opinion {
	var ops []policy.Opinion
	for _, s := range sources {
		for _, o := range s(req) {
			if o.Verdict != policy.Abstain {
				ops = append(ops, o)
			}
		}
	}
	return ops
}

// decide is the decision the policy makes by itself, or nil when it says
// prompt. It is persist once; its cause and frontend are the winners'
// when they agree (memory alone, a session approval alone), else those of
// a rules file. A deny carries the first deny's message.
func decide(req *decision.Request, ops []policy.Opinion) *decision.Decision {
	v, winners := policy.Combine(ops)
	if v != policy.Allow && v != policy.Deny {
		return nil
	}
	by, cause := winners[0].By, winners[0].Cause
	for _, w := range winners[1:] {
		if w.By != by || w.Cause != cause {
			by, cause = decision.FrontendRules, decision.CauseRule
		}
	}
	d := decision.Denied(req, cause, by)
	if v == policy.Allow {
		d.Decision = decision.Allow
		d.Grants = req.GrantNames()
		if cause == decision.CauseSession {
			d.Persist = decision.PersistSession
		}
		return &d
	}
	d.Message = winners[0].Message
	return &d
}

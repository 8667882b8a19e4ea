package pipeline

import "github.com/askperm/askperm/decision"

// Verdict is what a source of policy says of a request. Verdicts are
// ordered by strictness: the strictest one given wins.
type Verdict int

// The verdicts; the zero value abstains.
const (
	Abstain Verdict = iota
	Allow
	Prompt
	Deny
)

func (v Verdict) String() string {
	return [...]string{"abstain", "allow", "prompt", "deny"}[v]
}

// Opinion is one source's verdict on a request and who gave it.
type Opinion struct {
	Verdict Verdict
	// By says who decides when this opinion wins: decision.FrontendRules
	// (a rules file) or decision.FrontendMemory (a remembered rule or
	// session approval).
	By decision.Frontend
	// Cause is the decision's cause when this opinion wins:
	// decision.CauseRule, or decision.CauseSession for a session approval.
	Cause decision.Cause
	// Name names the rule or memory entry, for check and the audit log.
	Name string
	// Message is a deny's message.
	Message string
}

// Source gives its opinions of a request, abstentions left out: a rules
// file one per matching rule, memory one per covering entry.
type Source func(*decision.Request) []Opinion

// opinions asks every source, in order.
func opinions(sources []Source, req *decision.Request) []Opinion {
	var ops []Opinion
	for _, s := range sources {
		for _, o := range s(req) {
			if o.Verdict != Abstain {
				ops = append(ops, o)
			}
		}
	}
	return ops
}

// Combine is the verdict of many opinions: any deny wins, then any prompt,
// then any allow; no opinion at all prompts. It returns the winning
// opinions in order.
func Combine(ops []Opinion) (Verdict, []Opinion) {
	v := Prompt
	if len(ops) > 0 {
		v = Abstain
		for _, o := range ops {
			v = max(v, o.Verdict)
		}
	}
	var winners []Opinion
	for _, o := range ops {
		if o.Verdict == v {
			winners = append(winners, o)
		}
	}
	return v, winners
}

// decide is the decision the policy makes by itself, or nil when it says
// prompt. It is persist once; its cause and frontend are the winners'
// when they agree (memory alone, a session approval alone), else those of
// a rules file. A deny carries the first deny's message.
func decide(req *decision.Request, ops []Opinion) *decision.Decision {
	v, winners := Combine(ops)
	if v != Allow && v != Deny {
		return nil
	}
	by, cause := winners[0].By, winners[0].Cause
	for _, w := range winners[1:] {
		if w.By != by || w.Cause != cause {
			by, cause = decision.FrontendRules, decision.CauseRule
		}
	}
	d := decision.Denied(req, cause, by)
	if v == Allow {
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

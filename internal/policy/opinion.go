// Package policy decides before anyone is asked: rules files (rules.toml
// and --rules), the verb policy and the annotation policy each give an
// Opinion of a request, or abstain, and Combine makes one verdict of them
// by strictest wins (deny over prompt over allow; nothing said: prompt).
// Remembered rules and session approvals give opinions of the same kind.
package policy

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
	// Source names the kind of source for askperm check: "rules",
	// "memory", "verbs", "annotations" or "arguments" (arguments that
	// spell a name two ways).
	Source string
	// NoSession says that allow-session must not be offered when the
	// request is asked (the annotation policy's prompt and writes modes).
	NoSession bool
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

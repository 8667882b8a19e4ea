// Package policy decides before anyone is asked: rules files (rules.toml
// and --rules), the verb policy and the annotation policy each give an
// Opinion of a request, or abstain, and Combine makes one verdict of them
// by strictest wins (deny over prompt over allow; nothing said: prompt).
// Remembered rules and session approvals give opinions of the same kind.
package policy

import (
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/match"
)

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
	// Commands say which simple commands of a command line the opinion
	// speaks of, when not all of them (protocol section 10): an allow's
	// one Part is what it covers, the rest being another's to allow
	// (Combine); a deny's or question's are the commands it reaches, for
	// a person to read. None: the whole request.
	Commands []match.Part
}

// Covers reports whether o speaks of command k of command line dim.
func (o Opinion) Covers(dim string, k int) bool {
	for _, p := range o.Commands {
		if p.Dim == dim {
			return k < len(p.Covered) && p.Covered[k]
		}
	}
	return true
}

// partial reports whether o is an allow of only some commands of a line.
func (o Opinion) partial() bool { return o.Verdict == Allow && len(o.Commands) > 0 }

// Combine is the verdict of many opinions: any deny wins, then any prompt,
// then any allow; no opinion at all prompts. It returns the winning
// opinions in order. Allows of only some commands of a command line
// (Opinion.Commands) count as allows when, together, those of that line
// cover every one of its commands (protocol section 10: `go test ./... &&
// git status` allowed by `go test *` and `git status`); otherwise they
// abstain and the line is asked about.
func Combine(ops []Opinion) (Verdict, []Opinion) {
	together := joined(ops)
	verdict := func(o Opinion) Verdict {
		if o.partial() && !together[o.Commands[0].Dim] {
			return Abstain
		}
		return o.Verdict
	}
	v := Abstain
	for _, o := range ops {
		v = max(v, verdict(o))
	}
	if v == Abstain {
		v = Prompt // nothing said, or only allows of some commands
	}
	var winners []Opinion
	for _, o := range ops {
		if verdict(o) == v {
			winners = append(winners, o)
		}
	}
	return v, winners
}

// joined says, by command line, whether the allows of some of its
// commands cover all of them together.
func joined(ops []Opinion) map[string]bool {
	union := map[string][]bool{}
	for _, o := range ops {
		if !o.partial() {
			continue
		}
		p := o.Commands[0]
		u, ok := union[p.Dim]
		if !ok {
			u = make([]bool, len(p.Covered))
			union[p.Dim] = u
		}
		for k, c := range p.Covered {
			if c && k < len(u) {
				u[k] = true
			}
		}
	}
	out := make(map[string]bool, len(union))
	for dim, u := range union {
		out[dim] = match.Part{Covered: u}.Full()
	}
	return out
}

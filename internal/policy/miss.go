package policy

import (
	"fmt"

	"github.com/askperm/askperm/decision"
)

// Miss is a rule that says nothing of a request, and why.
type Miss struct {
	Rule string
	// Why is the first matcher or [[rule.when]] of the rule that does not
	// hold, in words; values are the request's as written, for the
	// caller to render.
	Why string
}

// Misses are the rules of p, in load order, that abstain on req, each
// with the first of its matchers that fails: what askperm explain
// --verbose shows when a request would be a question.
func (p *Policy) Misses(req *decision.Request) []Miss {
	var out []Miss
	args := newLazyArgs(req)
	for i := range p.rules {
		r := p.rule(i)
		if v, _ := r.opinion(req, args); v != Abstain {
			continue
		}
		out = append(out, Miss{Rule: r.Name, Why: r.miss(args)})
	}
	return out
}

// miss is why r abstains on the request of args.
func (r *Rule) miss(args *lazyArgs) string {
	if why := r.match.Miss(args.Cache, r.Verdict == Allow); why != "" {
		return why
	}
	a, ok := args.get()
	if !ok {
		return "when: the arguments are not JSON"
	}
	for _, p := range r.when {
		if !p.holdsFor(args.selected(p.path, a)) {
			return fmt.Sprintf("when: %s %s does not hold", p.path.src, p.op)
		}
	}
	return "no matcher fails"
}

package pipeline

import (
	"context"
	"slices"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/policy"
)

// review is the reviewers' step of c's request (protocol section 12),
// after the policy's opinions ops and before the prompt rate limit,
// canned answers and frontends. When reviewers are configured for the
// request, policy and memory are consulted first (consult, not
// prompted), and what they decide stands; otherwise the reviewers are
// asked, in order, and the first allow or deny decides, once: it is
// neither remembered nor counted as a prompt; a deny counts for the
// breaker (remembers), as any deny the agent receives, so rewording a
// request a reviewer denied is not free. It returns nil when nothing
// decided, and the next steps run as without reviewers: a person, then
// deny.
//
// Reviewers take only the questions nobody answered: not one a source
// asks a person for (an explicit prompt opinion: a rule's
// decision = "prompt", the verb or annotation policy asking), nor one a
// canned answer matches (the person answered it in advance).
//
// When memory cannot be consulted, a remembered deny may be unseen, and
// no automatic allow stands (withoutMemory): the reviewers are not asked.
// A deadline or signal during a reviewer is the deny it ends in.
func (p *Pipeline) review(ctx context.Context, c *call, ops []policy.Opinion) (*decision.Decision, []policy.Opinion) {
	if len(p.c.Reviewers.For(c.req)) == 0 {
		return nil, nil
	}
	d, all, _ := p.consult(ctx, c, ops, false)
	switch {
	case d != nil:
		return d, all
	}
	if why := p.notReviewed(c.req, all, !c.storeFailed); why != "" {
		if c.storeFailed || p.c.Verbose {
			p.c.Warn("the reviewers are not asked: " + why)
		}
		return nil, nil
	}
	v := p.c.Reviewers.Review(ctx, c.req, p.c.Warn, p.c.Verbose)
	switch {
	case ctx.Err() != nil:
		return ended(ctx, c.req, decision.FrontendNone), all
	case v.Decision == nil:
		return nil, nil
	}
	verdict := policy.Allow
	if v.Decision.Decision == decision.Deny {
		verdict = policy.Deny
	}
	// The audit log names the reviewer (auditEntry).
	return v.Decision, append(all, policy.Opinion{Verdict: verdict, By: decision.FrontendReviewer, Cause: decision.CauseReviewer,
		Source: "reviewer", Name: v.By, Message: v.Decision.Message})
}

// personNeeded says whether an opinion of ops asks a person (an
// explicit prompt), which no reviewer may then answer instead.
func personNeeded(ops []policy.Opinion) bool {
	return slices.ContainsFunc(ops, func(o policy.Opinion) bool { return o.Verdict == policy.Prompt })
}

// canned says whether a canned answer matches req.
func (p *Pipeline) canned(req *decision.Request) bool {
	if p.c.Answers == nil {
		return false
	}
	_, ok := p.c.Answers.Match(req)
	return ok
}

// reviewersOf names, for check, the reviewers that would be asked about
// a request policy and memory leave a question (v, by ops) when memory
// could be consulted (memoryOK) and no source asks a person nor a canned
// answer decides.
func (p *Pipeline) reviewersOf(req *decision.Request, v policy.Verdict, ops []policy.Opinion, memoryOK bool) []string {
	if v != policy.Prompt || p.notReviewed(req, ops, memoryOK) != "" {
		return nil
	}
	return p.c.Reviewers.For(req)
}

// notReviewed says why a question (ops, policy's and memory's opinions)
// goes to no reviewer, or "" when the reviewers take it: one review and
// check (reviewersOf) share.
func (p *Pipeline) notReviewed(req *decision.Request, ops []policy.Opinion, memoryOK bool) string {
	switch {
	case !memoryOK:
		return "memory cannot be consulted, so a person is asked"
	case personNeeded(ops):
		return "a source asks a person"
	case p.canned(req):
		return "a canned answer decides"
	}
	return ""
}

// reviewedBy names, for the audit log, the reviewer whose opinion in ops
// made decision d.
func reviewedBy(d *decision.Decision, ops []policy.Opinion) []string {
	if d.Frontend != decision.FrontendReviewer {
		return nil
	}
	var by []string
	for _, o := range ops {
		if o.By == decision.FrontendReviewer {
			by = append(by, audited(o.Name))
		}
	}
	return by
}

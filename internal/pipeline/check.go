package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/realpath"
	"github.com/askperm/askperm/internal/state"
)

// Opinion is one source's opinion of a request (policy.Opinion), as a
// check reports it.
type Opinion = policy.Opinion

// Check is what would decide a request before anyone is asked.
type Check struct {
	Request *decision.Request
	// Verdict is the combined verdict: Prompt when all abstain.
	Verdict policy.Verdict
	// Message is the first deny's message.
	Message string
	// Opinions are every source's opinions, abstentions left out.
	Opinions []policy.Opinion
	// Commands are, by dimension name, the simple commands of each
	// command line of the request and the opinions speaking of each.
	Commands map[string][]Command
	// Reviewers name the reviewers that would be asked, in order, when
	// nothing above decides (they are not run).
	Reviewers []string
}

// Check reads one request from r and says what would decide it, and why,
// asking no one and recording nothing: the policy, and what memory holds
// (read, never used). An unusable store is said on the diagnostics and
// left out, and then no allow stands (withoutMemory), as in a decision.
func (p *Pipeline) Check(ctx context.Context, r io.Reader) (Check, error) {
	ctx, cancel := p.deadline(ctx, time.Now())
	defer cancel()
	raw, err := ReadRequest(ctx, r, p.c.MaxRequest)
	if err != nil {
		return Check{}, invalid{err}
	}
	req, err := decision.Parse(raw)
	if err != nil {
		return Check{}, invalid{err}
	}
	realpath.Resolve(req) // once: every rule and scope judges both forms
	ops := opinions(p.c.Policy, req)
	memoryOK := true
	if p.c.Memory != nil {
		err := p.withStore(ctx, func(s *state.Store) error {
			return s.View(func(tx *state.Tx) error {
				mem, err := p.memoryOpinions(tx, &call{req: req})
				ops = append(ops, mem...)
				return err
			})
		})
		if err != nil {
			p.c.Warn(fmt.Sprintf("state store: %v; memory left out: automatic allows become a question", err))
			ops, memoryOK = withoutMemory(ops), false
		}
	}
	v, winners := policy.Combine(ops)
	c := Check{Request: req, Verdict: v, Opinions: ops, Commands: commandsOf(req, ops), Reviewers: p.reviewersOf(req, v, ops, memoryOK)}
	if v == policy.Deny {
		c.Message = winners[0].Message
	}
	return c, nil
}

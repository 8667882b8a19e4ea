// Package reviewer owns the reviewers of protocol section 12: programs
// that may decide a request before a person is asked. A Chain asks its
// reviewers in order, one at a time and never two at once, each with the
// request on stdin, and takes the first allow or deny, which decides once
// only. A reviewer abstains by exiting 3 with nothing on stdout; a
// timeout, a crash, an invalid answer, an answer for another request, one
// that would persist, or a deny whose cause says nobody decided (a helper
// that timed out) is an abstention too, said on the diagnostics.
// Nobody deciding is no decision here: the caller asks a person next.
//
// Reviewers are run through helpers.Runner, the caller's side of the
// protocol: no shell, the process group killed at the deadline, the
// answer checked against the request sent (decision.ParseDecision).
package reviewer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/helpers"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/reviewer/model"
)

// DefaultTimeout is a reviewer's timeout when its config gives none.
const DefaultTimeout = 10 * time.Second

// ExitAbstain is the exit status of a reviewer that abstains.
const ExitAbstain = 3

// maxOutput caps a reviewer's stdout: one decision, a deny's message in
// it.
const maxOutput = 64 << 10

// Spec is a reviewer as config.toml gives it.
type Spec struct {
	Name    string
	Command []string // the program, absolute, and its arguments
	Timeout time.Duration
	// Tool, Server and Action are globs on the request's fields; nil:
	// any. A field the request lacks never matches a glob given.
	Tool, Server, Action *string
}

// reviewer is a Spec with its globs compiled.
type reviewer struct {
	Spec
	scope match.Matcher
}

// Chain is the reviewers of a configuration, in order.
type Chain struct {
	reviewers []reviewer
	// turn is held (a one-slot semaphore) while a reviewer runs: the
	// requests of one process (the gate's) take turns.
	turn chan struct{}
}

// New returns the chain of specs, in their order; nil when there are
// none. A glob that does not compile is an error naming the reviewer.
func New(specs []Spec) (*Chain, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	c := &Chain{turn: make(chan struct{}, 1)}
	comp := match.NewCompiler()
	for _, s := range specs {
		m, err := comp.Matcher(match.Spec{Fields: [4]*string{match.Tool: s.Tool, match.Server: s.Server, match.Action: s.Action}})
		if err != nil {
			return nil, fmt.Errorf("reviewer %q: %w", s.Name, err)
		}
		if s.Timeout <= 0 {
			s.Timeout = DefaultTimeout
		}
		c.reviewers = append(c.reviewers, reviewer{Spec: s, scope: m})
	}
	return c, nil
}

// For names the reviewers that would be asked about req, in order.
func (c *Chain) For(req *decision.Request) []string {
	var names []string
	for _, r := range c.scoped(req) {
		names = append(names, r.Name)
	}
	return names
}

// scoped are the reviewers whose globs match req.
func (c *Chain) scoped(req *decision.Request) []reviewer {
	if c == nil {
		return nil
	}
	cache := match.NewCache(req)
	var rs []reviewer
	for _, r := range c.reviewers {
		if r.scope.Match(cache) {
			rs = append(rs, r)
		}
	}
	return rs
}

// Verdict is what the chain made of a request.
type Verdict struct {
	// Decision is the decision of the reviewer that decided, for the
	// request: persist once, cause and frontend reviewer. Nil when every
	// reviewer abstained.
	Decision *decision.Decision
	// By names the reviewer that decided.
	By string
}

// Review asks the reviewers that req is for, in order, until one allows
// or denies. warn says each failure that made a reviewer abstain;
// verbose also says each plain abstention and who decided. A ctx that
// ends stops the chain with no decision: the caller's deadline decides.
func (c *Chain) Review(ctx context.Context, req *decision.Request, warn func(string), verbose bool) Verdict {
	rs := c.scoped(req)
	if len(rs) == 0 {
		return Verdict{}
	}
	select {
	case c.turn <- struct{}{}:
		defer func() { <-c.turn }()
	case <-ctx.Done():
		return Verdict{}
	}
	for _, r := range rs {
		d, why := r.ask(ctx, req)
		var plain abstained
		switch {
		case ctx.Err() != nil:
			return Verdict{}
		case d != nil:
			if verbose {
				warn(fmt.Sprintf("%s by reviewer %s", d.Decision, form.Line(r.Name)))
			}
			return Verdict{Decision: d, By: r.Name}
		case errors.As(why, &plain):
			if verbose {
				warn(fmt.Sprintf("reviewer %s abstained%s", form.Line(r.Name), plain.said()))
			}
		default:
			warn(fmt.Sprintf("reviewer %s: %v; it abstains", form.Line(r.Name), why))
		}
	}
	return Verdict{}
}

// abstained is the error of a reviewer that abstained as it may (exit
// 3), with what it said on stderr.
type abstained struct{ stderr string }

func (abstained) Error() string { return "abstained" }

func (a abstained) said() string {
	if a.stderr == "" {
		return ""
	}
	return ": " + a.stderr
}

// ask runs r on req and returns its decision, or why it has none.
func (r reviewer) ask(ctx context.Context, req *decision.Request) (*decision.Decision, error) {
	var stderr capped
	run := &helpers.Runner{Argv: r.Command, Timeout: r.Timeout, MaxOutput: maxOutput, Stderr: &stderr}
	got, err := run.Ask(ctx, req)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == ExitAbstain:
		return nil, abstained{stderr.last()}
	case err != nil:
		if said := stderr.last(); said != "" {
			return nil, fmt.Errorf("%w (it said: %s)", err, said)
		}
		return nil, err
	case got.Persist != decision.PersistOnce:
		// A reviewer never creates rules or session approvals.
		return nil, fmt.Errorf("answered %s %s, but a reviewer decides once only", got.Decision, got.Persist)
	case slices.Contains(undecided, got.Cause):
		// A helper that could not decide denies; as a reviewer it failed.
		return nil, fmt.Errorf("denied with cause %s, which decides nothing", got.Cause)
	}
	d := decision.Denied(req, decision.CauseReviewer, decision.FrontendReviewer)
	if got.Decision == decision.Allow {
		d.Decision = decision.Allow
		d.Grants = req.GrantNames()
	} else {
		// The reviewer's text reaches the agent, and through it maybe a
		// terminal: cleaned as the model reviewer's reason is.
		d.Message = model.Reason(got.Message)
	}
	return &d, nil
}

// undecided are the causes of a deny that nobody decided (protocol
// section 4): from a reviewer, an abstention.
var undecided = []decision.Cause{decision.CauseTimeout, decision.CauseCancelled, decision.CauseUnavailable, decision.CauseRateLimit, decision.CauseError}

// maxStderr caps what is kept of a reviewer's stderr.
const maxStderr = 4 << 10

// capped keeps the first maxStderr bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxStderr - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// last is the last line written that is not blank, safe to show.
func (c *capped) last() string {
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	return form.Line(lines[len(lines)-1])
}

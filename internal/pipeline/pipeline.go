// Package pipeline owns the life of one request, from its bytes to its
// outcome: read it under the deadline, parse it strictly, build its one
// deadline, ask the sources of an automatic answer (policy, combined by
// strictest wins, then reviewers, then canned answers), then the frontend
// chain, build the form's decision, record it, and return the outcome.
// Every failure, timeout, signal and panic after a valid request exists
// becomes a deny.
//
// The commands askperm, gate and the hook adapters all decide through one
// Pipeline; it knows nothing of flags, keeps no state between requests, and
// may decide many requests at once. Run reads a request's bytes; an
// adapter hands over the request it built (DecideRequest). answer, in
// memory.go, tells the steps of one request in order, memory's and the
// turn to ask among them.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/realpath"
	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/prompt"
)

// Errors of an outcome with no decision to write.
var (
	// ErrInvalidRequest: the request could not be read or is invalid.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrNoMatch: Strict and no canned answer matched, a mistake of the
	// script driving askperm.
	ErrNoMatch = errors.New("no canned answer matches the request")
	// ErrBadAnswer: a canned answer the form rejects, a mistake of the
	// script driving askperm.
	ErrBadAnswer = errors.New("invalid canned answer")
)

// invalid is an error of an invalid request: it is ErrInvalidRequest
// and says what was wrong.
type invalid struct{ error }

func (invalid) Is(target error) bool { return target == ErrInvalidRequest }

func (e invalid) Unwrap() error { return e.error }

// ErrTimeout is the cause of a request's context that ended at its
// deadline.
var ErrTimeout = errors.New("timeout")

// maxCallerTimeout bounds a request's own timeout.
const maxCallerTimeout = 365 * 24 * time.Hour

// Config is what a Pipeline decides with.
type Config struct {
	// Timeout is askperm's deadline for one request, counted from when the
	// request started, reading it included. The request's own timeout
	// shortens it.
	Timeout time.Duration
	// MaxRequest caps a request's size in bytes.
	MaxRequest int64
	// Policy are the sources of an automatic opinion, combined by strictest
	// wins before anyone is asked.
	Policy []Source
	// Answers are canned answers, consulted when policy says prompt; nil:
	// none.
	Answers *answers.File
	// Strict makes a request no canned answer matches an error (ErrNoMatch)
	// instead of a question.
	Strict bool
	// Reviewers are asked before frontends, about what nothing decided,
	// no source asks a person for and no canned answer matches
	// (reviewers.go); nil: none.
	Reviewers *reviewer.Chain
	// Frontends is the frontend chain, by name, asked when nothing else
	// answers; Prompt configures it.
	Frontends []decision.Frontend
	Prompt    prompt.Options
	// Team configures the team frontend; nil leaves it unavailable.
	Team *team.Config
	// Notify is what tells a person that a question waits for them
	// (notify.go); nil: nothing.
	Notify *notify.Config
	// Memory is where remembered rules and session approvals live; nil
	// remembers nothing and offers no allow-session.
	Memory *Memory
	// Record is called once with every decision made; nil records nothing.
	Record func(Record)
	// Now reads the clock; it dates a rule's expiry. Nil is time.Now.
	Now func() time.Time
	// Warn reports a diagnostic (one line, no prefix); nil drops it.
	Warn func(string)
	// Verbose says on Warn which rules or memory entries decided.
	Verbose bool
	// RuleNote, when set, says in the rule stage who keeps the rule an
	// answer would save (form.Options.RuleNote).
	RuleNote func(*decision.Request, form.Answer) string
}

// Record is what the record step sees of one decision.
type Record struct {
	Request  *decision.Request
	Decision decision.Decision
	// Opinions are the policy's opinions that were not abstentions.
	Opinions []policy.Opinion
	Start    time.Time // when the request started
}

// Outcome is how one request ended: a decision to write, or none.
type Outcome struct {
	// Request is the parsed request; nil when none was valid.
	Request *decision.Request
	// Decision is the decision to write; nil when nothing may be written
	// (Err wraps ErrInvalidRequest, ErrNoMatch or ErrBadAnswer).
	Decision *decision.Decision
	// Err is why it ended as it did. With a Decision it is an internal
	// failure (the decision then denies with cause error).
	Err error
}

// Pipeline decides requests.
type Pipeline struct {
	c Config
	// chain is built when first asked: a decision without a person
	// never touches the frontends' code.
	chain func() []prompt.Frontend
	// store is the state store, open while this process's requests use
	// it (withStore).
	store storeHolder
	// audit is held (a one-slot semaphore) while one of this process's
	// requests appends to the audit log (appendAudit).
	audit chan struct{}
}

// New returns the pipeline of c.
func New(c Config) *Pipeline {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Warn == nil {
		c.Warn = func(string) {}
	}
	c = withTeamMemory(c)
	return &Pipeline{c: c, chain: sync.OnceValue(func() []prompt.Frontend { return chain(c) }), store: newStoreHolder(), audit: make(chan struct{}, 1)}
}

// Run reads one request from r, at most MaxRequest bytes up to EOF before
// the deadline, and decides it.
func (p *Pipeline) Run(ctx context.Context, r io.Reader) Outcome {
	start := time.Now()
	ctx, cancel := p.deadline(ctx, start)
	defer cancel()
	raw, err := ReadRequest(ctx, r, p.c.MaxRequest)
	if err != nil {
		return Outcome{Err: invalid{err}}
	}
	return p.decide(ctx, start, raw)
}

// DecideRequest decides a request an adapter built from a tool call (a
// hook payload, a gate's or a permission tool's call). It is encoded once,
// as a caller would send it, so that it is judged, sized and digested
// (request_sha256, RFC 8785) exactly as those bytes would be by Run.
func (p *Pipeline) DecideRequest(ctx context.Context, req *decision.Request) Outcome {
	start := time.Now()
	ctx, cancel := p.deadline(ctx, start)
	defer cancel()
	raw, sent, err := decision.EncodeRequest(req)
	switch {
	case err != nil:
		return Outcome{Err: invalid{fmt.Errorf("the tool call cannot be asked about: %w", err)}}
	case int64(len(raw)) > p.c.MaxRequest:
		return Outcome{Err: invalid{tooLarge(p.c.MaxRequest)}}
	}
	return p.decideParsed(ctx, start, sent, raw)
}

// deadline is askperm's deadline for a request started at start.
func (p *Pipeline) deadline(ctx context.Context, start time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadlineCause(ctx, start.Add(p.c.Timeout), ErrTimeout)
}

// decide parses raw and, once it is a valid request, always ends in a
// decision (but for a script's mistakes), recorded.
func (p *Pipeline) decide(ctx context.Context, start time.Time, raw []byte) Outcome {
	req, err := decision.Parse(raw)
	if err != nil {
		return Outcome{Err: invalid{err}}
	}
	return p.decideParsed(ctx, start, req, raw)
}

// decideParsed is decide of a request parsed from raw.
func (p *Pipeline) decideParsed(ctx context.Context, start time.Time, req *decision.Request, raw []byte) Outcome {
	realpath.Resolve(req) // once: every rule and scope judges both forms
	// The caller's own deadline, in seconds from the start, less a second
	// so that the answer arrives before it. Converting a float beyond a
	// Duration's range is undefined in Go: clamp first.
	if req.Timeout != nil {
		secs := min(*req.Timeout, maxCallerTimeout.Seconds())
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, start.Add(time.Duration(secs*float64(time.Second))-time.Second), ErrTimeout)
		defer cancel()
	}
	c := &call{req: req, raw: raw, start: start}
	defer c.releaseTurn()
	asking, rec, cancel := split(ctx, start)
	defer cancel()
	d, ops, err := p.safely(asking, c)
	if d == nil {
		return Outcome{Request: req, Err: err}
	}
	// Recorded before the turn is released: the next helper to take it
	// finds this one's answer in the store.
	p.record(rec, c, d, err == nil, ops)
	c.releaseTurn()
	if ctx.Err() != nil && d.Decision != decision.Deny {
		// The deadline passed, or a signal came, before the decision could
		// be written: it is a deny.
		p.c.Warn(fmt.Sprintf("the request ended (%v) before its %s could be written; denied", context.Cause(ctx), d.Decision))
		d = ended(ctx, req, decision.FrontendNone)
	}
	if p.c.Record != nil {
		p.c.Record(Record{Request: req, Decision: *d, Opinions: ops, Start: start})
	}
	return Outcome{Request: req, Decision: d, Err: err}
}

// maxReserve bounds the part of a request's time kept for its record
// step.
const maxReserve = 500 * time.Millisecond

// split divides the time of a request started at start, whose context ctx
// ends at its deadline, between deciding (asking) and recording (rec): a
// tenth of it, at most maxReserve, is kept for the record, which ends
// before the deadline, so that a lock held by another process never
// delays the decision past it. After a signal (ctx cancelled) the record
// has only half of that reserve.
func split(ctx context.Context, start time.Time) (asking, rec context.Context, cancel func()) {
	deadline, _ := ctx.Deadline() // Pipeline.deadline set one
	reserve := max(0, min(maxReserve, deadline.Sub(start)/10))
	asking, cancelAsking := context.WithDeadlineCause(ctx, deadline.Add(-reserve), ErrTimeout)
	rec, cancelRec := context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(-reserve/4))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(context.Cause(ctx), ErrTimeout) {
			time.AfterFunc(reserve/2, cancelRec)
		}
	})
	return asking, rec, func() {
		stop()
		cancelAsking()
		cancelRec()
	}
}

// safely is answer with a panic turned into a deny with cause error.
func (p *Pipeline) safely(ctx context.Context, c *call) (d *decision.Decision, ops []policy.Opinion, err error) {
	req := c.req
	defer func() {
		if v := recover(); v != nil {
			d, err = denied(req, decision.CauseError, decision.FrontendNone), fmt.Errorf("internal error: %v", v)
		}
	}()
	return p.answer(ctx, c)
}

// ask asks the frontend chain with c's form and turns each way it can
// end into a decision. A team approver's key, and the answers ignored,
// are kept in c for the audit log.
func (p *Pipeline) ask(ctx context.Context, c *call) (*decision.Decision, error) {
	f := c.form
	req := f.Req
	defer p.notifying(ctx, c)()
	asked := time.Now()
	a, by, err := prompt.Ask(ctx, p.chain(), f)
	took := time.Since(asked)
	c.approver, c.ignored, c.asked = a.Approver, a.Ignored, &took
	switch {
	case ctx.Err() != nil:
		return ended(ctx, req, by), nil
	case errors.Is(err, prompt.ErrUnavailable):
		p.c.Warn(fmt.Sprintf("nobody can be asked: %v; denied. %s", err, nobodyHint))
		return denied(req, decision.CauseUnavailable, decision.FrontendNone), nil
	case errors.Is(err, prompt.ErrCancelled):
		return denied(req, decision.CauseCancelled, by), nil
	case err != nil:
		return denied(req, decision.CauseError, decision.FrontendNone), fmt.Errorf("frontend %s: %w", by, err)
	}
	d, err := f.Decide(a, by, p.c.Now())
	if err != nil {
		return denied(req, decision.CauseError, decision.FrontendNone), fmt.Errorf("frontend %s returned an invalid answer: %w", by, err)
	}
	return &d, nil
}

// nobodyHint ends the line of a request nobody could be asked about with
// what to do.
const nobodyHint = "To be asked, run askperm with a terminal (/dev/tty) or a display (DISPLAY or WAYLAND_DISPLAY, for yad or zenity); to decide without asking, give rules (--rules) or a canned answer (--answer)"

// ended is the deny of a request whose context ended: at the deadline, or
// by a signal or the caller going away.
func ended(ctx context.Context, req *decision.Request, by decision.Frontend) *decision.Decision {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return denied(req, decision.CauseTimeout, by)
	}
	return denied(req, decision.CauseCancelled, by)
}

func denied(req *decision.Request, cause decision.Cause, by decision.Frontend) *decision.Decision {
	d := decision.Denied(req, cause, by)
	return &d
}

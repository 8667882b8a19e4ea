// Package ask owns the pipeline of one request: canned answers, then the
// frontend chain, then the form's decision, with every failure, timeout
// and signal turned into a deny. The commands askperm, gate and the hook
// adapters all decide through Decide; nothing here knows about flags.
package ask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/askperm/askperm/answers"
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// ErrTimeout is the cause of a context that ended at askperm's deadline.
var ErrTimeout = errors.New("timeout")

// maxCallerTimeout bounds a request's own timeout.
const maxCallerTimeout = 365 * 24 * time.Hour

// ErrNoMatch means --strict and no canned answer matched: a mistake of the
// script driving askperm, so no decision is written.
var ErrNoMatch = errors.New("no canned answer matches the request")

// ErrBadAnswer wraps a canned answer the form rejects: a mistake of the
// script driving askperm, so no decision is written.
var ErrBadAnswer = errors.New("invalid canned answer")

// Options configure the pipeline.
type Options struct {
	// Start is when askperm started; the request's own timeout counts from it.
	Start time.Time
	// Single is the --answer entry; it wins over Answers.
	Single *answers.Entry
	// Answers is the --answers file.
	Answers *answers.File
	// Strict makes a request no canned answer matches an error (ErrNoMatch).
	Strict bool
	// Chain is the frontend chain asked when nothing else answers.
	Chain []prompt.Frontend
	// Form holds the form's options.
	Form form.Options
	// Now reads the clock; it dates a rule's expiry.
	Now func() time.Time
	// Warn reports a diagnostic (one line, no prefix).
	Warn func(string)
}

// Decide returns the decision for req. ctx carries askperm's deadline (with
// cause ErrTimeout) and its signal handling; the request's own timeout
// shortens the deadline to one second before the caller's.
//
// When the error is ErrNoMatch or ErrBadAnswer nothing may be written. Any
// other error is an internal failure and comes with the deny decision (cause
// error) to write.
func Decide(ctx context.Context, req *decision.Request, o Options) (decision.Decision, error) {
	if req.Timeout != nil {
		// Converting a float beyond a Duration's range is undefined in Go:
		// clamp first (a year is far beyond askperm's own deadline).
		secs := min(*req.Timeout, maxCallerTimeout.Seconds())
		caller := time.Duration(secs*float64(time.Second)) - time.Second
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, o.Start.Add(caller), ErrTimeout)
		defer cancel()
	}
	if ctx.Err() != nil {
		return ended(ctx, req, "none"), nil
	}
	f := form.New(req, o.Form)
	if e, ok := o.canned(req); ok {
		if e.Message != "" && e.Choice.IsAllow() {
			o.Warn("the message of a canned allow is ignored")
		}
		d, err := f.Decide(e.Answer(f), "answers", o.Now())
		if err != nil {
			return decision.Decision{}, fmt.Errorf("%w: %w", ErrBadAnswer, err)
		}
		return d, nil
	}
	if o.Strict {
		return decision.Decision{}, ErrNoMatch
	}
	a, by, err := prompt.Ask(ctx, o.Chain, f)
	switch {
	case ctx.Err() != nil:
		return ended(ctx, req, by), nil
	case errors.Is(err, prompt.ErrUnavailable):
		o.Warn(fmt.Sprintf("nobody can be asked: %v", err))
		return decision.Denied(req, decision.CauseUnavailable, "none"), nil
	case errors.Is(err, prompt.ErrCancelled):
		return decision.Denied(req, decision.CauseCancelled, by), nil
	case err != nil:
		return decision.Denied(req, decision.CauseError, "none"), fmt.Errorf("frontend %s: %w", by, err)
	}
	d, err := f.Decide(a, by, o.Now())
	if err != nil {
		return decision.Denied(req, decision.CauseError, "none"), fmt.Errorf("frontend %s returned an invalid answer: %w", by, err)
	}
	return d, nil
}

func (o Options) canned(req *decision.Request) (answers.Entry, bool) {
	if o.Single != nil {
		return *o.Single, true
	}
	if o.Answers != nil {
		return o.Answers.Match(req)
	}
	return answers.Entry{}, false
}

// ended is the deny of a request whose context ended: at the deadline, or
// by a signal.
func ended(ctx context.Context, req *decision.Request, frontend string) decision.Decision {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return decision.Denied(req, decision.CauseTimeout, frontend)
	}
	return decision.Denied(req, decision.CauseCancelled, frontend)
}

package inbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// Form is the form of e's request as the approver is asked it: the
// request's facts and command lines, no allow-session (a session lives
// in its host's memory, not the team's).
func Form(e *Entry) *form.Form { return formOf(e.Request) }

func formOf(req *decision.Request) *form.Form {
	return form.New(req, form.Options{Commands: pipeline.Commands(req)})
}

// ErrAnswered is a second answer of one approver to one request: the
// first stands.
var ErrAnswered = errors.New("you have answered this request already; your first answer stands")

// ErrRejected is an answer the form rejects (a choice not offered, a
// scope not offered, ...).
var ErrRejected = errors.New("the form rejects the answer")

// Answer builds the decision a gives to e's request exactly as a host
// would (form.Decide, frontend team), signs it with kp and writes it
// under kp's key of the answers bucket, once: a second answer of the
// same approver is ErrAnswered. An always-answer's rule is then written,
// signed, to the team rules bucket, where it decides later requests on
// every host that trusts kp; the same rule written before stands.
func (t *Team) Answer(ctx context.Context, kp nkeys.KeyPair, e *Entry, f *form.Form, a form.Answer) error {
	now := t.now()
	d, err := f.Decide(a, decision.FrontendTeam, now)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRejected, err)
	}
	signed, err := team.Sign(kp, d, e.Host, e.Ask)
	if err != nil {
		return fmt.Errorf("signing the answer: %w", err)
	}
	err = wire.WriteAnswer(ctx, t.Answers, e.Host, e.Ask, signed)
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		return ErrAnswered
	case err != nil:
		return fmt.Errorf("%s: writing the answer: %w", t.Config.Names().AnswersBucket(), err)
	case d.Persist != decision.PersistAlways:
		return nil
	}
	// The answer first: a rule is never saved for an answer refused. A
	// write sent again finds the same rule, written: it stands.
	if _, err := wire.Retry(ctx, func(ctx context.Context) (struct{}, error) {
		_, err := wire.WriteRule(ctx, t.Rules, kp, e.Raw, d, now)
		return struct{}{}, err
	}); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("the answer is written, but not its team rule: %w", err)
	}
	return nil
}

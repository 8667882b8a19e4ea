package form

import (
	"context"
	"fmt"
)

// Stager asks one stage at a time. Every interactive frontend implements it;
// Walk owns the order of stages and the Back loop, so all frontends share it.
type Stager interface {
	// AskChoice asks stage "choice", editing a's Choice and Message in place
	// (they hold what was answered before a Back).
	AskChoice(ctx context.Context, f *Form, a *Answer) error
	// AskRule asks stage "rule" for an always-choice, editing a in place;
	// back reports that the person chose Back. A rule dialog may also let
	// the person give up on the rule and deny once: it sets a.Choice to
	// DenyOnce (keeping a.Message) and returns back false.
	AskRule(ctx context.Context, f *Form, a *Answer) (back bool, err error)
}

// Walk runs the two-stage form through s, starting from the form's
// defaults, and returns a validated answer. Any error from s ends the walk;
// the caller turns it into a deny.
func Walk(ctx context.Context, f *Form, s Stager) (Answer, error) {
	a := f.Defaults()
	for {
		if err := s.AskChoice(ctx, f, &a); err != nil {
			return Answer{}, err
		}
		if err := f.CheckChoice(a); err != nil {
			return Answer{}, fmt.Errorf("stage choice: %w", err)
		}
		if !a.Choice.IsAlways() {
			return a, nil
		}
		back, err := s.AskRule(ctx, f, &a)
		if err != nil {
			return Answer{}, err
		}
		if back {
			continue
		}
		if a.Choice == DenyOnce {
			return a, nil
		}
		if err := f.CheckRule(a); err != nil {
			return Answer{}, fmt.Errorf("stage rule: %w", err)
		}
		return a, nil
	}
}

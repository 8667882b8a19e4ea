package prompt

import (
	"context"
	"errors"

	"github.com/askperm/askperm/form"
)

// Unavailable is f with its own error unavailable counted as
// ErrUnavailable (the chain goes on to the next frontend), asked under
// Bounded: for a frontend whose package cannot import this one (it joins
// what only the pipeline may join with the frontends), so it says its
// unavailability with an error of its own.
func Unavailable(f Frontend, unavailable error) Frontend {
	return unavailableFrontend{f, unavailable}
}

type unavailableFrontend struct {
	Frontend
	unavailable error
}

func (u unavailableFrontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	ctx, cancel := Bounded(ctx)
	defer cancel()
	a, err := u.Frontend.Ask(ctx, f)
	if errors.Is(err, u.unavailable) {
		err = unavailableError{err}
	}
	return a, err
}

// unavailableError is ErrUnavailable, said as the frontend said it.
type unavailableError struct{ error }

func (e unavailableError) Unwrap() []error { return []error{e.error, ErrUnavailable} }

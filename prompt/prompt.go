// Package prompt is how askperm asks a person. A Frontend walks the
// two-stage form (package form) on one interface and returns the person's
// answer; Ask tries a chain of frontends in order and returns the first
// answer given. The frontends live in the packages beneath this one:
// prompt/tui (the full-screen terminal UI), prompt/line (the line prompt)
// and prompt/dialog (yad and zenity). None of them validates an answer
// itself: form does.
//
// A caller builds the chain it wants and asks:
//
//	chain := []prompt.Frontend{tui.New(opts), line.New(opts), prompt.None{}}
//	answer, by, err := prompt.Ask(ctx, chain, form.New(req, form.Options{}))
//
// An error wrapping ErrUnavailable means nobody could be asked; one
// wrapping ErrCancelled means the person dismissed the prompt; both, like
// every other error, must end in a deny.
package prompt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// Frontend asks a person through one interface. A frontend keeps no state
// between calls of Ask: one value may serve many requests, also at once.
type Frontend interface {
	// Name is the frontend's name in --frontend and in the decision.
	Name() decision.Frontend
	// Ask walks the form. It returns an error wrapping ErrUnavailable when it
	// could not start (the chain then tries the next frontend), one wrapping
	// ErrCancelled when the person dismissed it, and ctx's error when ctx
	// ended. It restores whatever it changed (terminal modes, screens,
	// child processes) before it returns, on every path. It asks for as
	// long as ctx lasts: Ask (the chain) bounds ctx, a direct caller
	// should (Bounded).
	Ask(ctx context.Context, f *form.Form) (form.Answer, error)
}

// ErrUnavailable means a frontend could not start: no terminal, no display,
// no program.
var ErrUnavailable = errors.New("unavailable")

// ErrCancelled means the person dismissed the prompt: Ctrl-C, Esc, EOF on
// the terminal, a hang-up, a dialog closed by its window.
var ErrCancelled = errors.New("cancelled")

// Ask tries the chain in order and returns the first started frontend's
// answer and name, within ctx's deadline or, without one, DefaultTimeout
// (Bounded). When none can start it returns an error wrapping
// ErrUnavailable that names each frontend's reason.
func Ask(ctx context.Context, chain []Frontend, f *form.Form) (form.Answer, decision.Frontend, error) {
	ctx, cancel := Bounded(ctx)
	defer cancel()
	var reasons []error
	for _, fe := range chain {
		if err := ctx.Err(); err != nil {
			return form.Answer{}, decision.FrontendNone, err
		}
		a, err := fe.Ask(ctx, f)
		if errors.Is(err, ErrUnavailable) {
			reasons = append(reasons, fmt.Errorf("%s: %w", fe.Name(), err))
			continue
		}
		return a, fe.Name(), err
	}
	if len(reasons) == 0 {
		return form.Answer{}, decision.FrontendNone, fmt.Errorf("no frontend configured: %w", ErrUnavailable)
	}
	return form.Answer{}, decision.FrontendNone, unavailable(reasons)
}

// unavailable is why no frontend of a chain could start: each one's
// reason, on one line.
type unavailable []error

func (u unavailable) Error() string {
	s := make([]string, len(u))
	for i, err := range u {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (u unavailable) Unwrap() []error { return u }

// None ends a chain: it never starts, so the request is denied as
// unavailable.
type None struct{}

// Name is "none".
func (None) Name() decision.Frontend { return decision.FrontendNone }

// Ask reports ErrUnavailable.
func (None) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{}, fmt.Errorf("chosen: %w", ErrUnavailable)
}

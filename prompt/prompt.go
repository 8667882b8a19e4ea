// Package prompt owns the frontends that ask a person: the full-screen
// terminal UI, the line prompt, the zenity and yad dialogs, and the chain
// that picks the first one able to start. Frontends walk the form through
// form.Walk and never validate answers themselves.
package prompt

import (
	"context"
	"errors"
	"fmt"

	"github.com/askperm/askperm/form"
)

// Frontend asks a person through one interface.
type Frontend interface {
	// Name is the frontend's name in --frontend and in the decision.
	Name() string
	// Ask walks the form. It returns an error wrapping ErrUnavailable when it
	// could not start (the chain then tries the next frontend), one wrapping
	// ErrCancelled when the person dismissed it, and ctx's error when ctx
	// ended. It restores whatever it changed (terminal modes, screens,
	// child processes) before it returns, on every path.
	Ask(ctx context.Context, f *form.Form) (form.Answer, error)
}

// ErrUnavailable means a frontend could not start: no terminal, no display,
// no program.
var ErrUnavailable = errors.New("unavailable")

// ErrCancelled means the person dismissed the prompt: Ctrl-C, Esc, EOF on
// the terminal, a hang-up, a dialog closed by its window.
var ErrCancelled = errors.New("cancelled")

// Ask tries the chain in order and returns the first started frontend's
// answer and name. When none can start it returns an error wrapping
// ErrUnavailable that names each frontend's reason.
func Ask(ctx context.Context, chain []Frontend, f *form.Form) (form.Answer, string, error) {
	var reasons []error
	for _, fe := range chain {
		if err := ctx.Err(); err != nil {
			return form.Answer{}, "none", err
		}
		a, err := fe.Ask(ctx, f)
		if errors.Is(err, ErrUnavailable) {
			reasons = append(reasons, fmt.Errorf("%s: %w", fe.Name(), err))
			continue
		}
		return a, fe.Name(), err
	}
	if len(reasons) == 0 {
		return form.Answer{}, "none", fmt.Errorf("no frontend configured: %w", ErrUnavailable)
	}
	return form.Answer{}, "none", errors.Join(reasons...)
}

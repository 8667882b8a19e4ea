// Package tui is askperm's full-screen terminal UI: the whole request in
// a scrollable pane with a countdown, and each stage of the form as a huh
// form inside askperm's own frame, drawn on the terminal opened read-write
// (never on stdin or stdout). Deny once is focused, typeahead is flushed,
// and no allow counts before the arming delay. New returns the frontend;
// the tests drive a screen without a terminal and the whole frontend on a
// pseudo-terminal.
package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"golang.org/x/sys/unix"
	xterm "golang.org/x/term"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/tty"
	"github.com/askperm/askperm/prompt"
)

// Frontend is the full-screen terminal UI: a huh form per stage inside
// askperm's own frame, on the terminal opened read-write (never on stdin or
// stdout).
type Frontend struct{ o prompt.Options }

// New returns the terminal UI on the terminal o names.
func New(o prompt.Options) Frontend { return Frontend{o} }

// Name is "tui".
func (Frontend) Name() decision.Frontend { return decision.FrontendTUI }

// Ask walks the form in the full-screen UI.
func (t Frontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	if tt := t.o.Env("TERM"); tt == "" || tt == "dumb" {
		return form.Answer{}, fmt.Errorf("TERM is empty or dumb, no full-screen UI: %w", prompt.ErrUnavailable)
	}
	term, err := tty.Open(t.o.TTY)
	if err != nil {
		return form.Answer{}, err
	}
	defer term.Close()
	deadline, _ := ctx.Deadline()
	s := &tuiSession{term: term, styles: newStyles(term, t.o.Getenv), armDelay: t.o.ArmDelay, deadline: deadline}
	return form.Walk(ctx, f, s)
}

// tuiSession asks the stages of one form on one terminal. Each stage runs
// its own tea.Program with a fresh huh.Form: a completed form cannot run
// again.
type tuiSession struct {
	term     *os.File
	styles   tuiStyles
	armDelay time.Duration
	deadline time.Time // zero: no countdown
}

func (t *tuiSession) AskChoice(ctx context.Context, f *form.Form, a *form.Answer) error {
	return t.run(ctx, f, tuiChoice(f, a))
}

func (t *tuiSession) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	r := newTUIRule(f, a)
	if err := t.run(ctx, f, r.tuiStage); err != nil {
		return false, err
	}
	r.store()
	return r.back(), nil
}

// run shows one stage until it completes, and turns every other ending into
// an error: ctx's error when ctx ended, prompt.ErrCancelled when the person
// dismissed it or the terminal went away, another error for a panic. The
// terminal is restored before it returns, whatever happened.
func (t *tuiSession) run(ctx context.Context, f *form.Form, st tuiStage) (err error) {
	fd := int(t.term.Fd())
	saved, err := xterm.GetState(fd)
	if err != nil {
		return fmt.Errorf("terminal state: %w", err)
	}
	defer func() {
		if rerr := xterm.Restore(fd, saved); rerr != nil && err == nil {
			err = fmt.Errorf("restoring the terminal: %w", rerr)
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("terminal UI panicked: %v", p)
		}
	}()

	cfg := screenConfig{
		deadline: t.deadline,
		armDelay: t.armDelay,
		now:      time.Now,
		styles:   t.styles,
		flush:    func() { _ = tty.Flush(t.term) },
	}
	if w, h, err := xterm.GetSize(fd); err == nil {
		cfg.width, cfg.height = w, h
	}
	s := newTUIScreen(f, st, cfg)
	_ = tty.Flush(t.term) // typeahead never answers
	p := tea.NewProgram(s,
		tea.WithContext(ctx),
		tea.WithInput(t.term),
		tea.WithOutput(t.term),
		tea.WithoutSignalHandler(), // signals arrive as ctx's cancellation
		tea.WithAltScreen(),
	)
	stop := watchHangup(t.term, p)
	_, runErr := p.Run()
	stop()

	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(runErr, tea.ErrProgramPanic):
		return fmt.Errorf("terminal UI: %w", runErr)
	case s.end == tuiHungUp || errors.Is(runErr, syscall.EIO):
		return fmt.Errorf("the terminal hung up: %w", prompt.ErrCancelled)
	case runErr != nil:
		return fmt.Errorf("terminal UI: %w", runErr)
	case s.end == tuiCancelled:
		return fmt.Errorf("dismissed: %w", prompt.ErrCancelled)
	case s.end != tuiDone || st.form.State != huh.StateCompleted:
		return fmt.Errorf("the terminal UI ended without an answer: %w", prompt.ErrCancelled)
	}
	return nil
}

// watchHangup tells p when the terminal hangs up (its other side closed).
// bubbletea's reader ends silently on EOF and would leave the prompt
// waiting for keys that cannot come. stop ends the watch.
func watchHangup(term *os.File, p *tea.Program) (stop func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Events 0: only hang-up and errors, so no input is consumed.
		fds := []unix.PollFd{{Fd: int32(term.Fd())}, {Fd: int32(r.Fd()), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil, fds[1].Revents != 0:
				return
			case fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0:
				p.Send(tuiHangupMsg{})
				return
			}
		}
	}()
	return func() {
		w.Close()
		<-done
		r.Close()
	}
}

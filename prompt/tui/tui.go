// Package tui is askperm's full-screen terminal UI: the request's facts in
// a fixed part of the screen, the agent's words in a pane that scrolls, a
// countdown, and each stage of the form as askperm's own questions, drawn
// on the terminal opened read-write (never on stdin or stdout). Deny once
// is focused; only askperm's documented keys act; input counts only once
// the question has been on the terminal for the arming delay and the
// person has paused, judged by when the input arrived. New returns the
// frontend; the tests drive a screen without a terminal and the whole
// frontend on a pseudo-terminal.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/sys/unix"
	xterm "golang.org/x/term"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	// Before bubbletea initialises: importing this package queries no
	// terminal.
	_ "github.com/askperm/askperm/internal/noquery"
	"github.com/askperm/askperm/internal/tty"
	"github.com/askperm/askperm/prompt"
)

// Frontend is the full-screen terminal UI, on the terminal opened
// read-write (never on stdin or stdout).
type Frontend struct{ o prompt.Options }

// New returns the terminal UI on the terminal o names.
func New(o prompt.Options) Frontend { return Frontend{o} }

// Name is "tui".
func (Frontend) Name() decision.Frontend { return decision.FrontendTUI }

// Ask walks the form in the full-screen UI. It reports itself unavailable
// when the terminal cannot hold one: TERM empty or dumb, no terminal, or a
// terminal that reports no size. Once the prompt has been up, whatever
// ended it, the terminal is given back as it was and then told in one
// line what was decided (prompt.ClosingLine).
func (t Frontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	if tt := t.o.Env("TERM"); tt == "" || tt == "dumb" {
		return form.Answer{}, fmt.Errorf("TERM is empty or dumb, no full-screen UI: %w", prompt.ErrUnavailable)
	}
	term, err := tty.Open(t.o.TTY)
	if err != nil {
		return form.Answer{}, fmt.Errorf("%w: %w", err, prompt.ErrUnavailable)
	}
	defer term.Close()
	fd := int(term.Fd())
	w, h, err := xterm.GetSize(fd)
	switch {
	case err != nil:
		return form.Answer{}, fmt.Errorf("%s: terminal size: %w: %w", term.Name(), err, prompt.ErrUnavailable)
	case w <= 0 || h <= 0:
		return form.Answer{}, fmt.Errorf("%s: the terminal reports its size as %dx%d: %w", term.Name(), w, h, prompt.ErrUnavailable)
	}
	a, shown, err := t.walk(ctx, f, term)
	if shown && !t.o.NoClosingLine {
		_, _ = io.WriteString(term, prompt.ClosingLine(f, a, err))
	}
	return a, err
}

// walk asks f on term in raw mode, and restores term's state before it
// returns. shown reports whether the prompt was put up.
func (t Frontend) walk(ctx context.Context, f *form.Form, term *os.File) (a form.Answer, shown bool, err error) {
	fd := int(term.Fd())
	saved, err := xterm.GetState(fd)
	if err != nil {
		return form.Answer{}, false, fmt.Errorf("terminal state: %w", err)
	}
	defer func() {
		if rerr := xterm.Restore(fd, saved); rerr != nil && err == nil {
			a, err = form.Answer{}, fmt.Errorf("restoring the terminal: %w", rerr)
		}
	}()
	_ = tty.Flush(term) // typeahead never answers
	if _, err := xterm.MakeRaw(fd); err != nil {
		return form.Answer{}, false, fmt.Errorf("terminal raw mode: %w", err)
	}
	keys, err := readKeys(term, time.Now)
	if err != nil {
		return form.Answer{}, false, err
	}
	defer keys.stop()
	if t.o.Bell {
		_, _ = io.WriteString(term, "\a")
	}
	f.Opened(decision.FrontendTUI)
	deadline, _ := ctx.Deadline()
	st := newStyles(term, t.o.Getenv)
	s := &tuiSession{term: term, keys: keys, styles: st, armDelay: t.o.Arming(), deadline: deadline}
	a, err = form.Walk(ctx, f, s)
	return a, true, err
}

// tuiSession asks the stages of one form on one terminal, in raw mode for
// the whole walk, with one reader of its keys. Each stage runs its own
// tea.Program.
type tuiSession struct {
	term     *os.File
	keys     *keySource
	styles   tuiStyles
	armDelay time.Duration
	deadline time.Time // zero: no countdown
}

func (t *tuiSession) AskChoice(ctx context.Context, f *form.Form, a *form.Answer) error {
	return t.run(ctx, f, newChoiceStage(t.styles, f, a))
}

func (t *tuiSession) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	r := newRuleStage(t.styles, f, a)
	if err := t.run(ctx, f, r); err != nil {
		return false, err
	}
	return r.back(), nil
}

// run shows one stage until it is answered, and turns every other ending
// into an error: ctx's error when ctx ended, prompt.ErrCancelled when the
// person dismissed it or the terminal went away, another error for a
// panic.
func (t *tuiSession) run(ctx context.Context, f *form.Form, st stage) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("terminal UI panicked: %v", p)
		}
	}()
	gate := newArmGate(t.armDelay, time.Now)
	in := t.keys.attach(gate)
	defer t.keys.detach(in)
	// Resizes are watched before the size is read: none is missed.
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, unix.SIGWINCH)
	defer signal.Stop(winch)
	cfg := screenConfig{styles: t.styles, deadline: t.deadline, now: time.Now, gate: gate, input: in}
	fd := int(t.term.Fd())
	if w, h, err := xterm.GetSize(fd); err == nil {
		cfg.width, cfg.height = w, h
	}
	s := newTUIScreen(f, st, cfg)
	if _, err := io.WriteString(t.term, stageSetUp); err != nil {
		return fmt.Errorf("%w: %w: %w", errHungUp, err, prompt.ErrCancelled)
	}
	defer func() { _, _ = io.WriteString(t.term, stageTearDown) }()
	p := tea.NewProgram(newDrawnScreen(s, frameOutput{w: t.term, gate: gate}),
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithoutRenderer(),      // askperm draws each frame as it is rendered
		tea.WithOutput(io.Discard), // bubbletea writes nothing, and never on stdout
		tea.WithoutSignalHandler(), // signals arrive as ctx's cancellation
		// bubbletea's own recovery prints the panic on stdout, the decision
		// channel; run's recover turns it into an error instead.
		tea.WithoutCatchPanics(),
	)
	resized := make(chan struct{})
	defer close(resized)
	go func() {
		for {
			select {
			case <-winch:
				if w, h, err := xterm.GetSize(fd); err == nil {
					p.Send(tea.WindowSizeMsg{Width: w, Height: h})
				}
			case <-resized:
				return
			}
		}
	}()
	_, runErr := p.Run()

	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(runErr, errHungUp):
		return fmt.Errorf("%w: %w", errHungUp, prompt.ErrCancelled)
	case runErr != nil:
		return fmt.Errorf("terminal UI: %w", runErr)
	case s.end == tuiCancelled:
		return fmt.Errorf("dismissed: %w", prompt.ErrCancelled)
	case s.end != tuiDone:
		return fmt.Errorf("the terminal UI ended without an answer: %w", prompt.ErrCancelled)
	}
	return nil
}

package prompt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/askperm/askperm/form"
)

// tuiFrontend is the full-screen terminal UI: a huh form per stage inside
// askperm's own frame, on the terminal opened read-write (never on stdin or
// stdout).
type tuiFrontend struct{ o Options }

func newTUI(o Options) Frontend { return tuiFrontend{o} }

func (tuiFrontend) Name() string { return "tui" }

func (t tuiFrontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	getenv := t.o.getenv
	if tt := getenv("TERM"); tt == "" || tt == "dumb" {
		return form.Answer{}, fmt.Errorf("TERM is empty or dumb, no full-screen UI: %w", ErrUnavailable)
	}
	tty, err := openTTY(t.o.TTY)
	if err != nil {
		return form.Answer{}, err
	}
	defer tty.Close()
	setColorProfile(tty, getenv)

	deadline, _ := ctx.Deadline()
	return form.Walk(ctx, f, &tuiSession{tty: tty, armDelay: t.o.ArmDelay, deadline: deadline})
}

// setColorProfile takes the colour profile from the terminal we draw on and
// the caller's environment (NO_COLOR, CLICOLOR_FORCE, TERM, COLORTERM), not
// from stdout. Nothing askperm draws adapts to the background; fixing it
// keeps lipgloss from ever querying the terminal (OSC 11), whose missing
// answer would stall the first frame.
func setColorProfile(tty *os.File, getenv func(string) string) {
	out := termenv.NewOutput(tty, termenv.WithEnvironment(termenvEnv(getenv)))
	lipgloss.SetColorProfile(out.EnvColorProfile())
	lipgloss.SetHasDarkBackground(true)
}

// termenvEnv lets termenv read the environment through Options.Getenv.
type termenvEnv func(string) string

func (e termenvEnv) Getenv(key string) string { return e(key) }

// Environ is unused by termenv's profile detection.
func (termenvEnv) Environ() []string { return nil }

// tuiSession asks the stages of one form on one terminal. Each stage runs
// its own tea.Program with a fresh huh.Form: a completed form cannot run
// again.
type tuiSession struct {
	tty      *os.File
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
// an error: ctx's error when ctx ended, ErrCancelled when the person
// dismissed it or the terminal went away, another error for a panic. The
// terminal is restored before it returns, whatever happened.
func (t *tuiSession) run(ctx context.Context, f *form.Form, st tuiStage) (err error) {
	fd := int(t.tty.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return fmt.Errorf("terminal state: %w", err)
	}
	defer func() {
		if rerr := term.Restore(fd, saved); rerr != nil && err == nil {
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
		flush:    func() { _ = flushInput(t.tty) },
	}
	if w, h, err := term.GetSize(fd); err == nil {
		cfg.width, cfg.height = w, h
	}
	s := newTUIScreen(f, st, cfg)
	_ = flushInput(t.tty) // typeahead never answers
	p := tea.NewProgram(s,
		tea.WithContext(ctx),
		tea.WithInput(t.tty),
		tea.WithOutput(t.tty),
		tea.WithoutSignalHandler(), // signals arrive as ctx's cancellation
		tea.WithAltScreen(),
	)
	stop := watchHangup(t.tty, p)
	_, runErr := p.Run()
	stop()

	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(runErr, tea.ErrProgramPanic):
		return fmt.Errorf("terminal UI: %w", runErr)
	case s.end == tuiHungUp || errors.Is(runErr, syscall.EIO):
		return fmt.Errorf("the terminal hung up: %w", ErrCancelled)
	case runErr != nil:
		return fmt.Errorf("terminal UI: %w", runErr)
	case s.end == tuiCancelled:
		return fmt.Errorf("dismissed: %w", ErrCancelled)
	case s.end != tuiDone || st.form.State != huh.StateCompleted:
		return fmt.Errorf("the terminal UI ended without an answer: %w", ErrCancelled)
	}
	return nil
}

// watchHangup tells p when the terminal hangs up (its other side closed).
// bubbletea's reader ends silently on EOF and would leave the prompt
// waiting for keys that cannot come. stop ends the watch.
func watchHangup(tty *os.File, p *tea.Program) (stop func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Events 0: only hang-up and errors, so no input is consumed.
		fds := []unix.PollFd{{Fd: int32(tty.Fd())}, {Fd: int32(r.Fd()), Events: unix.POLLIN}}
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

package prompt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/askperm/askperm/decision"
)

// Options configure the frontends. The caller fills them from its
// settings; frontends read nothing from the process environment themselves.
type Options struct {
	// TTY is the terminal the terminal frontends use; "" means /dev/tty.
	TTY string
	// ArmDelay is how long after a prompt opens before an allow can be
	// confirmed; keys arriving earlier never approve. Zero is
	// DefaultArmDelay, so options left unset stay armed; NoArmDelay (any
	// negative value) turns the delay off.
	ArmDelay time.Duration
	// Getenv reads the caller's environment (TERM, NO_COLOR, DISPLAY, ...);
	// nil is an empty environment.
	Getenv func(string) string
	// DialogPaths maps "yad" and "zenity" to configured absolute program
	// paths; a missing entry is looked up in fixed system directories.
	DialogPaths map[string]string
	// Bell rings the terminal bell (or the desktop's) when a prompt opens,
	// for a person working in another window.
	Bell bool
	// NoClosingLine leaves out the line the terminal UI writes when its
	// prompt closes: a caller that says itself what became of the request
	// (askperm inbox, where closing a form decides nothing) sets it.
	NoClosingLine bool
}

// Env reads the caller's environment; without one it is empty.
func (o Options) Env(key string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(key)
}

// DefaultArmDelay is the arming delay unless configured.
const DefaultArmDelay = 500 * time.Millisecond

// NoArmDelay is the Options.ArmDelay that lets an answer count as soon as
// the prompt is up.
const NoArmDelay time.Duration = -1

// Arming is the arming delay the frontends apply: ArmDelay, its default
// when unset, none when negative.
func (o Options) Arming() time.Duration {
	switch {
	case o.ArmDelay == 0:
		return DefaultArmDelay
	case o.ArmDelay < 0:
		return 0
	}
	return o.ArmDelay
}

// DefaultTimeout bounds a question asked under a context without a
// deadline: a person away from the terminal never holds the caller for
// ever.
const DefaultTimeout = 300 * time.Second

// Bounded is ctx when it has a deadline, else ctx ending DefaultTimeout
// from now. Ask asks under it, so a caller that sets no deadline still
// gets a deny in the end; a program calling a frontend's Ask itself
// bounds its context so.
func Bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// DefaultOrder is the frontend chain when none is configured: the
// full-screen UI, the line prompt where the terminal cannot do a full-screen
// UI, then the dialogs. Each frontend reports itself unavailable when its
// terminal or display is missing.
var DefaultOrder = []decision.Frontend{decision.FrontendTUI, decision.FrontendLine, decision.FrontendYad, decision.FrontendZenity}

// Names lists every frontend name a chain may hold.
var Names = []decision.Frontend{decision.FrontendTUI, decision.FrontendLine, decision.FrontendYad, decision.FrontendZenity, decision.FrontendTeam, decision.FrontendNone}

// ParseList splits a comma-separated frontend list, rejecting unknown and
// repeated names.
func ParseList(s string) ([]decision.Frontend, error) {
	var names []decision.Frontend
	for _, n := range strings.Split(s, ",") {
		name := decision.Frontend(strings.TrimSpace(n))
		if !slices.Contains(Names, name) {
			return nil, fmt.Errorf("unknown frontend %q (known: %s)", name, joinNames(Names))
		}
		if slices.Contains(names, name) {
			return nil, fmt.Errorf("frontend %q listed twice", name)
		}
		names = append(names, name)
	}
	return names, nil
}

func joinNames(names []decision.Frontend) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

package prompt

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/askperm/askperm/form"
)

// Options configure the frontends. cmd fills them from flags, the
// environment and the config file; frontends read nothing from the process
// environment themselves.
type Options struct {
	// TTY is the terminal the terminal frontends use; "" means /dev/tty.
	TTY string
	// ArmDelay is how long after a prompt opens before an allow can be
	// confirmed; keys arriving earlier never approve.
	ArmDelay time.Duration
	// Getenv reads the caller's environment (TERM, NO_COLOR, DISPLAY, ...).
	Getenv func(string) string
	// DialogPaths maps "yad" and "zenity" to configured absolute program
	// paths; a missing entry is looked up in fixed system directories.
	DialogPaths map[string]string
}

// getenv reads the caller's environment; without one it is empty.
func (o Options) getenv(key string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(key)
}

// DefaultArmDelay is the arming delay unless configured.
const DefaultArmDelay = 500 * time.Millisecond

// DefaultOrder is the frontend chain when none is configured: the
// full-screen UI, the line prompt where the terminal cannot do a full-screen
// UI, then the dialogs. Each frontend reports itself unavailable when its
// terminal or display is missing.
var DefaultOrder = []string{"tui", "line", "yad", "zenity"}

// Names lists every frontend name --frontend accepts.
var Names = []string{"tui", "line", "yad", "zenity", "none"}

// ParseList splits a comma-separated frontend list, rejecting unknown and
// repeated names.
func ParseList(s string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if !isName(n) {
			return nil, fmt.Errorf("unknown frontend %q (known: %s)", n, strings.Join(Names, ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("frontend %q listed twice", n)
		}
		seen[n] = true
		names = append(names, n)
	}
	return names, nil
}

func isName(n string) bool {
	for _, k := range Names {
		if n == k {
			return true
		}
	}
	return false
}

// Chain builds the frontends named, in order. Names must come from
// ParseList or DefaultOrder.
func Chain(names []string, o Options) []Frontend {
	chain := make([]Frontend, 0, len(names))
	for _, n := range names {
		switch n {
		case "tui":
			chain = append(chain, newTUI(o))
		case "line":
			chain = append(chain, newLine(o))
		case "yad", "zenity":
			chain = append(chain, newDialog(n, o))
		case "none":
			chain = append(chain, none{})
		}
	}
	return chain
}

// none ends a chain: it never starts, so the request is denied as
// unavailable.
type none struct{}

func (none) Name() string { return "none" }

func (none) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{}, fmt.Errorf("chosen: %w", ErrUnavailable)
}

package tui

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// tuiStyles are the styles of one prompt, bound to a renderer of its own:
// the colour profile comes from the terminal drawn on and the caller's
// environment (NO_COLOR, CLICOLOR_FORCE, TERM, COLORTERM), not from stdout,
// and nothing is set on lipgloss's process-wide default renderer, so two
// prompts of one process on two terminals never share colours. The colours
// are the terminal's own 16, so they follow the person's palette.
type tuiStyles struct {
	bold, faint, warn lipgloss.Style
	caret             lipgloss.Style // the text field's cursor
	// Drawn once, for every line that starts with them: the gutter, the
	// focused question's border, the list's cursor.
	gutter, border, pointer string
}

// newStyles returns the styles for drawing on w. Nothing askperm draws
// adapts to the background: declaring it dark keeps the renderer from ever
// querying the terminal (OSC 11), whose missing answer would stall.
func newStyles(w io.Writer, getenv func(string) string) tuiStyles {
	out := termenv.NewOutput(w, termenv.WithEnvironment(termenvEnv(getenv)))
	r := lipgloss.NewRenderer(w)
	r.SetColorProfile(out.EnvColorProfile())
	r.SetHasDarkBackground(true)
	faint, accent := r.NewStyle().Faint(true), r.NewStyle().Foreground(lipgloss.Color("6"))
	return tuiStyles{
		bold:    r.NewStyle().Bold(true),
		faint:   faint,
		warn:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		caret:   r.NewStyle().Reverse(true),
		gutter:  faint.Render(gutterMark) + " ",
		border:  accent.Render(focusBorder) + " ",
		pointer: accent.Render(cursorMark),
	}
}

// termenvEnv lets termenv read the caller's environment; nil is empty.
type termenvEnv func(string) string

func (e termenvEnv) Getenv(key string) string {
	if e == nil {
		return ""
	}
	return e(key)
}

// Environ is unused by termenv's profile detection.
func (termenvEnv) Environ() []string { return nil }

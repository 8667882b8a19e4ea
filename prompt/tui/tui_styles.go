package tui

import (
	"io"
	"reflect"

	"github.com/charmbracelet/huh"
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
	// Drawn once, for every line that starts with them: the gutter, the
	// focused question's border, the list's cursor.
	gutter, border, pointer, headline string
	// theme draws the huh fields, on the same renderer.
	theme *huh.Theme
	// diff colours the lines of a unified diff, by diffKind.
	diff [diffHeader + 1]lipgloss.Style
}

// accent is the colour of the focused question's border and cursor.
const accent = lipgloss.Color("6")

// newStyles returns the styles for drawing on w. Nothing askperm draws
// adapts to the background: declaring it dark keeps the renderer from ever
// querying the terminal (OSC 11), whose missing answer would stall.
func newStyles(w io.Writer, getenv func(string) string) tuiStyles {
	out := termenv.NewOutput(w, termenv.WithEnvironment(termenvEnv(getenv)))
	r := lipgloss.NewRenderer(w)
	r.SetColorProfile(out.EnvColorProfile())
	r.SetHasDarkBackground(true)
	faint, focus := r.NewStyle().Faint(true), r.NewStyle().Foreground(accent)
	bold := r.NewStyle().Bold(true)
	return tuiStyles{
		bold:     bold,
		faint:    faint,
		warn:     r.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		gutter:   faint.Render(gutterMark) + " ",
		border:   focus.Render(focusBorder) + " ",
		pointer:  focus.Render(cursorMark),
		headline: focus.Render(headlineMark),
		theme:    huhTheme(r),
		diff: [...]lipgloss.Style{
			diffContext: r.NewStyle(),
			diffAdd:     r.NewStyle().Foreground(lipgloss.Color("2")),
			diffDel:     r.NewStyle().Foreground(lipgloss.Color("1")),
			diffHunk:    r.NewStyle().Foreground(lipgloss.Color("6")),
			diffHeader:  bold,
		},
	}
}

// huhTheme is huh's theme of the terminal's 16 colours, its focused
// field drawn like askperm's lists, every style moved to r.
func huhTheme(r *lipgloss.Renderer) *huh.Theme {
	t := huh.ThemeBase16()
	t.Focused.Base = t.Focused.Base.BorderForeground(accent)
	t.Focused.Title = t.Focused.Title.UnsetForeground().Bold(true)
	t.Focused.SelectSelector = t.Focused.SelectSelector.Foreground(accent)
	t.Focused.TextInput.Prompt = t.Focused.TextInput.Prompt.Foreground(accent)
	rebind(reflect.ValueOf(t).Elem(), r)
	return t
}

var styleType = reflect.TypeFor[lipgloss.Style]()

// rebind moves every style in v, a struct of styles and structs of styles
// such as huh.Theme, to the renderer r.
func rebind(v reflect.Value, r *lipgloss.Renderer) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case !f.CanSet():
		case f.Type() == styleType:
			f.Set(reflect.ValueOf(f.Interface().(lipgloss.Style).Renderer(r)))
		case f.Kind() == reflect.Struct:
			rebind(f, r)
		}
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

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
// prompts of one process on two terminals never share colours.
type tuiStyles struct {
	bold, faint, warn lipgloss.Style
	theme             *huh.Theme
}

// newStyles returns the styles for drawing on w. Nothing askperm draws
// adapts to the background: declaring it dark keeps the renderer from ever
// querying the terminal (OSC 11), whose missing answer would stall.
func newStyles(w io.Writer, getenv func(string) string) tuiStyles {
	out := termenv.NewOutput(w, termenv.WithEnvironment(termenvEnv(getenv)))
	r := lipgloss.NewRenderer(w)
	r.SetColorProfile(out.EnvColorProfile())
	r.SetHasDarkBackground(true)
	theme := huh.ThemeBase16()
	rebind(reflect.ValueOf(theme).Elem(), r)
	return tuiStyles{
		bold:  r.NewStyle().Bold(true),
		faint: r.NewStyle().Faint(true),
		warn:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		theme: theme,
	}
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

// Package answers owns canned answers: the TOML answers file (--answers)
// and the single --answer choice, matched against requests so that CI and
// scripts can answer without a human. A canned answer is only ever an
// answer: it goes through the same form validation as a person's.
package answers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/userfile"
)

// File is an answers file: entries tried in order, the first match wins.
type File struct {
	Entries []Entry `toml:"answer"`
}

// Entry matches requests and answers them. Empty matchers match anything.
type Entry struct {
	// Matchers.
	Tool       string            `toml:"tool"`       // glob on the tool name
	Server     string            `toml:"server"`     // exact server
	Action     string            `toml:"action"`     // exact action
	Dimensions map[string]string `toml:"dimensions"` // dimension name → glob on its value

	// The answer.
	Choice       form.Choice       `toml:"choice"`
	Message      string            `toml:"message"`
	Grants       []string          `toml:"grants"`
	Scopes       map[string]string `toml:"scopes"`
	WorkdirScope string            `toml:"workdir_scope"`
	Lifetime     string            `toml:"lifetime"`
}

// Load reads and checks the answers file at path (a user file: refused when
// others could write it).
func Load(path string) (*File, error) {
	b, err := userfile.Read(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse decodes an answers file strictly: unknown keys, unknown choices and
// rule fields on a one-time choice are errors.
func Parse(b []byte) (*File, error) {
	var f File
	if err := userfile.DecodeTOML(b, &f); err != nil {
		return nil, err
	}
	for i, e := range f.Entries {
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("answer %d: %w", i+1, err)
		}
	}
	return &f, nil
}

// Choices are the choices a canned answer may give.
var Choices = []form.Choice{form.AllowOnce, form.DenyOnce, form.AllowAlways, form.DenyAlways, form.AllowSession}

func (e Entry) check() error {
	if e.Choice == "" {
		return errors.New("choice: missing")
	}
	if !slices.Contains(Choices, e.Choice) {
		names := make([]string, len(Choices))
		for i, c := range Choices {
			names[i] = string(c)
		}
		return fmt.Errorf("choice: unknown %q (valid: %s)", e.Choice, strings.Join(names, ", "))
	}
	if e.Tool != "" && !doublestar.ValidatePattern(e.Tool) {
		return fmt.Errorf("tool: invalid glob %q", e.Tool)
	}
	for name, pattern := range e.Dimensions {
		if !doublestar.ValidatePattern(pattern) {
			return fmt.Errorf("dimensions.%s: invalid glob %q", name, pattern)
		}
	}
	if !e.Choice.IsAlways() && (e.Grants != nil || e.Scopes != nil || e.WorkdirScope != "" || e.Lifetime != "") {
		return fmt.Errorf("grants, scopes, workdir_scope and lifetime belong to always-choices, not %s", e.Choice)
	}
	if e.Choice == form.DenyAlways && e.Grants != nil {
		return errors.New("grants: a deny-always rule grants nothing")
	}
	return nil
}

// Match returns the first entry matching req.
func (f *File) Match(req *decision.Request) (Entry, bool) {
	for _, e := range f.Entries {
		if e.matches(req) {
			return e, true
		}
	}
	return Entry{}, false
}

func (e Entry) matches(req *decision.Request) bool {
	if e.Tool != "" && !decision.Glob(e.Tool, req.Tool) {
		return false
	}
	if e.Server != "" && e.Server != req.Server {
		return false
	}
	if e.Action != "" && e.Action != req.Action {
		return false
	}
	for name, pattern := range e.Dimensions {
		i := slices.IndexFunc(req.Dimensions, func(d decision.Dimension) bool { return d.Name == name })
		if i < 0 || !decision.Glob(pattern, req.Dimensions[i].Value) {
			return false
		}
	}
	return true
}

// Answer is the form answer e gives: the form's defaults, with what e sets.
// Validation is the form's job (form.Decide).
func (e Entry) Answer(f *form.Form) form.Answer {
	a := f.Defaults()
	a.Choice = e.Choice
	a.Message = e.Message
	if e.Grants != nil {
		a.Grants = e.Grants
	}
	for name, match := range e.Scopes {
		a.Scopes[name] = match
	}
	if e.WorkdirScope != "" {
		a.WorkdirScope = e.WorkdirScope
	}
	if e.Lifetime != "" {
		a.Lifetime = e.Lifetime
	}
	return a
}

// Single is the answers of --answer CHOICE [--message TEXT]: one entry
// that matches every request and takes the form's defaults for an
// always-choice.
func Single(choice, message string) (*File, error) {
	e := Entry{Choice: form.Choice(choice), Message: message}
	if err := e.check(); err != nil {
		return nil, err
	}
	return &File{Entries: []Entry{e}}, nil
}

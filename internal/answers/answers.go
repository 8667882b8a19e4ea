// Package answers owns canned answers: the TOML answers file (--answers)
// and the single --answer choice, matched against requests so that CI and
// scripts can answer without a human. A canned answer is only ever an
// answer: it goes through the same form validation as a person's.
package answers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/userfile"
)

// File is an answers file: entries tried in order, the first match wins.
type File struct {
	Entries []Entry `toml:"answer"`
}

// Entry matches requests and answers them. Its matchers are globs
// (decision.Pattern: a wildcard never matches a character that starts
// another shell command); all that are given must match, and a request
// field that is missing or empty never matches a given matcher. An entry
// without matchers matches every request.
type Entry struct {
	// Matchers.
	Tool       string            `toml:"tool"`
	Server     string            `toml:"server"`
	Source     string            `toml:"source"`
	Action     string            `toml:"action"`
	Dimensions map[string]string `toml:"dimensions"` // dimension name → glob on its value

	// The answer.
	Choice       form.Choice       `toml:"choice"`
	Message      string            `toml:"message"`
	Grants       []string          `toml:"grants"`
	Scopes       map[string]string `toml:"scopes"`
	WorkdirScope string            `toml:"workdir_scope"`
	Lifetime     string            `toml:"lifetime"`

	// compiled is set by check: an entry that was not checked matches
	// nothing.
	compiled *matchers
}

// matchers are an entry's globs, compiled once.
type matchers struct {
	fields []fieldMatcher
	dims   map[string]*decision.Pattern
}

// fieldMatcher is the glob one request field must match.
type fieldMatcher struct {
	glob  *decision.Pattern
	field func(*decision.Request) string
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
	for i := range f.Entries {
		if err := f.Entries[i].check(); err != nil {
			return nil, fmt.Errorf("answer %d: %w", i+1, err)
		}
	}
	return &f, nil
}

// Choices are the choices a canned answer may give.
var Choices = []form.Choice{form.AllowOnce, form.DenyOnce, form.AllowAlways, form.DenyAlways, form.AllowSession}

// check validates e and compiles its matchers.
func (e *Entry) check() error {
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
	if !e.Choice.IsAlways() && (e.Grants != nil || e.Scopes != nil || e.WorkdirScope != "" || e.Lifetime != "") {
		return fmt.Errorf("grants, scopes, workdir_scope and lifetime belong to always-choices, not %s", e.Choice)
	}
	if e.Choice == form.DenyAlways && e.Grants != nil {
		return errors.New("grants: a deny-always rule grants nothing")
	}
	var err error
	e.compiled, err = e.compile()
	return err
}

// compile compiles e's matchers, naming the first invalid one.
func (e *Entry) compile() (*matchers, error) {
	m := &matchers{dims: map[string]*decision.Pattern{}}
	for _, f := range []struct {
		key, glob string
		field     func(*decision.Request) string
	}{
		{"tool", e.Tool, func(r *decision.Request) string { return r.Tool }},
		{"server", e.Server, func(r *decision.Request) string { return r.Server }},
		{"source", e.Source, func(r *decision.Request) string { return r.Source }},
		{"action", e.Action, func(r *decision.Request) string { return r.Action }},
	} {
		if f.glob == "" {
			continue
		}
		p, err := decision.CompileGlob(f.glob)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		m.fields = append(m.fields, fieldMatcher{p, f.field})
	}
	for _, name := range slices.Sorted(maps.Keys(e.Dimensions)) {
		p, err := decision.CompileGlob(e.Dimensions[name])
		if err != nil {
			return nil, fmt.Errorf("dimensions.%s: %w", name, err)
		}
		m.dims[name] = p
	}
	return m, nil
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
	if e.compiled == nil {
		return false
	}
	for _, m := range e.compiled.fields {
		if v := m.field(req); v == "" || !m.glob.Match(v) {
			return false
		}
	}
	for name, p := range e.compiled.dims {
		i := slices.IndexFunc(req.Dimensions, func(d decision.Dimension) bool { return d.Name == name })
		if i < 0 || !p.Match(req.Dimensions[i].Value) {
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

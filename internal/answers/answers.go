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

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/match"
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

	match    match.Matcher
	compiled bool // set by check: an entry never checked matches nothing
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
	// One compiler for the file: a request's match.Cache keeps the results
	// of the entries' globs by their numbers.
	c := match.NewCompiler()
	for i := range f.Entries {
		if err := f.Entries[i].check(c); err != nil {
			return nil, fmt.Errorf("answer %d: %w", i+1, err)
		}
	}
	return &f, nil
}

// Choices are the choices a canned answer may give.
var Choices = []form.Choice{form.AllowOnce, form.DenyOnce, form.AllowAlways, form.DenyAlways, form.AllowSession}

// check validates e and compiles its matchers.
func (e *Entry) check(c *match.Compiler) error {
	names := make([]string, len(Choices))
	for i, c := range Choices {
		names[i] = string(c)
	}
	if e.Choice == "" {
		return fmt.Errorf("choice: missing (valid: %s)", strings.Join(names, ", "))
	}
	if !slices.Contains(Choices, e.Choice) {
		return fmt.Errorf("choice: unknown %q (valid: %s)", e.Choice, strings.Join(names, ", "))
	}
	if !e.Choice.IsAlways() && (e.Grants != nil || e.Scopes != nil || e.WorkdirScope != "" || e.Lifetime != "") {
		return fmt.Errorf("grants, scopes, workdir_scope and lifetime belong to always-choices, not %s", e.Choice)
	}
	if e.Choice == form.DenyAlways && e.Grants != nil {
		return errors.New("grants: a deny-always rule grants nothing")
	}
	// A plain string is a glob without wildcards; an empty one is no
	// matcher.
	var spec match.Spec
	for i, v := range []string{e.Tool, e.Server, e.Source, e.Action} {
		if v != "" {
			spec.Fields[i] = &v
		}
	}
	spec.Dimensions = e.Dimensions
	var err error
	if e.match, err = c.Matcher(spec); err != nil {
		return err
	}
	e.compiled = true
	return nil
}

// Match returns the first entry matching req.
func (f *File) Match(req *decision.Request) (Entry, bool) {
	c := match.NewCache(req)
	for _, e := range f.Entries {
		// A canned deny errs wide: a path matching in either form.
		if e.compiled && (e.match.Match(c) || !e.Choice.IsAllow() && e.match.MatchWide(c)) {
			return e, true
		}
	}
	return Entry{}, false
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
	return One(Entry{Choice: form.Choice(choice), Message: message})
}

// One is the answers of the one entry e, checked as an answers file's
// entries are (a choice it may give, rule fields only on an
// always-choice).
func One(e Entry) (*File, error) {
	if err := e.check(match.NewCompiler()); err != nil {
		return nil, err
	}
	return &File{Entries: []Entry{e}}, nil
}

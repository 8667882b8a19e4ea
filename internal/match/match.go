// Package match owns the request matchers that canned answers and rules
// share (protocol section 8): globs on a request's tool, server, source
// and action, and on the value of each named dimension; all given must
// match, and a request field that is missing never matches a matcher that
// is given. A Compiler compiles each distinct glob once and numbers it, so
// that a Cache, one per request, computes each glob's result once however
// many matchers share it.
package match

import (
	"fmt"
	"maps"
	"slices"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// Field is a request field a matcher can match.
type Field int

// The fields, in the order of Spec.
const (
	Tool Field = iota
	Server
	Source
	Action
)

var fieldNames = [...]string{"tool", "server", "source", "action"}

// Spec is a matcher as written: nil is no matcher for that field.
type Spec struct {
	Fields     [4]*string        // Tool, Server, Source, Action
	Dimensions map[string]string // dimension name -> glob on its value
}

// Glob is a compiled glob and its number among a compiler's globs.
type Glob struct {
	p  *decision.Pattern
	id int
	// lead are the pattern's plain leading words, for a command line
	// whose known words stop within them (shell.Deny).
	lead []string
}

// Matcher is a compiled Spec.
type Matcher struct {
	fields [4]Glob // p nil: not given
	dims   []dimGlob
}

type dimGlob struct {
	name string
	Glob
}

// Compiler compiles globs, each distinct one once.
type Compiler struct {
	globs map[string]Glob
}

// NewCompiler returns a compiler with no globs yet.
func NewCompiler() *Compiler { return &Compiler{globs: map[string]Glob{}} }

// Glob compiles pattern (see decision.CompileGlob).
func (c *Compiler) Glob(pattern string) (Glob, error) {
	if g, ok := c.globs[pattern]; ok {
		return g, nil
	}
	p, err := decision.CompileGlob(pattern)
	if err != nil {
		return Glob{}, err
	}
	g := Glob{p, len(c.globs), shell.LeadWords(pattern)}
	c.globs[pattern] = g
	return g, nil
}

// Matcher compiles s, naming the first invalid glob ("tool: …",
// "dimensions.path: …").
func (c *Compiler) Matcher(s Spec) (Matcher, error) {
	var m Matcher
	for i, src := range s.Fields {
		if src == nil {
			continue
		}
		g, err := c.Glob(*src)
		if err != nil {
			return Matcher{}, fmt.Errorf("%s: %w", fieldNames[i], err)
		}
		m.fields[i] = g
	}
	for _, name := range slices.Sorted(maps.Keys(s.Dimensions)) {
		g, err := c.Glob(s.Dimensions[name])
		if err != nil {
			return Matcher{}, fmt.Errorf("dimensions.%s: %w", name, err)
		}
		m.dims = append(m.dims, dimGlob{name, g})
	}
	return m, nil
}

// Match reports whether every matcher of m matches the cache's request,
// for an allow: a dimension's value must match in every form, as written
// and, unless it is a command line, cleaned and resolved
// (decision.Pattern.Allows).
func (m Matcher) Match(c *Cache) bool { return m.match(c, false) == shell.Covered }

// Wide is Match for a deny (or a question): a dimension's value matches
// in any of its forms (decision.Pattern.Denies), and a value read as a
// command line matches when one of its simple commands does
// (shell.Line.Denied), or Maybe, where the value is a command line
// (shell.IsLine), when a computed command cannot be shown not to.
func (m Matcher) Wide(c *Cache) shell.Cover { return m.match(c, true) }

// MatchWide reports whether m matches c's request for a deny that has
// nobody to ask (a canned answer): Wide, a maybe counting as a match.
func (m Matcher) MatchWide(c *Cache) bool { return m.Wide(c) != shell.Not }

func (m Matcher) match(c *Cache, wide bool) shell.Cover {
	for i, g := range m.fields {
		if g.p != nil && !c.Field(Field(i), g) {
			return shell.Not
		}
	}
	out := shell.Covered
	for _, d := range m.dims {
		r := c.dim(d.name, d.Glob)
		switch {
		case !wide && !r.allow:
			return shell.Not
		case wide && !r.deny:
			out = min(out, c.command(d.name, d.Glob))
		}
	}
	return out
}

// Cache keeps the results of globs for one request, by their numbers: it
// serves the matchers of one Compiler only.
type Cache struct {
	req    *decision.Request
	fields [4][]int8 // per field, per glob number: 0 not yet, 1 no, 2 yes
	dims   map[dimKey]dimResult
	// commands are the wide results on the simple commands of a
	// dimension's value, read once (lines).
	commands map[dimKey]shell.Cover
	lines    map[string]shell.Line
}

// dimResult is a glob's result on a dimension, for an allow and for a
// deny; both false for a missing dimension.
type dimResult struct{ allow, deny bool }

type dimKey struct {
	id   int
	name string
}

// NewCache returns an empty cache for req.
func NewCache(req *decision.Request) *Cache { return &Cache{req: req} }

// Field reports whether g matches the request's field f; a missing field
// never matches.
func (c *Cache) Field(f Field, g Glob) bool {
	value := [4]string{c.req.Tool, c.req.Server, c.req.Source, c.req.Action}[f]
	if value == "" {
		return false
	}
	hits := c.fields[f]
	if g.id >= len(hits) {
		hits = append(hits, make([]int8, g.id+1-len(hits))...)
		c.fields[f] = hits
	}
	if hits[g.id] == 0 {
		hits[g.id] = 1
		if g.p.Match(value) {
			hits[g.id] = 2
		}
	}
	return hits[g.id] == 2
}

// command reports how far g, a deny, reaches a simple command of the
// value of the request's dimension name, read as a command line.
func (c *Cache) command(name string, g Glob) shell.Cover {
	k := dimKey{g.id, name}
	m, ok := c.commands[k]
	if ok {
		return m
	}
	if i := slices.IndexFunc(c.req.Dimensions, func(d decision.Dimension) bool { return d.Name == name }); i >= 0 {
		l, ok := c.lines[name]
		if !ok {
			l = shell.Split(c.req.Dimensions[i].Value)
			if c.lines == nil {
				c.lines = map[string]shell.Line{}
			}
			c.lines[name] = l
		}
		m = l.Denied(shell.Deny{Covers: g.p.Match, Lead: g.lead})
		if m == shell.Maybe && !shell.IsLine(c.req.Dimensions[i]) {
			m = shell.Not
		}
	}
	if c.commands == nil {
		c.commands = map[dimKey]shell.Cover{}
	}
	c.commands[k] = m
	return m
}

// dim is g's result on the value of the request's dimension name.
func (c *Cache) dim(name string, g Glob) dimResult {
	k := dimKey{g.id, name}
	m, ok := c.dims[k]
	if !ok {
		if i := slices.IndexFunc(c.req.Dimensions, func(d decision.Dimension) bool { return d.Name == name }); i >= 0 {
			d := c.req.Dimensions[i]
			m = dimResult{g.p.Allows(d), g.p.Denies(d)}
		}
		if c.dims == nil {
			c.dims = map[dimKey]dimResult{}
		}
		c.dims[k] = m
	}
	return m
}

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
	"strings"
	"sync"

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
	// OnlyDimensions narrows an allow to requests with no dimension but
	// those Dimensions names: a request that adds one is not covered.
	OnlyDimensions bool
}

// Glob is a compiled glob and its number among a compiler's globs.
type Glob struct {
	p   *decision.Pattern
	id  int
	src string // as written
	// allow is the glob as an allow applies it to a simple command of a
	// command line: word by word (shell.Glob).
	allow *allowGlob
	// lead are the pattern's plain leading words, for a command line
	// whose known words stop within them (shell.Deny).
	lead []string
	// head is the pattern's first plain word when the pattern starts with
	// it: a value it matches as written starts with that word.
	head string
}

// allowGlob is a glob as an allow applies it to a simple command,
// compiled when first needed: most globs never meet a command line.
type allowGlob struct {
	once sync.Once
	src  string
	g    *shell.Glob
}

// covers is shell.Glob.Covers. The pattern compiled as a glob already,
// so it compiles word by word too; were it not to, it would cover
// nothing.
func (a *allowGlob) covers(c shell.Command) bool {
	a.once.Do(func() { a.g, _ = shell.CompileGlob(a.src) })
	return a.g != nil && a.g.Covers(c)
}

// deny is g as a deny meets a command line: on the words joined, and
// on each command as g's allow reads it.
func (g Glob) deny() shell.Deny {
	return shell.Deny{Covers: g.p.Match, Lead: g.lead, Each: g.allow.covers}
}

// Matcher is a compiled Spec.
type Matcher struct {
	fields [4]Glob // p nil: not given
	dims   []dimGlob
	only   bool // Spec.OnlyDimensions
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
	g := Glob{p: p, id: len(c.globs), src: pattern, allow: &allowGlob{src: pattern}, lead: shell.LeadWords(pattern)}
	if len(g.lead) > 0 && strings.HasPrefix(pattern, g.lead[0]) {
		g.head = g.lead[0]
	}
	c.globs[pattern] = g
	return g, nil
}

// Matcher compiles s, naming the first invalid glob ("tool: …",
// "dimensions.path: …").
func (c *Compiler) Matcher(s Spec) (Matcher, error) {
	m := Matcher{only: s.OnlyDimensions}
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
// (decision.Pattern.Allows); the value of a command line (a dimension of
// syntax shell) only when every one of its simple commands is static and
// matches word by word (protocol section 10: shell.Line.Allowed,
// shell.Glob.Covers).
func (m Matcher) Match(c *Cache) bool {
	ok, part := m.Allows(c)
	return ok && part == nil
}

// Part is how far an allow reaches a command line it covers only in
// part: which of the simple commands of dimension Dim (by their index in
// shell.Line.Commands) it covers. Another allow may cover the others
// (protocol section 10, "Opinions").
type Part struct {
	Dim     string
	Covered []bool
}

// Full reports whether p covers every command.
func (p Part) Full() bool { return !slices.Contains(p.Covered, false) }

// Allows reports whether m matches the cache's request for an allow, as
// Match does, or in part: every matcher holds but the glob on one command
// line, which covers some of its simple commands and not all (part, nil
// when m matches wholly). A matcher that covers two command lines only in
// part allows nothing: its allow of a command of one line would hang on
// what runs in the other.
//
// With OnlyDimensions, a request with a dimension m names no glob for is
// not allowed: the dimensions a rule was written for are all it speaks
// of.
func (m Matcher) Allows(c *Cache) (ok bool, part *Part) {
	if m.only && !m.namesAll(c.req.Dimensions) {
		return false, nil
	}
	for i, g := range m.fields {
		if g.p != nil && !c.Field(Field(i), g) {
			return false, nil
		}
	}
	for _, d := range m.dims {
		i, shellDim := c.shellDim(d.name)
		if !shellDim {
			if !c.dim(d.name, d.Glob).allow {
				return false, nil
			}
			continue
		}
		cov := c.allowed(i, d.Glob)
		switch {
		case cov.n == 0:
			return false, nil
		case cov.n == len(c.line(i).Commands) && c.line(i).Parsed:
			continue
		case part != nil:
			return false, nil
		}
		part = &Part{Dim: d.name, Covered: cov.covered}
	}
	return true, part
}

// namesAll reports whether m holds a glob on every dimension of dims.
func (m Matcher) namesAll(dims []decision.Dimension) bool {
	for _, d := range dims {
		if !slices.ContainsFunc(m.dims, func(g dimGlob) bool { return g.name == d.Name }) {
			return false
		}
	}
	return true
}

// Wide is Match for a deny (or a question): a dimension's value matches
// in any of its forms (decision.Pattern.Denies), and a value read as a
// command line matches when one of its simple commands does
// (shell.Line.Denied), or Maybe, where the value is a command line
// (shell.IsLine), when a computed command cannot be shown not to.
// OnlyDimensions, which narrows an allow, has no part: a deny covers the
// most.
func (m Matcher) Wide(c *Cache) shell.Cover {
	for i, g := range m.fields {
		if g.p != nil && !c.Field(Field(i), g) {
			return shell.Not
		}
	}

	out := shell.Covered
	for _, d := range m.dims {
		if !c.wholeDenied(d.name, d.Glob) {
			out = min(out, c.command(d.name, d.Glob))
		}
	}
	return out
}

// Head is the first dimension, by name, whose glob starts with a plain
// word, and that word: a rules index files m under it (Cache.Heads). ""
// when no glob does.
func (m Matcher) Head() (dim, head string) {
	for _, d := range m.dims {
		if d.head != "" {
			return d.name, d.head
		}
	}
	return "", ""
}

// Heads says which heads (Matcher.Head) of a glob on the request's
// dimension name may match the request, for an allow or a deny: on a
// command line (syntax shell) the first word of a static command, a word
// of any command or its shell.Name, and the value's first word; every
// head (all) on a line with a computed command or a word cut short (a
// deny may reach them whatever its words), and on any other dimension.
// present is false when the request has no such dimension: no glob on it
// matches.
func (c *Cache) Heads(name string) (heads map[string]bool, all, present bool) {
	i := slices.IndexFunc(c.req.Dimensions, func(d decision.Dimension) bool { return d.Name == name })
	if i < 0 {
		return nil, false, false
	}
	if !c.req.Dimensions[i].IsShell() {
		return nil, true, true
	}
	l := c.line(i)
	return l.names, l.computed || len(l.partials) > 0, true
}

// MatchWide reports whether m matches c's request for a deny that has
// nobody to ask (a canned answer): Wide, a maybe counting as a match.
func (m Matcher) MatchWide(c *Cache) bool { return m.Wide(c) != shell.Not }

// CommandsWide says, for each command line m holds a glob on, which of
// its simple commands the glob reaches for a deny (shell.Line.Denied of
// each command alone, a Maybe counting): what a deny says of each command,
// for a person to read. Only the commands of a request m matches are
// worth the reading.
func (m Matcher) CommandsWide(c *Cache) []Part {
	var out []Part
	for _, d := range m.dims {
		i, ok := c.shellDim(d.name)
		if !ok {
			continue
		}
		l := c.line(i)
		p := Part{Dim: d.name, Covered: make([]bool, len(l.Commands))}
		for k := range l.Commands {
			one := shell.Line{Commands: l.Commands[k : k+1], Parsed: l.Parsed}
			p.Covered[k] = d.p.Match(l.Commands[k].Text) || one.Denied(d.deny()) != shell.Not
		}
		out = append(out, p)
	}
	return out
}

// Cache keeps the results of globs for one request, by their numbers: it
// serves the matchers of one Compiler only.
type Cache struct {
	req    *decision.Request
	fields [4][]int8 // per field, per glob number: 0 not yet, 1 no, 2 yes
	dims   map[dimKey]dimResult
	// lines are the dimensions' values read as command lines, by the
	// dimension's index, each with its globs' results.
	lines map[int]*lineIndex
}

// lineIndex is a dimension's value read as a command line, its static
// commands filed by the first word of their MatchText: a glob
// whose pattern starts with a plain word is tried only on the commands
// starting with it.
type lineIndex struct {
	shell.Line
	byFirst map[string][]int
	rest    []int // the static commands, for a glob with no plain first word
	// names are the words of every command that may name the command
	// run from them (each word without a blank, and its shell.Name),
	// partials the known starts of a last word cut short, and computed
	// says a command is: what decides, for a glob with a plain first
	// word, whether a deny's reading may cover the line (denied).
	names    map[string]bool
	partials []string
	computed bool
	// By glob number: the wide and the allow results on the line's
	// commands, of the globs a request met (an index spares the others).
	wide   map[int]shell.Cover
	allows map[int]cover
}

// denied is shell.Line.Denied of glob g, sparing the reading of the
// line where it cannot cover: a pattern whose first word is plain (Lead)
// covers a reading only from a word that is that word, or names it, or a
// start of it cut short (within); otherwise only a computed command
// makes it Maybe. TestDeniedSparesNothing holds it to shell's reading.
func (l *lineIndex) denied(g Glob) shell.Cover {
	if len(g.lead) > 0 && !l.names[g.lead[0]] && !slices.ContainsFunc(l.partials, func(p string) bool { return strings.HasPrefix(g.lead[0], p) }) {
		if l.computed {
			return shell.Maybe
		}
		return shell.Not
	}
	return l.Denied(g.deny())
}

// cover is a glob's allow on the commands of one command line: which it
// covers, and how many.
type cover struct {
	covered []bool
	n       int
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
	i := slices.IndexFunc(c.req.Dimensions, func(d decision.Dimension) bool { return d.Name == name })
	if i < 0 {
		return shell.Not
	}
	l := c.line(i)
	m, ok := l.wide[g.id]
	if !ok {
		m = l.denied(g)
		if m == shell.Maybe && !shell.IsLine(c.req.Dimensions[i]) {
			m = shell.Not
		}
		l.wide[g.id] = m
	}
	return m
}

// wholeDenied is g's deny result on the value of the request's dimension
// name as a whole; on a command line, which is matched as written only,
// a pattern with a plain first word spares the glob on a value that does
// not start with that word.
func (c *Cache) wholeDenied(name string, g Glob) bool {
	if i, ok := c.shellDim(name); ok && g.head != "" {
		v := c.req.Dimensions[i].Value
		rest, ok := strings.CutPrefix(v, g.head)
		if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return false
		}
	}
	return c.dim(name, g).deny
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

// shellDim is the index of the request's dimension name when it is a
// command line (syntax shell).
func (c *Cache) shellDim(name string) (int, bool) {
	i := slices.IndexFunc(c.req.Dimensions, func(d decision.Dimension) bool { return d.Name == name })
	return i, i >= 0 && c.req.Dimensions[i].IsShell()
}

// line is the value of the request's dimension i read as a command line,
// once.
func (c *Cache) line(i int) *lineIndex {
	if l, ok := c.lines[i]; ok {
		return l
	}
	l := &lineIndex{Line: shell.Of(c.req.Dimensions[i]), byFirst: map[string][]int{}, names: map[string]bool{},
		wide: map[int]shell.Cover{}, allows: map[int]cover{}}
	for k, cmd := range l.Commands {
		l.computed = l.computed || cmd.Computed
		for j, w := range cmd.Words {
			l.names[w], l.names[shell.Name(w)] = true, true
			if cmd.Partial && j == len(cmd.Words)-1 {
				l.partials = append(l.partials, w, shell.Name(w))
			}
		}
		if !l.Parsed || !cmd.Static() {
			continue
		}
		first := firstWord(cmd.MatchText())
		l.byFirst[first] = append(l.byFirst[first], k)
		l.names[first] = true
		l.rest = append(l.rest, k)
	}
	l.names[firstWord(c.req.Dimensions[i].Value)] = true
	if c.lines == nil {
		c.lines = map[int]*lineIndex{}
	}
	c.lines[i] = l
	return l
}

// firstWord is s up to its first blank.
func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// allowed is g's allow on the simple commands of the command line of
// dimension i: shell.Line.Covered by g's word-by-word glob (protocol
// section 10), tried only on the static commands the index files under
// g's first word. TestAllowsAgreesWithShell holds it to shell's.
func (c *Cache) allowed(i int, g Glob) cover {
	l := c.line(i)
	if r, ok := l.allows[g.id]; ok {
		return r
	}
	var r cover
	candidates := l.rest
	if len(g.lead) > 0 {
		candidates = l.byFirst[g.lead[0]]
	}
	for _, j := range candidates {
		if g.allow.covers(l.Commands[j]) {
			if r.covered == nil {
				r.covered = make([]bool, len(l.Commands))
			}
			r.covered[j] = true
			r.n++
		}
	}
	l.allows[g.id] = r
	return r
}

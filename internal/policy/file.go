package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/theory/jsonpath"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/shell"
	"github.com/askperm/askperm/internal/userfile"
)

// fileTOML is a rules file as written (protocol section 8).
type fileTOML struct {
	Rules       []*ruleTOML      `toml:"rule"`
	Verbs       *verbsTOML       `toml:"verbs"`
	Annotations []annotationTOML `toml:"annotations"`
}

type ruleTOML struct {
	Name          string            `toml:"name" json:",omitempty"`
	Decision      string            `toml:"decision" json:",omitempty"`
	Message       string            `toml:"message" json:",omitempty"`
	Justification string            `toml:"justification" json:",omitempty"`
	Tool          *string           `toml:"tool" json:",omitempty"`
	Server        *string           `toml:"server" json:",omitempty"`
	Source        *string           `toml:"source" json:",omitempty"`
	Action        *string           `toml:"action" json:",omitempty"`
	Dimensions    map[string]string `toml:"dimensions" json:",omitempty"`
	When          []predicateTOML   `toml:"when" json:",omitempty"`
	Match         []map[string]any  `toml:"match" json:",omitempty"`
	NotMatch      []map[string]any  `toml:"not_match" json:",omitempty"`
	MatchAll      bool              `toml:"match_all" json:",omitempty"`
	// OnlyDimensions: an allow covers no request with a dimension the
	// rule's dimensions do not name.
	OnlyDimensions bool `toml:"only_dimensions" json:",omitempty"`
}

type predicateTOML struct {
	Path   string  `toml:"path" json:",omitempty"`
	Equals any     `toml:"equals" json:",omitempty"`
	In     []any   `toml:"in"` // [] holds for nothing: not omitted
	Regex  *string `toml:"regex" json:",omitempty"`
	Exists *bool   `toml:"exists" json:",omitempty"`
	Prefix []any   `toml:"prefix"`
}

type verbsTOML struct {
	AlwaysRequire []string            `toml:"always_require"`
	Require       []string            `toml:"require"`
	Auto          []string            `toml:"auto"`
	BulkLimit     int                 `toml:"bulk_limit"`
	Allowlist     []string            `toml:"allowlist"`
	Roles         map[string][]string `toml:"roles"`
}

type annotationTOML struct {
	Tool string `toml:"tool"`
	Mode string `toml:"mode"`
}

// Rule is one compiled rule of a rules file.
type Rule struct {
	Name          string
	Verdict       Verdict
	Message       string
	Justification string
	file          string
	match         match.Matcher
	when          []predicate
}

// compiler compiles each distinct glob and path once, so that rules
// sharing them share the compiled form, and a request's check computes
// each once: they are numbered, and a check keeps their results by number.
type compiler struct {
	globs      *match.Compiler
	paths      map[string]pathRef
	everyValue map[everythingKey]bool
}

type pathRef struct {
	p   *jsonpath.Path
	id  int
	src string // as written
}

func newCompiler() *compiler {
	return &compiler{globs: match.NewCompiler(), paths: map[string]pathRef{}, everyValue: map[everythingKey]bool{}}
}

func (c *compiler) path(s string) (pathRef, error) {
	if p, ok := c.paths[s]; ok {
		return p, nil
	}
	p, err := jsonpath.Parse(s)
	if err != nil {
		return pathRef{}, err
	}
	ref := pathRef{p, len(c.paths), s}
	c.paths[s] = ref
	return ref, nil
}

// parseFile compiles the rules file named name (for messages) from b
// with c, which the files of one policy share.
func parseFile(c *compiler, name string, b []byte) (*Policy, error) {
	var f fileTOML
	if err := decodeRules(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Policy{written: &written{verbs: f.Verbs, annotations: f.Annotations}}
	var examples [][]example
	for i, rt := range f.Rules {
		r, exs, err := c.rule(name, i+1, rt)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
		p.written.rules = append(p.written.rules, writtenRule{name, i + 1, rt})
		examples = append(examples, exs)
	}
	if f.Verbs != nil {
		v, err := compileVerbs(*f.Verbs)
		if err != nil {
			return nil, fmt.Errorf("%s: verbs: %w", name, err)
		}
		p.verbs, p.verbsFile = v, name
	}
	for i, at := range f.Annotations {
		a, err := c.annotation(at)
		if err != nil {
			return nil, fmt.Errorf("%s: annotations %d: %w", name, i+1, err)
		}
		p.annotations = append(p.annotations, a)
	}
	if len(f.Annotations) > 0 {
		p.annotationsFile = name
	}
	p.buildIndex() // the examples are checked as requests are
	for i, r := range p.rules {
		for _, ex := range examples[i] {
			if err := p.holds(r, ex); err != nil {
				return nil, fmt.Errorf("%s: rule %q: %w", name, r.Name, err)
			}
		}
	}
	return p, nil
}

// example is one [[rule.match]] (want) or [[rule.not_match]] of a rule,
// as a request.
type example struct {
	kind string // "match" or "not_match"
	n    int
	req  *decision.Request
	want bool
}

// holds checks one of rule r's examples against the whole file p, every
// rule, the verb policy and the annotation policy combined: the file
// decides a match example as r does, and does not allow a not_match
// example of an allow rule. A file that says one thing in a rule and does
// another as a whole would mislead whoever reads it.
func (p *Policy) holds(r *Rule, ex example) error {
	got, winners := Combine(p.Opinions(ex.req))
	by := make([]string, len(winners))
	for i, o := range winners {
		by[i] = o.Name
	}
	switch {
	case ex.want && got != r.Verdict:
		return fmt.Errorf("%s %d: the file decides %s (by %s), not the rule's %s", ex.kind, ex.n, got, strings.Join(by, ", "), r.Verdict)
	case !ex.want && r.Verdict == Allow && got == Allow:
		return fmt.Errorf("%s %d: the file allows it all the same (by %s)", ex.kind, ex.n, strings.Join(by, ", "))
	}
	return nil
}

// decodeRules decodes a rules file strictly. Values and examples are any
// TOML value, with keys of their own.
func decodeRules(b []byte, f *fileTOML) error { return userfile.DecodeTOML(b, f) }

// verdicts are a rule's decisions; allow is the default.
var verdicts = map[string]Verdict{"": Allow, "allow": Allow, "prompt": Prompt, "deny": Deny}

// rule compiles one rule, and its examples, each checked against the
// rule alone here (against the whole file once it is compiled).
func (c *compiler) rule(file string, n int, rt *ruleTOML) (*Rule, []example, error) {
	r := &Rule{Name: rt.Name, Message: rt.Message, Justification: rt.Justification, file: file}
	if r.Name == "" {
		r.Name = fmt.Sprintf("%s#%d", file, n)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: rule %q: %s", file, r.Name, fmt.Sprintf(format, args...))
	}
	v, ok := verdicts[rt.Decision]
	if !ok {
		return nil, nil, fail("decision: %q is none of allow, prompt, deny", rt.Decision)
	}
	r.Verdict = v
	var err error
	spec := match.Spec{Fields: [4]*string{rt.Tool, rt.Server, rt.Source, rt.Action}, Dimensions: rt.Dimensions, OnlyDimensions: rt.OnlyDimensions}
	if r.match, err = c.globs.Matcher(spec); err != nil {
		return nil, nil, fail("%v", err)
	}
	if err := c.matchesAll(rt, v); err != nil {
		return nil, nil, fail("%v", err)
	}
	for i, pt := range rt.When {
		p, err := c.predicate(pt)
		if err != nil {
			return nil, nil, fail("when %d: %v", i+1, err)
		}
		r.when = append(r.when, p)
	}
	var examples []example
	for _, ex := range []struct {
		kind string
		reqs []map[string]any
		want bool
	}{{"match", rt.Match, true}, {"not_match", rt.NotMatch, false}} {
		for i, partial := range ex.reqs {
			req, err := exampleRequest(partial)
			if err != nil {
				return nil, nil, fail("%s %d: %v", ex.kind, i+1, err)
			}
			if r.Matches(req) != ex.want {
				verb := "does not match"
				if !ex.want {
					verb = "matches"
				}
				return nil, nil, fail("%s %d: the rule %s its own example", ex.kind, i+1, verb)
			}
			examples = append(examples, example{ex.kind, i + 1, req, ex.want})
		}
	}
	return r, examples, nil
}

// matchesAll refuses a rule that matches every request without saying
// so (match_all = true): one with no matcher at all, or an allow whose
// globs all match everything "*" does (matchesEverything: "*", "?*",
// "{*,x}" alike) and that has no predicate. A deny or prompt of "*"
// narrows nothing either, but erring that way takes nothing from the
// person. match_all = true beside a matcher that narrows is refused too:
// the rule would say two things. The globs compile (c.globs.Matcher).
func (c *compiler) matchesAll(rt *ruleTOML, v Verdict) error {
	given, narrows := len(rt.When) > 0, len(rt.When) > 0
	glob := func(src string, name, dimension bool) {
		given = true
		if !narrows {
			narrows = !c.everything(everythingKey{src, name, dimension})
		}
	}
	// A server's name may hold a '/' (one taken from a command line:
	// "npx @scope/server"); a tool's, source's or action's does not.
	for _, g := range []*string{rt.Tool, rt.Source, rt.Action} {
		if g != nil {
			glob(*g, true, false)
		}
	}
	if rt.Server != nil {
		glob(*rt.Server, false, false)
	}
	for _, g := range rt.Dimensions {
		glob(g, false, true)
	}
	switch {
	case rt.MatchAll && narrows:
		return errors.New("match_all = true, yet matchers narrow the rule: give one or the other")
	case rt.MatchAll:
		return nil
	case !given:
		return errors.New("no matcher (tool, server, source, action, dimensions, when): it matches every request; say match_all = true if that is meant")
	case !narrows && v == Allow:
		return errors.New("its globs match every value \"*\" matches: it allows nearly every request; narrow it, or say match_all = true if that is meant")
	}
	return nil
}

// everything is matchesEverything of glob k.src, or, on a dimension,
// coversEveryCommand (a value may be a command line), computed once per
// glob and kind of field.
func (c *compiler) everything(k everythingKey) bool {
	if e, ok := c.everyValue[k]; ok {
		return e
	}
	p, err := decision.CompileGlob(k.src)
	e := err == nil && (matchesEverything(p, k.src, k.name) || k.dimension && coversEveryCommand(k.src))
	c.everyValue[k] = e
	return e
}

type everythingKey struct {
	src             string
	name, dimension bool
}

// exampleRequest is a rule's example as a request: the TOML table as the
// request's JSON, read by the protocol's strict parser.
func exampleRequest(partial map[string]any) (*decision.Request, error) {
	b, err := json.Marshal(partial)
	if err != nil {
		return nil, err
	}
	return decision.Parse(b)
}

// Matches reports whether every matcher and predicate of r holds for req.
// A request field that is missing never matches a matcher that is given.
// An allow that covers only some commands of a command line does not
// match it: by itself it allows none of it.
func (r *Rule) Matches(req *decision.Request) bool {
	v, parts := r.opinion(req, newLazyArgs(req))
	return v != Abstain && (v != Allow || parts == nil)
}

// lazyArgs is what checking one request against many rules computes
// once: the globs' results (match.Cache), its arguments decoded when a
// predicate first needs them, and what each path selects, kept by the
// path's number.
type lazyArgs struct {
	*match.Cache
	req     *decision.Request
	done    bool
	v       any
	invalid bool
	paths   [][]any
	have    []bool
}

func newLazyArgs(req *decision.Request) *lazyArgs {
	return &lazyArgs{Cache: match.NewCache(req), req: req}
}

func (l *lazyArgs) get() (any, bool) {
	if !l.done {
		l.done = true
		l.v, l.invalid = argumentsOf(l.req)
		l.invalid = !l.invalid
	}
	return l.v, !l.invalid
}

func (l *lazyArgs) selected(path pathRef, args any) []any {
	if path.id >= len(l.paths) {
		l.paths = append(l.paths, make([][]any, path.id+1-len(l.paths))...)
		l.have = append(l.have, make([]bool, path.id+1-len(l.have))...)
	}
	if !l.have[path.id] {
		l.paths[path.id], l.have[path.id] = path.p.Select(args), true
	}
	return l.paths[path.id]
}

// opinion is r's verdict on req, Abstain when r does not match. A deny
// or a question errs wide: a path matching in either form, a command
// line when any command it may run matches; a deny that cannot be shown
// not to match a computed command (shell.Maybe) is a question.
//
// An allow over a command line covers the simple commands its glob
// matches (match.Matcher.Allows): all of them, or some, the others being
// other rules' to allow (parts). A deny's or question's parts say which
// commands it reaches.
func (r *Rule) opinion(req *decision.Request, args *lazyArgs) (Verdict, []match.Part) {
	v := r.Verdict
	var parts []match.Part
	if v == Allow {
		ok, part := r.match.Allows(args.Cache)
		if !ok {
			return Abstain, nil
		}
		if part != nil {
			parts = []match.Part{*part}
		}
	} else {
		switch r.match.Wide(args.Cache) {
		case shell.Not:
			return Abstain, nil
		case shell.Maybe:
			v = Prompt
		}
	}
	if len(r.when) > 0 {
		a, ok := args.get()
		if !ok {
			return Abstain, nil
		}
		for _, p := range r.when {
			if !p.holdsFor(args.selected(p.path, a)) {
				return Abstain, nil
			}
		}
	}
	if r.Verdict != Allow {
		parts = r.match.CommandsWide(args.Cache)
	}
	return v, parts
}

// argumentsOf decodes a request's arguments for predicates, numbers kept
// as json.Number so that they compare by value.
func argumentsOf(req *decision.Request) (any, bool) {
	if req.Arguments == nil {
		return nil, true
	}
	d := json.NewDecoder(strings.NewReader(string(req.Arguments)))
	d.UseNumber()
	var v any
	return v, d.Decode(&v) == nil
}

// predicate is one compiled [[rule.when]].
type predicate struct {
	path   pathRef
	op     string
	values []any // equals: one; in and prefix: the list
	regex  *regexp.Regexp
	exists bool
}

func (c *compiler) predicate(pt predicateTOML) (predicate, error) {
	var p predicate
	if pt.Path == "" {
		return p, errors.New("path: missing")
	}
	path, err := c.path(pt.Path)
	if err != nil {
		return p, fmt.Errorf("path %q: %v", pt.Path, err)
	}
	if path.p.Query().Singular() == nil {
		return p, fmt.Errorf("path %q: not a singular path (one value at most: $.a.b, $['k'], $.a[0])", pt.Path)
	}
	p.path = path
	var ops []string
	if pt.Equals != nil {
		v, err := jsonValue(pt.Equals)
		if err != nil {
			return p, fmt.Errorf("equals: %v", err)
		}
		ops, p.op, p.values = append(ops, "equals"), "equals", []any{v}
	}
	if pt.In != nil {
		vs, err := jsonValues(pt.In)
		if err != nil {
			return p, fmt.Errorf("in: %v", err)
		}
		ops, p.op, p.values = append(ops, "in"), "in", vs
	}
	if pt.Regex != nil {
		re, err := regexp.Compile(*pt.Regex)
		if err != nil {
			return p, fmt.Errorf("regex: %v", err)
		}
		ops, p.op, p.regex = append(ops, "regex"), "regex", re
	}
	if pt.Exists != nil {
		ops, p.op, p.exists = append(ops, "exists"), "exists", *pt.Exists
	}
	if pt.Prefix != nil {
		vs, err := jsonValues(pt.Prefix)
		if err != nil {
			return p, fmt.Errorf("prefix: %v", err)
		}
		ops, p.op, p.values = append(ops, "prefix"), "prefix", vs
	}
	switch len(ops) {
	case 0:
		return p, errors.New("no operation: give one of equals, in, regex, exists, prefix")
	case 1:
		return p, nil
	}
	return p, fmt.Errorf("two operations (%s): give one", strings.Join(ops, ", "))
}

// holdsFor reports whether the predicate holds for what its path
// selected. A path that does not resolve fails every operation but
// exists = false.
func (p predicate) holdsFor(found []any) bool {
	if p.op == "exists" {
		return (len(found) > 0) == p.exists
	}
	if len(found) == 0 {
		return false
	}
	v := found[0]
	switch p.op {
	case "equals":
		return equal(v, p.values[0])
	case "in":
		return slices.ContainsFunc(p.values, func(w any) bool { return equal(v, w) })
	case "regex":
		s, ok := v.(string)
		return ok && p.regex.MatchString(s)
	case "prefix":
		arr, ok := v.([]any)
		if !ok || len(arr) < len(p.values) {
			return false
		}
		for i, want := range p.values {
			if alts, ok := want.([]any); ok {
				if !slices.ContainsFunc(alts, func(w any) bool { return equal(arr[i], w) }) {
					return false
				}
			} else if !equal(arr[i], want) {
				return false
			}
		}
		return true
	}
	return false
}

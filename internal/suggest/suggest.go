// Package suggest proposes rules from the audit log: the requests a
// person kept approving, grouped by server, tool, source, action and a
// scope of each dimension that covers them (a path's folder, a command's
// first words, a URL's origin; any other value exactly), approved often
// enough and never denied by a person. Allow narrow: a group whose rule
// would reach a request a person denied is narrowed (a deeper folder, the
// value exactly) or dropped, no rule leaves out a dimension its requests
// had (an `any` scope), and no folder rule covers `/` or the home
// directory whole. A proposal is a rules file whose examples are the
// requests it came from and the denied requests beside it.
package suggest

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/describe"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/shell"
)

// Options say what a group needs to become a rule.
type Options struct {
	// Min is how many approvals a group needs.
	Min int
	// Since and Now bound the window read: the prompts a day a rule would
	// have saved are its approvals over the window's days (one at least).
	// A zero Since is the first entry read.
	Since, Now time.Time
	// Home is the user's home directory: no folder rule covers it, or
	// one above it, whole.
	Home string
}

// Rule is one proposed rule.
type Rule struct {
	Name string
	// Tool, Server, Source and Action are the requests' own ("" none).
	Tool, Server, Source, Action string
	// Dimensions are a glob for every dimension of the requests.
	Dimensions map[string]string
	// Sources are the approved requests it came from, oldest first;
	// Denied the requests a person denied of the same tool, server and
	// action, which it does not cover.
	Sources, Denied []*decision.Request
	Approved        int
	First, Last     time.Time
	PerDay          float64
}

// logged is one decision of a person, read from the audit log.
type logged struct {
	time  time.Time
	allow bool
	// exact says the log holds the request's text as sent (no field is
	// inexact): only then can a rule be proposed from it.
	exact bool
	req   *decision.Request
	// ladder is the scopes that may cover the request's one widened
	// dimension, widest first, the value exactly last; fixed is the key
	// of everything else, which a group's requests share.
	ladder []level
	fixed  string
}

// level is one scope a group may take on its widened dimension.
type level struct {
	kind  levelKind
	key   string // the folder, the command's first words, the origin, the value
	dim   string
	value string
	more  bool // words: the command has words past its first
}

type levelKind int

const (
	levelExact levelKind = iota
	levelFolder
	levelWords
	levelOrigin
)

// Suggester reads the decisions of an audit log and proposes rules.
type Suggester struct {
	opt                Options
	approved, denied   []*logged
	deniedInexactTools map[[3]string]bool
}

// New is a Suggester with opt.
func New(opt Options) *Suggester {
	return &Suggester{opt: opt, deniedInexactTools: map[[3]string]bool{}}
}

// Entry is what suggest reads of one line of the audit log
// (state.AuditEntry).
type Entry struct {
	Time     time.Time
	Decision string
	// ByPerson says a person made the decision (state.AuditEntry.ByPerson).
	ByPerson bool
	// Inexact says some text of the line is not the request's.
	Inexact                      bool
	Tool, Server, Source, Action string
	// Dimensions are the values by name; Shells the dialect of those that
	// are command lines.
	Dimensions, Shells map[string]string
}

// Add reads one entry of the audit log: only a person's allows and
// denies count.
func (s *Suggester) Add(e Entry) {
	if s.opt.Since.IsZero() || e.Time.Before(s.opt.Since) {
		s.opt.Since = e.Time
	}
	if !e.ByPerson || e.Decision != decision.Allow && e.Decision != decision.Deny {
		return
	}
	l := &logged{time: e.Time, allow: e.Decision == decision.Allow, exact: !e.Inexact, req: requestOf(e)}
	if !l.allow {
		s.denied = append(s.denied, l)
		if !l.exact {
			// Its text is not known: it stands against every rule of its
			// tool, server and action (a deny errs wide).
			s.deniedInexactTools[[3]string{e.Tool, e.Server, e.Action}] = true
		}
		return
	}
	if l.exact {
		l.ladder, l.fixed = s.ladderOf(l.req)
		if l.ladder != nil {
			s.approved = append(s.approved, l)
		}
	}
}

// requestOf is e's request, as far as the log keeps it.
func requestOf(e Entry) *decision.Request {
	r := &decision.Request{Server: e.Server, Tool: e.Tool, Source: e.Source, Action: e.Action}
	for _, name := range sortedKeys(e.Dimensions) {
		d := decision.Dimension{Name: name, Value: e.Dimensions[name]}
		if dialect, ok := e.Shells[name]; ok {
			d.Syntax, d.Shell = decision.SyntaxShell, decision.Dialect(dialect)
		}
		r.Dimensions = append(r.Dimensions, d)
	}
	return r
}

// ladderOf is the scopes of req's widened dimension (the first, by name,
// that has a scope wider than its value) and the key of the rest; nil
// when no rule could cover req as the rules read it.
func (s *Suggester) ladderOf(req *decision.Request) ([]level, string) {
	key := []string{req.Tool, req.Server, req.Source, req.Action}
	var ladder []level
	for _, d := range req.Dimensions {
		l, ok := s.levels(d)
		if !ok {
			return nil, ""
		}
		if ladder == nil && len(l) > 1 {
			ladder = l
			key = append(key, d.Name, string(d.Syntax), "")
			continue
		}
		key = append(key, d.Name, string(d.Syntax), string(d.Shell), d.Value)
	}
	if ladder == nil {
		ladder = []level{{kind: levelExact}} // every dimension exactly
	}
	return ladder, strings.Join(key, "\x00")
}

// levels is the scopes that may cover d, widest first, exactly last;
// false when no glob of a rules file covers d's value alone.
func (s *Suggester) levels(d decision.Dimension) ([]level, bool) {
	exact := level{kind: levelExact, key: d.Value, dim: d.Name, value: d.Value}
	if d.IsShell() {
		l := shell.Of(d)
		if !l.Parsed || len(l.Commands) != 1 || !describe.Plain(l.Commands[0]) {
			return nil, false // a rule's glob judges each command: one alone is kept
		}
		c := l.Commands[0]
		exact.key = c.MatchText()
		// A lead whose words the rules read quoted (shell.Command.MatchText)
		// is kept exactly: a glob of its words as written would not match.
		if lead, ok := describe.Lead(c); ok && (c.MatchText() == lead || strings.HasPrefix(c.MatchText(), lead+" ")) {
			return []level{{kind: levelWords, key: lead, dim: d.Name, value: d.Value, more: c.MatchText() != lead}, exact}, true
		}
		return []level{exact}, true
	}
	if o := describe.Origin(d.Value); o != "" {
		if o == d.Value {
			return []level{exact}, true
		}
		return []level{{kind: levelOrigin, key: o, dim: d.Name, value: d.Value}, exact}, true
	}
	if path.IsAbs(d.Value) && path.Clean(d.Value) == d.Value {
		var out []level
		for dir := path.Dir(d.Value); dir != "/"; dir = path.Dir(dir) {
			if !s.tooWide(dir) {
				out = append(out, level{kind: levelFolder, key: dir, dim: d.Name, value: d.Value})
			}
		}
		slices.Reverse(out)
		return append(out, exact), true
	}
	return []level{exact}, true
}

// tooWide reports whether dir is the home directory or above it.
func (s *Suggester) tooWide(dir string) bool {
	return s.opt.Home != "" && (dir == s.opt.Home || strings.HasPrefix(s.opt.Home, dir+"/"))
}

// Rules are the rules proposed for what was read, named suggested-N.
// Each request walks its ladder from the widest scope and joins the first
// group that is eligible: approved at least Min times, and whose rule
// covers no request a person denied.
func (s *Suggester) Rules() []Rule {
	groups := map[string][]*logged{} // by fixed key and level
	for _, l := range s.approved {
		for i := range l.ladder {
			k := groupKey(l, i)
			groups[k] = append(groups[k], l)
		}
	}
	eligible := map[string]*Rule{}
	var out []Rule
	for _, l := range s.approved {
		for i := range l.ladder {
			k := groupKey(l, i)
			r, seen := eligible[k]
			if !seen {
				r = s.ruleOf(groups[k], l.ladder[i].kind)
				eligible[k] = r
				if r != nil {
					out = append(out, *r)
				}
			}
			if r != nil {
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Rule) int { return cmp.Compare(b.Approved, a.Approved) })
	for i := range out {
		out[i].Name = "suggested-" + strconv.Itoa(i+1)
	}
	return out
}

// groupKey is the group of l at level i of its ladder.
func groupKey(l *logged, i int) string {
	return l.fixed + "\x01" + strconv.Itoa(int(l.ladder[i].kind)) + "\x01" + l.ladder[i].key
}

// ruleOf is the rule of group g, whose requests share a level of kind
// k, or nil when it is not eligible.
func (s *Suggester) ruleOf(g []*logged, k levelKind) *Rule {
	if len(g) < s.opt.Min {
		return nil
	}
	first := g[0].req
	r := &Rule{Tool: first.Tool, Server: first.Server, Source: first.Source, Action: first.Action,
		Dimensions: map[string]string{}, Approved: len(g), First: g[0].time, Last: g[0].time}
	widened := g[0].ladder[0].dim
	for _, d := range first.Dimensions {
		if d.Name != widened || k == levelExact {
			r.Dimensions[d.Name] = exactGlob(d)
		}
	}
	if k != levelExact {
		r.Dimensions[widened] = s.widenedGlob(g, k)
	}
	m, err := match.NewCompiler().Matcher(r.spec())
	if err != nil {
		return nil
	}
	if s.deniedInexactTools[[3]string{r.Tool, r.Server, r.Action}] {
		return nil
	}
	for _, l := range g {
		// A value the glob does not cover as the rules read it (a path
		// form, a quoted word): the group is not the rule's.
		if !m.Match(match.NewCache(l.req)) {
			return nil
		}
	}
	for _, d := range s.denied {
		if r.Tool != "" && d.req.Tool != r.Tool || r.Action != "" && d.req.Action != r.Action {
			continue // the matcher's first test, spared
		}
		ok, _ := m.Allows(match.NewCache(d.req))
		if ok {
			return nil // it would reach a denied command, in part or whole
		}
		if d.req.Tool == r.Tool && d.req.Server == r.Server && d.req.Action == r.Action {
			r.Denied = append(r.Denied, d.req)
		}
	}
	for _, l := range g {
		r.Sources = append(r.Sources, l.req)
		r.First, r.Last = minTime(r.First, l.time), maxTime(r.Last, l.time)
	}
	days := max(1, s.opt.Now.Sub(s.opt.Since).Hours()/24)
	r.PerDay = float64(r.Approved) / days
	return r
}

// spec is r's matcher: its fields and dimensions as globs, and no
// dimension besides (only_dimensions).
func (r *Rule) spec() match.Spec {
	var f [4]*string
	for i, v := range []string{r.Tool, r.Server, r.Source, r.Action} {
		if v != "" {
			g := describe.GlobLiteral(v)
			f[i] = &g
		}
	}
	return match.Spec{Fields: f, Dimensions: r.Dimensions, OnlyDimensions: true}
}

// exactGlob is the glob matching d's value alone: on a command line, its
// one command.
func exactGlob(d decision.Dimension) string {
	if d.IsShell() {
		return describe.GlobLiteral(shell.Of(d).Commands[0].MatchText())
	}
	return describe.GlobLiteral(d.Value)
}

// widenedGlob is the narrowest glob of kind k covering the widened
// dimension of every request of g: the deepest folder holding them all
// (`dir/*` when they are all in it, `dir/**` when below), the first words
// (`go test *`, with `go test` alone too when a request was that), the
// origin.
func (s *Suggester) widenedGlob(g []*logged, k levelKind) string {
	levelOf := func(l *logged) level {
		i := slices.IndexFunc(l.ladder, func(x level) bool { return x.kind == k })
		return l.ladder[i]
	}
	switch k {
	case levelWords:
		lead := describe.GlobLiteral(levelOf(g[0]).key)
		bare, more := false, false
		for _, l := range g {
			m := levelOf(l).more
			bare, more = bare || !m, more || m
		}
		switch {
		case bare && more:
			return "{" + lead + "," + lead + " *}"
		case more:
			return lead + " *"
		}
		return lead
	case levelOrigin:
		return describe.GlobLiteral(levelOf(g[0]).key) + "**"
	}
	dir := path.Dir(levelOf(g[0]).value)
	below := false
	for _, l := range g[1:] {
		v := levelOf(l).value
		for !strings.HasPrefix(v, dir+"/") {
			dir = path.Dir(dir)
		}
	}
	for _, l := range g {
		below = below || path.Dir(levelOf(l).value) != dir
	}
	if below {
		return describe.GlobLiteral(dir) + "/**"
	}
	return describe.GlobLiteral(dir) + "/*"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Package suggest proposes rules from the audit log: the requests a
// person kept approving, grouped by server, tool, source, action and the
// unit one dimension's values share (a path's folder, a command's first
// words, a URL's origin; any other value exactly), approved often enough
// and never denied by a person. Allow narrow: a dimension is widened only
// over at least two distinct values, to the narrowest scope covering
// them (a folder's files but its dot-files, never a sub-folder); a group
// whose rule would reach a request a person denied is narrowed (each
// value exactly) or dropped; no rule leaves out a dimension, a tool or a
// server its requests had or had not (an `any` scope), allows a
// dimension more (only_dimensions), names a secret, or covers `/` or the
// home directory whole. A proposal is a rules file whose examples are the
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
	"github.com/askperm/askperm/internal/secretpath"
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
	// wide is the request's one dimension a rule may widen (the first,
	// by name, that has a scope wider than its value), nil when none;
	// fixed is the key of everything else and of wide's name, kind and
	// unit, which a family's requests share.
	wide  *level
	fixed string
}

// level is the scope a family's rule may widen a dimension to.
type level struct {
	kind levelKind
	// unit is the folder, the command's first words or the origin: the
	// values sharing it may be widened together.
	unit  string
	dim   string
	value string
	glob  string // the value exactly, as a glob
	more  bool   // words: the command has words past its first
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
		var ok bool
		if l.wide, l.fixed, ok = s.shapeOf(l.req); ok {
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

// shapeOf is req's widened dimension, nil when none, and the key of the
// rest; false when no rule may be proposed for req: a tool or a server
// missing (a rule would leave it open: any), a value no glob of a rules
// file covers alone, or one that names a secret (secretpath).
func (s *Suggester) shapeOf(req *decision.Request) (*level, string, bool) {
	if req.Tool == "" || req.Server == "" {
		return nil, "", false
	}
	key := []string{req.Tool, req.Server, req.Source, req.Action}
	var wide *level
	for _, d := range req.Dimensions {
		l, ok := s.levelOf(d)
		if !ok {
			return nil, "", false
		}
		if wide == nil && l.kind != levelExact {
			wide = &l
			key = append(key, d.Name, string(d.Syntax), strconv.Itoa(int(l.kind)), l.unit)
			continue
		}
		key = append(key, d.Name, string(d.Syntax), string(d.Shell), d.Value)
	}
	return wide, strings.Join(key, "\x00"), true
}

// levelOf is the scope a rule may widen d to, of kind levelExact when
// none; false when no glob of a rules file covers d's value alone or it
// names a secret. A folder is never / nor the home directory nor above
// it, nor a dot-folder or below one.
func (s *Suggester) levelOf(d decision.Dimension) (level, bool) {
	exact := level{kind: levelExact, dim: d.Name, value: d.Value, glob: describe.GlobLiteral(d.Value)}
	if d.IsShell() {
		l := shell.Of(d)
		if !l.Parsed || len(l.Commands) != 1 || !describe.Plain(l.Commands[0]) {
			return level{}, false // a rule's glob judges each command: one alone is kept
		}
		c := l.Commands[0]
		for _, w := range strings.Fields(c.MatchText()) {
			if secretpath.Is(w) {
				return level{}, false
			}
		}
		exact.glob = describe.GlobLiteral(c.MatchText())
		// A lead whose words the rules read quoted (shell.Command.MatchText)
		// is kept exactly: a glob of its words as written would not match.
		if lead, ok := describe.Lead(c); ok && (c.MatchText() == lead || strings.HasPrefix(c.MatchText(), lead+" ")) {
			exact.kind, exact.unit, exact.more = levelWords, lead, c.MatchText() != lead
		}
		return exact, true
	}
	if secretpath.Is(d.Value) {
		return level{}, false
	}
	if o := describe.Origin(d.Value); o != "" {
		if o != d.Value {
			exact.kind, exact.unit = levelOrigin, o
		}
		return exact, true
	}
	if path.IsAbs(d.Value) && path.Clean(d.Value) == d.Value {
		if dir := path.Dir(d.Value); dir != "/" && !s.tooWide(dir) && !strings.Contains(dir, "/.") {
			exact.kind, exact.unit = levelFolder, dir
		}
	}
	return exact, true
}

// tooWide reports whether dir is the home directory or above it.
func (s *Suggester) tooWide(dir string) bool {
	return s.opt.Home != "" && (dir == s.opt.Home || strings.HasPrefix(s.opt.Home, dir+"/"))
}

// Rules are the rules proposed for what was read, named suggested-N.
// The requests that differ only in one dimension's value within one unit
// of it (a folder's files, a command's first words, a URL's origin: a
// family) make one rule when approved at least Min times together, whose
// glob there is the narrowest covering them (narrowest); one whose rule
// would reach a request a person denied falls back to its identical
// requests, each set of them a rule of its own when approved Min times.
// No rule widens past one folder, so none reaches a folder's sub-folders
// or dot-files.
func (s *Suggester) Rules() []Rule {
	var order []string
	families := map[string][]*logged{}
	for _, l := range s.approved {
		if families[l.fixed] == nil {
			order = append(order, l.fixed)
		}
		families[l.fixed] = append(families[l.fixed], l)
	}
	var out []Rule
	for _, k := range order {
		g := families[k]
		if r := s.ruleOf(g, s.narrowest(g)); r != nil || g[0].wide == nil {
			if r != nil {
				out = append(out, *r)
			}
			continue
		}
		var same []string
		exact := map[string][]*logged{}
		for _, l := range g {
			k := keyOf(l.req)
			if exact[k] == nil {
				same = append(same, k)
			}
			exact[k] = append(exact[k], l)
		}
		for _, k := range same {
			if r := s.ruleOf(exact[k], exact[k][0].wide.glob); r != nil {
				out = append(out, *r)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Rule) int { return cmp.Compare(b.Approved, a.Approved) })
	for i := range out {
		out[i].Name = "suggested-" + strconv.Itoa(i+1)
	}
	return out
}

// narrowest is the glob on the widened dimension of family g: the
// unit's scope when at least two distinct values share it (a folder's
// files but its dot-files: dir/[!.]*; the first words and more; the
// origin), else the value exactly; with the first words alone beside them
// when approved alone. "" when g has no widened dimension.
func (s *Suggester) narrowest(g []*logged) string {
	if g[0].wide == nil {
		return ""
	}
	var bare, more []string
	for _, l := range g {
		w := l.wide
		list := &more
		if w.kind == levelWords && !w.more {
			list = &bare
		}
		if !slices.Contains(*list, w.glob) {
			*list = append(*list, w.glob)
		}
	}
	w := g[0].wide
	if len(more) >= 2 {
		switch w.kind {
		case levelFolder:
			more = []string{describe.GlobLiteral(w.unit) + "/[!.]*"}
		case levelWords:
			more = []string{describe.GlobLiteral(w.unit) + " *"}
		default:
			more = []string{describe.GlobLiteral(w.unit) + "**"}
		}
	}
	pieces := append(bare, more...)
	if len(pieces) == 1 {
		return pieces[0]
	}
	return "{" + strings.Join(pieces, ",") + "}" // a command's words: no path form
}

// ruleOf is the rule of family g whose widened dimension's glob is glob,
// or nil when it is not eligible: approved fewer than Min times, or
// reaching a request a person denied.
func (s *Suggester) ruleOf(g []*logged, glob string) *Rule {
	if len(g) < s.opt.Min {
		return nil
	}
	first := g[0].req
	r := &Rule{Tool: first.Tool, Server: first.Server, Source: first.Source, Action: first.Action,
		Dimensions: map[string]string{}, Approved: len(g), First: g[0].time, Last: g[0].time}
	for _, d := range first.Dimensions {
		r.Dimensions[d.Name] = exactGlob(d)
	}
	if w := g[0].wide; w != nil {
		r.Dimensions[w.dim] = glob
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

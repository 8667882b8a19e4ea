package shell

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
	"mvdan.cc/sh/v3/syntax"
)

// Redirect is an output redirection of a command to a file: its operator
// (`>`, `>>`, `>|`, `&>`, `&>>`) and its target as written.
type Redirect struct {
	Op, Target string
}

// MatchText is the text a matcher over a command line judges for this
// command (protocol section 10): its words (Command.matchWords) joined
// by one space (`echo x > /home/a/.bashrc`).
func (c Command) MatchText() string { return strings.Join(c.matchWords(), " ") }

// matchWords are the command's words, then the operator and target of
// each output redirection to a file, each word that could pass for
// several, or for a quoted one, shell-quoted (matchWord).
func (c Command) matchWords() []string {
	out := make([]string, 0, len(c.Words)+2*len(c.Redirects))
	for _, w := range c.Words {
		out = append(out, matchWord(w))
	}
	for _, r := range c.Redirects {
		out = append(out, r.Op, matchWord(r.Target))
	}
	return out
}

// matchWord is w as a matcher reads it: as it is, unless it is empty or
// holds a blank, a line break, any other space or character that does
// not print, or a quote; then quoted as bash would read it back (`'rm
// -rf'`, `"it's"`, `$'a\nb'`). So `"rm -rf" status` reads `'rm -rf'
// status`, which no allow written for the words rm -rf status matches,
// and no quoted word can pass for a plain one.
func matchWord(w string) string {
	if w != "" && utf8.ValidString(w) && !strings.ContainsFunc(w, func(r rune) bool {
		return r == '\'' || r == '"' || unicode.IsSpace(r) || !unicode.IsPrint(r)
	}) {
		return w
	}
	q, err := syntax.Quote(w, syntax.LangBash)
	if err != nil { // a NUL byte, which no shell word holds
		return strconv.Quote(w)
	}
	return q
}

// Static says the command is wholly known before the line runs: an allow
// may cover it.
func (c Command) Static() bool { return !c.Opaque && !c.Computed && !c.Inner && c.Text != "" }

// Allowed reports whether an allow covers l (protocol section 10): l
// parsed, holds a command, and every command is Static and covered by
// covers (Glob.Covers, ScopeCovers); a Wrapper (`bash -c 'ls'`) is a
// command like any, as the rules and remembered allows judge it. A line
// running no command (empty, assignments, comments) is allowed by
// nothing.
func (l Line) Allowed(covers func(Command) bool) bool {
	return len(l.Commands) > 0 && !slices.Contains(l.Covered(covers), false)
}

// Covered says, for each command of l, whether an allow covers it: l
// parsed, the command Static and covered by covers. A line that does not
// parse has none covered.
func (l Line) Covered(covers func(Command) bool) []bool {
	out := make([]bool, len(l.Commands))
	for k, c := range l.Commands {
		out[k] = l.Parsed && c.Static() && covers(c)
	}
	return out
}

// ScopeCovers is how scope s, in an allow, judges one simple command: a
// glob as Glob.Covers does, any other kind on the command's MatchText.
// A glob that does not compile covers nothing.
func ScopeCovers(s decision.Scope) func(Command) bool {
	if s.Kind != decision.KindGlob {
		return func(c Command) bool { return s.Covers(c.MatchText()) }
	}
	g, err := CompileGlob(s.Match)
	if err != nil {
		return func(Command) bool { return false }
	}
	return g.Covers
}

// Glob is a glob as an allow applies it to a simple command (protocol
// section 10): word by word. Each of its {alternatives} is split into
// words at the blanks outside quotes; a wildcard (`*`, `?`, a class)
// matches within one word of the command, never across a blank between
// two, so `rm -rf build/*` covers `rm -rf build/x` and not `rm -rf
// build/x /`. Only a last word that is a lone `*` matches more: one or
// more further words (`git *`, `git status *`; `*` alone, any command),
// as `*` matches in that alternative read alone. A deny does not use it: it reads the command's
// words joined by spaces, where a `*` spans them (a deny errs wide).
type Glob struct {
	alts []alternative
}

// alternative is one brace-free alternative of a Glob: p matches the
// command's leading words joined by wordBreak, all of them (rest false),
// or the first n, a wordBreak and the other words, one or more, joined by
// spaces (rest true: it ended in a lone `*` word).
type alternative struct {
	p    *decision.Pattern
	n    int
	rest bool
}

// wordBreak stands for the blank between two words while a Glob is
// matched: a line break, which no wildcard matches
// (decision.CommandStarters) and no word matchWord gives holds.
const wordBreak = "\n"

// CompileGlob compiles pattern for an allow over simple commands; a
// malformed pattern is an error, as in decision.CompileGlob.
func CompileGlob(pattern string) (*Glob, error) {
	alts, err := decision.Alternatives(pattern)
	if err != nil {
		return nil, err
	}
	g := &Glob{}
	for _, alt := range alts {
		words := patternWords(alt)
		a := alternative{n: len(words)}
		if len(words) > 0 && words[len(words)-1] == "*" {
			a.n, a.rest = len(words)-1, true
		}
		if a.p, err = decision.CompileGlob(strings.Join(words, wordBreak)); err != nil {
			return nil, err
		}
		g.alts = append(g.alts, a)
	}
	return g, nil
}

// Covers reports whether g covers command c: one alternative matches
// its words (Command.matchWords).
func (g *Glob) Covers(c Command) bool {
	words := c.matchWords()
	for _, a := range g.alts {
		switch {
		case !a.rest && len(words) == a.n:
			if a.p.Match(strings.Join(words, wordBreak)) {
				return true
			}
		case a.rest && len(words) > a.n:
			if a.p.Match(strings.Join(append(slices.Clip(words[:a.n]), strings.Join(words[a.n:], " ")), wordBreak)) {
				return true
			}
		}
	}
	return false
}

// patternWords splits a brace-free glob into its words: at blanks
// outside quotes (`'rm -rf' x` is two words, as matchWord writes a word
// holding a blank), and at every line break, quoted or escaped, which
// no word holds. A `\` escape and a [class] are kept whole.
func patternWords(p string) []string {
	var words []string
	var w strings.Builder
	quote := byte(0)
	end := func() {
		if w.Len() > 0 {
			words = append(words, w.String())
			w.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\n' || c == '\r':
			end()
		case c == '\\' && i+1 < len(p) && (p[i+1] == '\n' || p[i+1] == '\r'):
			end()
			i++
		case c == '\\' && i+1 < len(p):
			w.WriteString(p[i : i+2])
			i++
		case c == '[':
			j := classClose(p, i)
			w.WriteString(p[i : j+1])
			i = j
		case quote == 0 && (c == ' ' || c == '\t'):
			end()
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
			w.WriteByte(c)
		case c == quote:
			quote = 0
			w.WriteByte(c)
		default:
			w.WriteByte(c)
		}
	}
	end()
	return words
}

// classClose is the index of the `]` closing the class opened at p[i],
// or i when none does (the `[` is then a character like any).
func classClose(p string, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	for j++; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			return j
		case '\n', '\r':
			return i
		}
	}
	return i
}

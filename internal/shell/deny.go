package shell

import (
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
)

// Cover is how far a deny reaches a command line, the widest last.
type Cover int

const (
	// Not: no command the line may run is the denied one.
	Not Cover = iota
	// Maybe: none is known to be, but a computed command (Command.Computed)
	// cannot be shown not to be; a deny then asks instead.
	Maybe
	// Covered: some command the line may run is the denied one.
	Covered
)

func (c Cover) String() string { return [...]string{"not", "maybe", "covered"}[c] }

// Deny is a deny as it meets a command line.
type Deny struct {
	// Words are the leading words of a words scope; nil for other denies.
	Words []string
	// Covers, for other denies, covers a command's text (a glob, an
	// exact value).
	Covers func(text string) bool
	// Lead are the plain leading words of what Covers matches
	// (LeadWords).
	Lead []string
	// Each, when given, covers a command as the allow of the same
	// pattern reads it (ScopeCovers): a deny covers at least that.
	Each func(Command) bool
}

// Denied reports how far d reaches l. A deny errs wide: it covers the
// line when it covers any simple command read in any way the shell could
// run it, that is, starting at any of its words (so a wrapper such as
// sudo, env, nice -n 5, timeout 5 or xargs, known or not, never hides
// the command it runs) and with a path-like or zsh `=cmd` name read also
// as its base name (`/bin/rm`, `./rm`, `=rm` are rm). A command Each
// covers is covered as it stands. A reading covers
// when d's words start it (Words), or Covers covers its text as written
// or its known words joined by spaces (followed by one when more
// follows); and, when the command goes on past its known words (an
// expansion, a glob, a tilde), when they stop within d's words (Words,
// else Lead), the last known part a start of d's next word (`rm${IFS}-rf`
// and `rm -r$x` may be rm -rf). Failing that, a computed command (its
// name or the line it hands a shell not known) is Maybe.
func (l Line) Denied(d Deny) Cover {
	out, scanned := Not, 0
	for _, c := range l.Commands {
		if d.Each != nil && d.Each(c) {
			return Covered
		}
		var texts commandTexts
		if d.Covers != nil {
			texts = c.texts()
		}
		appender := slices.IndexFunc(c.Words, func(w string) bool { return slices.Contains(appenders, Name(w)) })
		for i, w := range c.Words {
			if strings.ContainsAny(w, " \t") {
				continue // names no command a deny names: `git commit -m "rm -rf x"`
			}
			for _, name := range names(w) {
				r := reading{name, c.Words[i+1:], c.Partial, c.Opaque || appender >= 0 && appender < i}
				if d.Covers == nil {
					if r.startsWith(d.Words) || r.within(d.Words) {
						return Covered
					}
					continue
				}
				if r.within(d.Lead) {
					return Covered
				}
				if !d.may(name) {
					continue
				}
				if d.scan(texts.of(i, name, w, r.open), &scanned) {
					return Covered
				}
			}
			if d.Covers != nil && d.may(w) && i < len(c.starts) && c.starts[i] >= 0 && d.scan(c.Text[c.starts[i]:], &scanned) {
				return Covered // as written
			}
			if scanned > maxScanned {
				return Maybe // too long to read through: ask
			}
		}
		if c.Computed {
			out = Maybe
		}
	}
	return out
}

// scan reports whether Covers covers text, counting what it read.
func (d Deny) scan(text string, scanned *int) bool {
	if *scanned += len(text); *scanned > maxScanned {
		return false
	}
	return d.Covers(text)
}

// maxScanned bounds the text a deny's Covers reads in one line (a 4 KiB
// line reads at most 4 MiB); past it, the line may be covered (a deny
// errs wide) and is asked about.
const maxScanned = 8 << 20

// commandTexts are a command's words joined by spaces, with and without a
// space after, and where each word starts in them: each reading's text is
// a tail of one.
type commandTexts struct {
	joined, open string
	starts       []int
}

func (c Command) texts() commandTexts {
	t := commandTexts{joined: strings.Join(c.Words, " ")}
	t.open = t.joined + " "
	at := 0
	for _, w := range c.Words {
		t.starts = append(t.starts, at)
		at += len(w) + 1
	}
	return t
}

// of is the text of the reading from word i, named name (w itself or
// another name of it), going on (open) or not.
func (t commandTexts) of(i int, name, w string, open bool) string {
	text := t.joined[t.starts[i]:]
	if open {
		text = t.open[t.starts[i]:]
	}
	if name != w {
		text = name + text[len(w):]
	}
	return text
}

// may reports whether Covers may cover a text starting with the word
// name: when its pattern has plain leading words, only a text starting
// with the first does (or, a path being compared cleaned, another
// spelling of it). It spares the glob on every other reading.
func (d Deny) may(name string) bool {
	return len(d.Lead) == 0 || d.Lead[0] == name || strings.Contains(name, "/")
}

// names are the names a command word may run as: itself, and Name.
func names(w string) []string {
	if n := Name(w); n != w {
		return []string{w, n}
	}
	return []string{w}
}

// Name is the command a word names: its base name without a zsh `=`
// (=rm, /bin/rm, ./rm → rm), or the word when that is empty.
func Name(w string) string {
	base := strings.TrimPrefix(w, "=")
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if base == "" {
		return w
	}
	return base
}

// reading is a command read as starting at one of its words, named name:
// name and rest are its known words, the last only a start when
// partial; more follows when open.
type reading struct {
	name          string
	rest          []string
	partial, open bool
}

// appenders are the wrappers that add words to the command they run
// (`… | xargs rm` runs rm with words read from its input).
var appenders = []string{"xargs", "parallel"}

func (r reading) word(k int) string {
	if k == 0 {
		return r.name
	}
	return r.rest[k-1]
}

// whole is how many of r's words are whole.
func (r reading) whole() int {
	if r.partial {
		return len(r.rest)
	}
	return 1 + len(r.rest)
}

// startsWith reports whether r's whole words start with want.
func (r reading) startsWith(want []string) bool {
	if len(want) == 0 || r.whole() < len(want) {
		return false
	}
	for k, w := range want {
		if r.word(k) != w {
			return false
		}
	}
	return true
}

// within reports whether r goes on past its known words and they may be
// a start of want: its whole words a start of want, and its partial word
// a start of want's next.
func (r reading) within(want []string) bool {
	n := r.whole()
	if !r.open || len(want) == 0 || n > len(want) {
		return false
	}
	for k := range n {
		if r.word(k) != want[k] {
			return false
		}
	}
	return !r.partial || n == len(want) || strings.HasPrefix(want[n], r.word(n))
}

// plainOnly are the characters a lead word is free of: shell and glob
// syntax.
const plainOnly = "*?[]{}\\'\"$`;&|()<>!^~#"

// LeadWords are the plain leading words of a pattern or value: split at
// spaces and tabs, up to the first word holding shell or glob syntax
// (`rm -rf *` → rm -rf).
func LeadWords(pattern string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(pattern, func(r rune) bool { return r == ' ' || r == '\t' }) {
		if strings.ContainsAny(w, plainOnly) || strings.ContainsAny(w, "\n\r") {
			break
		}
		out = append(out, w)
	}
	return out
}

// commandNames are the names of dimensions read as a command line when
// they do not say (protocol section 10: syntax shell).
var commandNames = []string{"command", "cmd", "script", "shell_command"}

// IsLine reports whether d's value is a command line: it says so
// (syntax shell), or, saying nothing, it is named as one.
func IsLine(d decision.Dimension) bool {
	return d.IsShell() || d.Syntax == "" && slices.Contains(commandNames, d.Name)
}

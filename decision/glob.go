package decision

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// CommandStarters are the characters that can end a shell command and start
// another, or splice one in: ; & | $ ` < > ( ) newline and carriage return.
// A glob's wildcards never match them (protocol.md sections 2 and 8), so
// `go test *` cannot cover `go test x; curl … | sh`, nor zsh's
// `go test =(cmd)` and `go test *(e:'cmd':)` or fish's `go test (cmd)`,
// which run cmd; a pattern that means to match one writes it literally.
const CommandStarters = ";&|$`<>()\n\r"

// maxExpansion caps the bytes a glob's {alternatives} expand to: each
// choice multiplies them, and the time to compile and match grows with
// them (doublestar, too, tries them one by one). Twice the longest string
// a request may hold leaves room for any practical pattern.
const maxExpansion = 2 * MaxLineBytes

// Pattern is a compiled glob: `*`, `?`, `[class]`, `{alt,...}` and `\`
// escapes, as doublestar matches them, except that no wildcard ever
// matches one of CommandStarters. A pattern with a '/' is a path pattern:
// `*` within a path segment, `**` (as a whole segment) across segments,
// `?` one character but '/'; an absolute one matches only absolute
// values. A pattern without a '/' (a tool name, a command such as `go
// test *`) is matched against the whole value, where '/' is an ordinary
// character: `go test *` matches `go test ./pkg` (protocol section 8).
// Unless the pattern is absolute, a value with more ".." segments than
// the pattern is refused, since it may climb out of what the pattern
// names ("src/../../etc" for "src/**").
//
// Match takes a value as written, against the pattern as written; the
// path forms of a dimension (cleaned, resolved) are matched against the
// pattern cleaned when absolute (Allows, Denies). So the command-starter
// guard always sees the value as written too: cleaning never hides a `|`
// or a `;` from an allow.
//
// Doublestar stays the judge of what a glob matches, quirks included, but
// its wildcards cannot be told to skip characters. So the glob is also
// translated into one RE2 expression whose wildcards skip the command
// starters, and a value must match both. On values without a command
// starter the translation matches at least what doublestar does (tested
// against it), so doublestar alone decides; a value with one matches only
// when the pattern's literals match each of its command starters. RE2
// runs in time linear in the value and rejects most values first.
type Pattern struct {
	written, clean globForm // clean: an absolute pattern cleaned, else as written
	abs            bool
	text           bool // no '/': the value's '/' is matched as slash
	dotDots        int
}

// globForm is one spelling of a pattern, compiled.
type globForm struct {
	glob  string
	guard *regexp.Regexp
}

// CompileGlob compiles pattern, once for any number of values. A
// malformed pattern (an unclosed or empty class, an unbalanced brace, a
// trailing backslash) is an error, as is one whose alternatives expand
// beyond 8 KiB.
func CompileGlob(pattern string) (*Pattern, error) {
	if err := checkGlob(pattern); err != nil {
		return nil, fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	p := &Pattern{abs: path.IsAbs(pattern), dotDots: dotDots(pattern), text: !strings.Contains(pattern, "/")}
	var err error
	if p.written, err = compileForm(pattern); err != nil {
		return nil, fmt.Errorf("invalid glob %q: %w", pattern, err)
	}
	p.clean = p.written
	if clean := path.Clean(pattern); p.abs && clean != pattern {
		if p.clean, err = compileForm(clean); err != nil {
			return nil, fmt.Errorf("invalid glob %q: cleaned to %q, %w", pattern, clean, err)
		}
	}
	return p, nil
}

func compileForm(glob string) (globForm, error) {
	guard, err := guardRegexp(glob)
	return globForm{glob, guard}, err
}

// Alternatives are the brace-free patterns pattern stands for, its
// {alternatives} expanded as CompileGlob reads them; an error for a
// malformed pattern.
func Alternatives(pattern string) ([]string, error) {
	if err := checkGlob(pattern); err != nil {
		return nil, err
	}
	budget := maxExpansion
	return expandBraces(pattern, nil, &budget)
}

// guardRegexp translates a glob into RE2, anchored at both ends.
func guardRegexp(pattern string) (*regexp.Regexp, error) {
	alts, err := Alternatives(pattern)
	if err != nil {
		return nil, err
	}
	var re strings.Builder
	re.WriteString(`\A(?:`)
	for i, alt := range alts {
		if i > 0 {
			re.WriteByte('|')
		}
		writeAlternative(&re, alt)
	}
	re.WriteString(`)\z`)
	return regexp.Compile(re.String())
}

// Match reports whether value, as written, matches the pattern as written.
func (p *Pattern) Match(value string) bool { return p.match(value, false) }

// Allows reports whether the pattern, in an allow, matches d in every
// form (see Scope.Allows); a path pattern never a relative path nothing
// anchored.
func (p *Pattern) Allows(d Dimension) bool { return allows(d, p.match, !p.text) }

// Denies reports whether the pattern, in a deny, matches d in any form.
func (p *Pattern) Denies(d Dimension) bool { return denies(d, p.match) }

// match is Match on a value as written (asPath false), or on one in a path
// form against the pattern cleaned.
func (p *Pattern) match(value string, asPath bool) bool {
	f := p.written
	if asPath {
		f = p.clean
	}
	switch {
	case p.abs:
		// An absolute pattern starts with a literal '/', which a relative
		// value never matches.
		if !path.IsAbs(value) {
			return false
		}
	case asPath && !p.text && path.IsAbs(value):
		// A relative path pattern names paths below the workdir; an
		// absolute path form is one that leads out of it.
		return false
	case dotDots(value) > p.dotDots:
		return false
	case p.text:
		if strings.Contains(value, slash) {
			return false
		}
		value = strings.ReplaceAll(value, "/", slash)
	}
	return f.guard.MatchString(value) && doublestar.MatchUnvalidated(f.glob, value)
}

// slash stands for '/' in the value of a pattern without one while they
// are matched, so that doublestar's wildcards cross it as any character.
// A value that holds it already matches no such pattern.
const slash = "\uE000"

// Glob reports whether value matches pattern (see Pattern); a malformed
// pattern matches nothing.
func Glob(pattern, value string) bool {
	p, err := CompileGlob(pattern)
	return err == nil && p.Match(value)
}

// checkGlob accepts exactly the patterns doublestar.ValidatePattern
// accepts, saying what is wrong with the others.
func checkGlob(s string) error {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i++; i == len(s) {
				return errors.New(`ends in an unescaped \`)
			}
		case '[':
			if i = classEnd(s, i); i < 0 {
				return errors.New("a [class] is empty or not closed")
			}
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return errors.New("a } closes no {")
			}
			depth--
		}
	}
	if depth > 0 {
		return errors.New("a { is not closed")
	}
	return nil
}

// classEnd returns the index of the ']' closing the class that opens at
// s[open], or -1 when it is empty or not closed.
func classEnd(s string, open int) int {
	i := open + 1
	if i < len(s) && (s[i] == '^' || s[i] == '!') {
		i++
	}
	if i >= len(s) || s[i] == ']' {
		return -1
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ']':
			return i
		}
	}
	return -1
}

// expandBraces appends to out the brace-free patterns s stands for: the
// first {alternatives} replaced by each alternative in turn, as doublestar
// does. budget is the bytes left for out, each pattern counting one more
// than its length. s has passed checkGlob.
func expandBraces(s string, out []string, budget *int) ([]string, error) {
	open, closing := -1, -1
	var alts []string
	depth, start := 0, 0
	for i := 0; i < len(s) && closing < 0; i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			i = classEnd(s, i)
		case '{':
			if depth++; depth == 1 {
				open, start = i, i+1
			}
		case ',':
			if depth == 1 {
				alts, start = append(alts, s[start:i]), i+1
			}
		case '}':
			if depth--; depth == 0 {
				alts, closing = append(alts, s[start:i]), i
			}
		}
	}
	if open < 0 {
		if *budget -= len(s) + 1; *budget < 0 {
			return nil, fmt.Errorf("its {alternatives} expand to more than %d bytes", maxExpansion)
		}
		return append(out, s), nil
	}
	for _, alt := range alts {
		var err error
		if out, err = expandBraces(s[:open]+alt+s[closing+1:], out, budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// The RE2 forms of the wildcards: none matches a command starter. Built
// on first use: not in every process's start-up.
var (
	anyInSegment = sync.OnceValue(func() string { return `[^/` + runeClass(CommandStarters) + `]` })
	anyAtAll     = sync.OnceValue(func() string { return `[^` + runeClass(CommandStarters) + `]` })
)

// globToken is one part of a brace-free pattern in RE2: re as written,
// nonEmpty when it must match at least one character, and end the offset
// in the pattern just after it.
type globToken struct {
	re, nonEmpty string
	end          int
}

// globTokens splits s, a brace-free pattern that has passed checkGlob, as
// doublestar reads it: `**` spans segments only as a whole segment (at the
// start or after a '/', and at the end or before a '/'); elsewhere it is
// `*`.
func globTokens(s string) []globToken {
	var ts []globToken
	for i := 0; i < len(s); {
		rest := s[i:]
		segmentStart := i == 0 || s[i-1] == '/'
		t := globToken{}
		switch {
		case segmentStart && rest == "**":
			t.re, t.nonEmpty = anyAtAll()+`*`, anyAtAll()+`+`
			i += 2
		case segmentStart && strings.HasPrefix(rest, "**/"):
			t.re, t.nonEmpty = `(?:`+anyAtAll()+`*/)?`, anyAtAll()+`*/`
			i += 3
		case rest[0] == '*':
			t.re, t.nonEmpty = anyInSegment()+`*`, anyInSegment()+`+`
			i++
			if strings.HasPrefix(rest, "**") {
				i++ // one token, as in doublestar: `***` is `**` then `*`
			}
		case rest[0] == '?':
			t.re = anyInSegment()
			i++
		case rest[0] == '[':
			end := classEnd(s, i)
			t.re = classRegexp(s[i+1 : end])
			i = end + 1
		default:
			if rest[0] == '\\' {
				i++
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			t.re = regexp.QuoteMeta(string(r))
			i += n
		}
		if t.nonEmpty == "" {
			t.nonEmpty = t.re
		}
		t.end = i
		ts = append(ts, t)
	}
	return ts
}

// zeroLength are the rests of a pattern that doublestar lets match when
// the value has ended: so `a/**` and `a/**/` match "a", but `a/**/*` does
// not match "a/".
var zeroLength = []string{"", "*", "**", "/**", "**/", "/**/"}

// writeAlternative writes the RE2 form of s, a brace-free pattern that has
// passed checkGlob. The value may end after any token j that matched at
// least one character (or before the first) when the pattern's rest after
// it is one of zeroLength; the tokens before j are shared.
func writeAlternative(re *strings.Builder, s string) {
	ts := globTokens(s)
	var ends []int // the js, from the last token back
	for j := len(ts); j >= 0; j-- {
		end := 0
		if j > 0 {
			end = ts[j-1].end
		}
		if slices.Contains(zeroLength, s[end:]) {
			ends = append(ends, j)
		}
	}
	shared := max(ends[len(ends)-1]-1, 0)
	for _, t := range ts[:shared] {
		re.WriteString(t.re)
	}
	re.WriteString("(?:")
	for k, j := range ends {
		if k > 0 {
			re.WriteByte('|')
		}
		if j == 0 {
			continue
		}
		for _, t := range ts[shared : j-1] {
			re.WriteString(t.re)
		}
		re.WriteString(ts[j-1].nonEmpty)
	}
	re.WriteString(")")
}

// runeRange is the runes lo to hi, both included; empty when lo > hi.
type runeRange struct{ lo, hi rune }

// classRegexp is the RE2 form of a class's body (between '[' and ']'),
// read as doublestar reads it: a leading '^' or '!' negates; `a-z` is a
// range; '\' escapes; a '-' first or last is itself. A command starter is
// taken out of the runes a class matches, or added to those a negated
// class refuses.
func classRegexp(body string) string {
	negate := body[0] == '^' || body[0] == '!'
	if negate {
		body = body[1:]
	}
	var ranges []runeRange
	last := rune(-1) // the previous single rune, which may start a range
	for i := 0; i < len(body); {
		r, n := utf8.DecodeRuneInString(body[i:])
		i += n
		if last >= 0 && r == '-' && i < len(body) {
			if body[i] == '\\' {
				i++
			}
			hi, n := utf8.DecodeRuneInString(body[i:])
			i += n
			ranges = append(ranges, runeRange{last, hi})
			last = -1
			continue
		}
		if r == '\\' {
			r, n = utf8.DecodeRuneInString(body[i:])
			i += n
		}
		ranges = append(ranges, runeRange{r, r})
		last = r
	}
	if negate {
		for _, c := range CommandStarters {
			ranges = append(ranges, runeRange{c, c})
		}
		return "[^" + rangesRegexp(ranges) + "]"
	}
	for _, c := range CommandStarters {
		ranges = without(ranges, c)
	}
	if len(ranges) == 0 {
		return `[^\x00-\x{10FFFF}]` // matches nothing
	}
	return "[" + rangesRegexp(ranges) + "]"
}

// without returns the ranges with c taken out, dropping empty ones.
func without(ranges []runeRange, c rune) []runeRange {
	var out []runeRange
	for _, r := range ranges {
		switch {
		case r.lo > r.hi:
		case c < r.lo || c > r.hi:
			out = append(out, r)
		default:
			out = append(out, runeRange{r.lo, c - 1}, runeRange{c + 1, r.hi})
		}
	}
	return slices.DeleteFunc(out, func(r runeRange) bool { return r.lo > r.hi })
}

// rangesRegexp writes non-empty ranges for an RE2 class, every rune as
// \x{...}.
func rangesRegexp(ranges []runeRange) string {
	var b strings.Builder
	for _, r := range ranges {
		if r.lo > r.hi {
			continue
		}
		fmt.Fprintf(&b, `\x{%x}`, r.lo)
		if r.hi != r.lo {
			fmt.Fprintf(&b, `-\x{%x}`, r.hi)
		}
	}
	return b.String()
}

// runeClass is s's runes for an RE2 class, every rune as \x{...}.
func runeClass(s string) string {
	var ranges []runeRange
	for _, c := range s {
		ranges = append(ranges, runeRange{c, c})
	}
	return rangesRegexp(ranges)
}

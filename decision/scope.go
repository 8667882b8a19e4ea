package decision

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Covers reports whether the scope covers value as written, one string
// against another, nothing cleaned (protocol.md section 2): kind exact the
// same string; prefix a value starting with the match, at a '/' when both
// are absolute paths, with no more ".." segments unless both are absolute;
// glob as Pattern.Match. An unknown kind covers nothing: a rule askperm
// does not understand must never allow more than the person chose. A
// dimension is judged in all its forms by Allows and Denies.
func (s Scope) Covers(value string) bool { return s.covers(value, false) }

// covers is Covers on value as written (asPath false), or on a value in
// its one path form or resolved (asPath true), against the match in its
// one path form.
func (s Scope) covers(value string, asPath bool) bool {
	switch s.Kind {
	case KindExact, "": // exact is the protocol's default kind
		if asPath {
			return value == PathForm(s.Match)
		}
		return value == s.Match
	case KindPrefix:
		return prefixCovers(s.Match, value, asPath)
	case KindGlob:
		p, err := CompileGlob(s.Match)
		return err == nil && p.match(value, asPath)
	case KindWords:
		return wordsCover(s.Match, value)
	case KindAny:
		return true
	}
	return false
}

// Allows reports whether s, in an allow, covers d in every form: its value
// as written and, unless it is a command line, in its one path form and
// resolved (an allow errs narrow; cleaning never widens it). A relative
// path no absolute workdir anchored (see Dimension.Resolved) may lead
// anywhere: no scope that reads it as a path below another (prefix, a
// glob with a '/') allows it.
func (s Scope) Allows(d Dimension) bool {
	return allows(d, s.covers, s.Kind == KindPrefix || s.Kind == KindGlob && strings.Contains(s.Match, "/"))
}

// Denies reports whether s, in a deny, covers d in any form: its value as
// written, in its one path form or resolved (a deny errs wide). For the
// simple commands of a command line, see Words.
func (s Scope) Denies(d Dimension) bool { return denies(d, s.covers) }

// allows reports whether covers holds for every form of d; below says
// that it reads a path as one below another, which a relative path
// nothing anchored never is.
func allows(d Dimension, covers func(value string, asPath bool) bool, below bool) bool {
	if !covers(d.Value, false) {
		return false
	}
	if d.IsShell() || !IsPath(d.Value) {
		return true
	}
	if !covers(PathForm(d.Value), true) {
		return false
	}
	if d.Resolved == "" {
		return path.IsAbs(d.Value) || !below
	}
	return covers(d.Resolved, true)
}

// denies reports whether covers holds for any form of d.
func denies(d Dimension, covers func(value string, asPath bool) bool) bool {
	if covers(d.Value, false) {
		return true
	}
	if d.IsShell() || !IsPath(d.Value) {
		return false
	}
	return covers(PathForm(d.Value), true) || d.Resolved != "" && covers(d.Resolved, true) ||
		d.Anchored != "" && covers(d.Anchored, true)
}

// Words are the leading words a scope of kind words matches; nil for
// other kinds or an empty match.
func (s Scope) Words() []string {
	if s.Kind != KindWords {
		return nil
	}
	return words(s.Match)
}

// PathForm is the one form in which a value is compared as a path:
// cleaned lexically (path.Clean: no "." segment, no "//", no ".." but at
// the root or leading a relative path, no trailing '/'), absolute or
// relative. A value that is no path (see IsPath) is returned as it is.
// Symlinks are the caller's to resolve (Dimension.Resolved): decision
// never touches the disk.
func PathForm(value string) string {
	if !IsPath(value) {
		return value
	}
	return path.Clean(value)
}

// IsPath reports whether value may be read as a path: anything but the
// empty string and a URL (scheme://…), whose "//" is no doubled slash.
// A command line is never one either, but that is the dimension's to say
// (Dimension.IsShell).
func IsPath(value string) bool { return value != "" && !strings.Contains(value, "://") }

// prefixCovers: when both are absolute paths, the value must be the match
// or lie below it, so a longer name ("/home/a/pq" for "/home/a/p") does
// not get in. Otherwise a plain string prefix, where a value with more
// ".." segments than the match is refused: it may climb out of what the
// match names ("src/../../etc" for "src/"). As written (asPath false) an
// absolute value is not cleaned, so "/home/a/p/../q" is below "/home/a/p/"
// there; its path form, which an allow must also hold in, is not. In the
// path form (asPath true) the match is cleaned too, and a relative match
// also ends at a '/'. An empty match would cover every value, which only
// kind any may do.
func prefixCovers(match, value string, asPath bool) bool {
	if match == "" {
		return false
	}
	if asPath {
		match = PathForm(match)
	}
	abs := path.IsAbs(match) && path.IsAbs(value)
	if !abs && climbsOut(match, value) {
		return false
	}
	if !abs && !asPath || !IsPath(match) || path.IsAbs(match) != path.IsAbs(value) {
		return strings.HasPrefix(value, match)
	}
	m := strings.TrimSuffix(match, "/") // "" for "/", "." for a relative "./"
	return m == "" || m == "." || value == m || strings.HasPrefix(value, m+"/")
}

// climbsOut reports whether value has more ".." segments than match: a value
// that cannot be cleaned may then resolve outside what the match names
// ("src/../../etc" for "src/").
func climbsOut(match, value string) bool {
	return dotDots(value) > dotDots(match)
}

func dotDots(s string) int {
	n := 0
	for seg := range strings.SplitSeq(s, "/") {
		if seg == ".." {
			n++
		}
	}
	return n
}

// shellSyntax is what a value of kind words may not contain: the protocol's
// list (the command starters, quotes, backslash), and also glob and
// expansion characters (* ? [ ] { } ~), comments (#), history expansion (!)
// and ^ (a pipe in the Bourne shell, a glob operator in zsh): each can make
// the words a shell runs differ from the words shown and matched.
const shellSyntax = CommandStarters + "'\"\\*?[]{}~#!^"

// wordsCover: the value's words start with all of the match's words, and the
// value is plain words only; an empty match covers nothing.
func wordsCover(match, value string) bool {
	want := words(match)
	if len(want) == 0 || !plainWords(value) {
		return false
	}
	got := words(value)
	return len(got) >= len(want) && slices.Equal(got[:len(want)], want)
}

// words splits s on spaces and tabs, the blanks a shell splits words on
// (newlines are shell syntax, refused before).
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}

// plainWords reports whether s holds only visible characters other than
// shellSyntax, separated by spaces and tabs. Controls, invisible characters
// and other blanks (no-break space, ...) are refused: a shell does not split
// on them, so the words seen here would not be the words it runs.
func plainWords(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == ' ' || r == '\t' {
			continue
		}
		if strings.ContainsRune(shellSyntax, r) || !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

package decision

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Covers reports whether the scope covers value (protocol.md section 2).
// An unknown kind covers nothing: a rule askperm does not understand must
// never allow more than the person chose. Absolute paths are compared in
// one form, cleaned lexically (PathForm), by every kind but words.
func (s Scope) Covers(value string) bool {
	switch s.Kind {
	case KindExact, "": // exact is the protocol's default kind
		return PathForm(value) == PathForm(s.Match)
	case KindPrefix:
		return prefixCovers(s.Match, value)
	case KindGlob:
		return Glob(s.Match, value)
	case KindWords:
		return wordsCover(s.Match, value)
	case KindAny:
		return true
	}
	return false
}

// Allows reports whether s, in an allow, covers d: both its value and,
// when set, the path it resolves to (an allow errs narrow).
func (s Scope) Allows(d Dimension) bool {
	return s.Covers(d.Value) && (d.Resolved == "" || s.Covers(d.Resolved))
}

// Denies reports whether s, in a deny, covers d: its value or the path it
// resolves to (a deny errs wide). For the simple commands of a command
// line, see Words.
func (s Scope) Denies(d Dimension) bool {
	return s.Covers(d.Value) || d.Resolved != "" && s.Covers(d.Resolved)
}

// Words are the leading words a scope of kind words matches; nil for
// other kinds or an empty match.
func (s Scope) Words() []string {
	if s.Kind != KindWords {
		return nil
	}
	return words(s.Match)
}

// PathForm is the one form in which a value is compared as a path: an
// absolute path cleaned lexically (path.Clean: no "." segment, no "//",
// no ".." but at the root, no trailing '/'), any other value as it is.
// Symlinks are the caller's to resolve (Dimension.Resolved): decision
// never touches the disk.
func PathForm(value string) string {
	if path.IsAbs(value) {
		return path.Clean(value)
	}
	return value
}

// prefixCovers: when both are absolute paths, the cleaned value must be the
// cleaned match or lie below it, so neither ".." nor a longer name
// ("/home/a/pq" for "/home/a/p") gets out. Otherwise a plain string prefix,
// which cannot be cleaned (a relative path, a URL), so a value with more ".."
// segments than the match is refused instead. An empty match would cover
// every value, which only kind any may do.
func prefixCovers(match, value string) bool {
	if match == "" {
		return false
	}
	if path.IsAbs(match) && path.IsAbs(value) {
		m, v := PathForm(match), PathForm(value)
		return m == "/" || v == m || strings.HasPrefix(v, m+"/")
	}
	return strings.HasPrefix(value, match) && !climbsOut(match, value)
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

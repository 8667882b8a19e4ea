package policy

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// star is "*", the glob every value a wildcard may cover matches: the
// measure of "everything" for a rule's matchers. Compiled on first use:
// not in every process's start-up.
var star = sync.OnceValue(func() *decision.Pattern {
	p, _ := decision.CompileGlob("*")
	return p
})

// baseProbes are the characters every glob is tried on: letters of both
// cases, digits, the punctuation of names, paths and commands, and
// characters outside ASCII.
var baseProbes = []rune("aZ0_-.:~@+,='\"#%!?*[]{}\\ \té中")

// fillers are what a probe character is put beside, so that a wildcard
// needing more than one character, or a class at the end, is tried.
var fillers = []string{"a", "aa", "Z", strings.Repeat("a", 64)}

// matchesEverything reports whether glob p (src as written) matches
// every value a request's field may hold that "*" matches: it is tried on
// generated values, every character of baseProbes and of src's classes
// (and their neighbours), alone and beside fillers. A name (tool, source,
// action) holds no '/'; a server's name or a dimension's value may. A glob that
// leaves out only the empty value narrows nothing: a field is never
// empty, and a value that is would hardly be what a rule meant to keep out.
func matchesEverything(p *decision.Pattern, src string, name bool) bool {
	runes := slices.Clone(baseProbes)
	if !name {
		runes = append(runes, '/')
	}
	for _, r := range classRunes(src) {
		runes = append(runes, r-1, r, r+1)
	}
	slices.Sort(runes)
	runes = slices.Compact(runes)
	try := func(v string) bool {
		if !utf8.ValidString(v) || name && strings.Contains(v, "/") || !star().Match(v) {
			return true // not a value "*" covers
		}
		return p.Match(v)
	}
	for _, r := range runes {
		c := string(r)
		if !try(c) {
			return false
		}
		for _, f := range fillers {
			if !try(f+c) || !try(c+f) || !try(f+c+f) {
				return false
			}
		}
	}
	if !name {
		for _, v := range []string{"a/b", "/a", "a/", "/etc/passwd", "~/.ssh/id_ed25519", "src/a b/c.go", "./a", "a//b"} {
			if !try(v) {
				return false
			}
		}
	}
	return true
}

// classRunes are the runes written inside src's [classes], escapes
// undone: a class can leave out a character no base probe tries.
func classRunes(src string) []rune {
	var out []rune
	in := false
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		i += n
		switch {
		case r == '\\' && i < len(src):
			r, n = utf8.DecodeRuneInString(src[i:])
			i += n
			if in {
				out = append(out, r)
			}
		case r == '[' && !in:
			in = true
		case r == ']' && in:
			in = false
		case in:
			out = append(out, r)
		}
	}
	return out
}

// coversEveryCommand reports whether glob src, as an allow applies it to
// a command line word by word (shell.Glob), covers every command of one
// to three words each probe makes that "*" covers (a word read quoted as
// `$'\t'` it does not): `{[! ]*,[! ]* *}` covers every command so, though
// it does not match every value.
func coversEveryCommand(src string) bool {
	g, err := shell.CompileGlob(src)
	if err != nil {
		return false
	}
	for _, r := range baseProbes {
		for _, w := range []string{string(r), "a" + string(r), string(r) + "a"} {
			for _, ws := range [][]string{{w}, {"a", w}, {w, "a"}, {"a", "a", w}} {
				c := shell.Command{Words: ws}
				if star().Match(c.MatchText()) && !g.Covers(c) {
					return false
				}
			}
		}
	}
	return true
}

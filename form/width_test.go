package form

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-runewidth"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
	"golang.org/x/text/width"
)

// pool is a set of runes to draw test input from.
type pool struct {
	name     string
	category bool // a category of one general category value: these partition the assigned runes
	runes    []rune
}

// pools returns every general category of unicode.Categories (Cn, the
// unassigned code points, included), every property of unicode.Properties
// and the tables of width.go, each with all its runes, in a fixed order.
var pools = sync.OnceValue(func() []pool {
	var ps []pool
	add := func(name string, category bool, t *unicode.RangeTable) {
		var rs []rune
		rangetable.Visit(t, func(r rune) { rs = append(rs, r) })
		if len(rs) > 0 {
			ps = append(ps, pool{name, category, rs})
		}
	}
	for name, t := range unicode.Categories {
		add(name, len(name) == 2 && name != "Cn" && name != "LC", t)
	}
	for name, t := range unicode.Properties {
		add(name, false, t)
	}
	for name, t := range map[string]*unicode.RangeTable{
		"Emoji_Presentation": emojiPresentation, "Extended_Pictographic": extendedPictographic,
		"Emoji_Modifier": emojiModifier, "Regional_Indicator": regionalIndicator, "conjoining jamo": conjoiningJamo,
	} {
		add(name, false, t)
	}
	slices.SortFunc(ps, func(a, b pool) int { return strings.Compare(a.name, b.name) })
	return ps
})

// draw picks a pool, then a rune of it, so that small classes (marks,
// modifiers, selectors) come up as often as large ones.
func draw(rng *rand.Rand) rune {
	ps := pools()
	p := ps[rng.IntN(len(ps))]
	return p.runes[rng.IntN(len(p.runes))]
}

func checkBoth(t *testing.T, s string) {
	t.Helper()
	checkRendering(t, s, Line(s), false)
	checkRendering(t, s, Block(s), true)
}

// TestWidthEveryRune renders every assigned rune, twice, between random
// neighbours: checkRendering then asserts, among the rest, that the line
// measures the same in the width library and in cells. (Block differs from
// Line only in layout, which TestWidthCombinations covers.)
func TestWidthEveryRune(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, p := range pools() {
		if !p.category {
			continue
		}
		for _, r := range p.runes {
			s := string([]rune{draw(rng), r, draw(rng), r})
			checkRendering(t, s, Line(s), false)
		}
	}
}

// TestWidthCombinations renders random strings of runes from random pools:
// bases of every category followed by marks, joiners, modifiers, selectors,
// regional indicators, jamo and unassigned code points in any order.
func TestWidthCombinations(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for range 20000 {
		rs := make([]rune, 1+rng.IntN(16))
		for i := range rs {
			rs[i] = draw(rng)
		}
		checkBoth(t, string(rs))
	}
}

// TestMarkRuns puts long runs of each pool after a random base: whatever
// the pool (combining marks, modifiers, ZWJ sequences, regional indicators,
// variation selectors), at most maxMarks zero-width runes stay in a row.
func TestMarkRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, p := range pools() {
		for range 50 {
			rs := []rune{draw(rng)}
			for range 2*maxMarks + 2 {
				rs = append(rs, p.runes[rng.IntN(len(p.runes))])
				if rng.IntN(4) == 0 {
					rs = append(rs, 0x200d) // ZWJ, to make sequences
				}
			}
			checkBoth(t, string(rs))
		}
	}
}

// TestHiddenIffEscaped: after a plain base, every code point beyond ASCII
// but the controls and ⟨ (which starts notation) is either shown as is or
// escaped and reported by Hidden.
func TestHiddenIffEscaped(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || unicode.Is(unicode.Cc, r) || r == '⟨' {
			continue
		}
		s := string(r)
		if shown := Line("a"+s) == "a"+s; shown == Hidden(s) {
			t.Fatalf("%U: shown after a base %v, Hidden %v", r, shown, Hidden(s))
		}
	}
}

// TestUnicodeVersion: the tables of width.go are of the Unicode version of
// the other measures; a newer Go or x/text needs newer tables.
func TestUnicodeVersion(t *testing.T) {
	if unicode.Version != "15.0.0" || width.UnicodeVersion != "15.0.0" {
		t.Errorf("unicode is %s and x/text/width %s: update the tables of width.go from 15.0.0", unicode.Version, width.UnicodeVersion)
	}
}

// TestWidthTables checks the tables of width.go against the width library
// (and Emoji_Presentation against go-runewidth too), over every code point.
func TestWidthTables(t *testing.T) {
	narrow := runewidth.NewCondition()
	narrow.EastAsianWidth = false
	agree, pictographs := 0, 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || unicode.Is(unicode.Cc, r) {
			continue
		}
		s, w := string(r), ansi.StringWidth(string(r))
		pict, ep := unicode.Is(extendedPictographic, r), unicode.Is(emojiPresentation, r)
		ri, mod, jamo := unicode.Is(regionalIndicator, r), unicode.Is(emojiModifier, r), unicode.Is(conjoiningJamo, r)
		// A pictograph leads a cluster as wide as itself: a spacing mark
		// that joins it adds nothing.
		if ignores := ansi.StringWidth(s+"\u093e") == w; !ri && !jamo && ignores != pict {
			t.Errorf("%U: Extended_Pictographic %v, but a joined spacing mark adds %v", r, pict, !ignores)
		}
		if pict && ep != (w == 2) || !pict && ep && !ri && !mod {
			t.Errorf("%U: Emoji_Presentation %v, Extended_Pictographic %v, width %d", r, ep, pict, w)
		}
		if pict || ep {
			pictographs++
			if rw := narrow.RuneWidth(r); rw == w {
				agree++
				if ep != (rw == 2) {
					t.Errorf("%U: Emoji_Presentation %v, runewidth %d", r, ep, rw)
				}
			}
		}
		if mod != (ep && w == 0) {
			t.Errorf("%U: Emoji_Modifier %v, Emoji_Presentation %v, width %d", r, mod, ep, w)
		}
		if pair := ansi.StringWidth(s + s); !jamo && ri != (w == 2 && pair == 2) {
			t.Errorf("%U: Regional_Indicator %v, but %d cells alone and %d in a pair", r, ri, w, pair)
		}
		// Conjoining jamo join a leading jamo, or a leading jamo and a
		// vowel, into one syllable; precomposed syllables do not decompose
		// into them.
		if unicode.Is(unicode.Hangul, r) && unicode.IsLetter(r) && norm.NFD.String(s) == s {
			joins := ansi.StringWidth("\u1100"+s) == 2 || ansi.StringWidth("\u1100\u1161"+s) == 2
			if joins != jamo {
				t.Errorf("%U: conjoining jamo %v, joins a syllable %v", r, jamo, joins)
			}
		} else if jamo {
			t.Errorf("%U: conjoining jamo outside the Hangul letters", r)
		}
	}
	if agree < pictographs/2 {
		t.Errorf("runewidth agrees with the width library on only %d of %d pictographs", agree, pictographs)
	}
}

// BenchmarkTables measures building the tables, which the first rendering
// of a process pays.
func BenchmarkTables(b *testing.B) {
	for b.Loop() {
		newRuneTables()
	}
}

// BenchmarkLineHostile1MiB renders a MiB of runes drawn from every pool.
func BenchmarkLineHostile1MiB(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteRune(draw(rng))
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	tables() // built once per process: BenchmarkTables
	for b.Loop() {
		Line(text)
	}
}

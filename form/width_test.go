package form

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
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

	"github.com/askperm/askperm/form/internal/widthgen"
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
		"disputed widths": disputedWidths,
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

// measures are the width tables of width_gen.go, read from their data.
var measures = sync.OnceValues(func() ([]widthgen.Measure, error) {
	return widthgen.Load("internal/widthgen/data")
})

// TestHiddenIffEscaped: after a plain base, every code point beyond ASCII
// but the controls and ⟨ (which starts notation) is either shown as is or
// escaped and reported by Hidden; one that any two width tables, or a
// table and the width library, measure differently is escaped.
func TestHiddenIffEscaped(t *testing.T) {
	ms, err := measures()
	if err != nil {
		t.Fatal(err)
	}
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || unicode.Is(unicode.Cc, r) || r == '⟨' {
			continue
		}
		s := string(r)
		shown := Line("a"+s) == "a"+s
		if shown == Hidden(s) {
			t.Fatalf("%U: shown after a base %v, Hidden %v", r, shown, Hidden(s))
		}
		if !shown {
			continue
		}
		lib := ansi.StringWidth(s)
		for _, m := range ms {
			if w := m.Width(r); w != lib {
				t.Fatalf("%U is shown, but it is %d cells wide in %s and %d in the width library", r, w, m.Name, lib)
			}
		}
	}
}

// TestYijingHexagrams: U+4DC0-U+4DFF are 1 cell wide in Unicode 15.0 and
// the width library, 2 in glibc (tmux) and Unicode 16.0: a reason full of
// them would shift the layout in some terminals, so each is escaped.
func TestYijingHexagrams(t *testing.T) {
	for r := rune(0x4dc0); r <= 0x4dff; r++ {
		s := string(r)
		want := fmt.Sprintf(`a\u{%x}`, r)
		if got := Line("a" + s); got != want || Block("a"+s) != want || !Hidden(s) {
			t.Errorf("%U: Line %q, Block %q, Hidden %v; want %q escaped and Hidden", r, got, Block("a"+s), Hidden(s), want)
		}
	}
}

// TestWidthGenerated: width_gen.go is what internal/widthgen writes from
// its data (go generate ./form/ writes it anew).
func TestWidthGenerated(t *testing.T) {
	ms, err := measures()
	if err != nil {
		t.Fatal(err)
	}
	want, err := widthgen.Source(ms)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("width_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("width_gen.go is not what internal/widthgen writes from its data: run go generate ./form/")
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

// emojiPresentation is Emoji_Presentation=Yes in Unicode 15.0.0
// (emoji-data.txt), the version of the width library, which
// TestWidthTables checks against it.
var emojiPresentation = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x231a, 0x231b, 1}, {0x23e9, 0x23ec, 1}, {0x23f0, 0x23f0, 1}, {0x23f3, 0x23f3, 1},
		{0x25fd, 0x25fe, 1}, {0x2614, 0x2615, 1}, {0x2648, 0x2653, 1}, {0x267f, 0x267f, 1},
		{0x2693, 0x2693, 1}, {0x26a1, 0x26a1, 1}, {0x26aa, 0x26ab, 1}, {0x26bd, 0x26be, 1},
		{0x26c4, 0x26c5, 1}, {0x26ce, 0x26ce, 1}, {0x26d4, 0x26d4, 1}, {0x26ea, 0x26ea, 1},
		{0x26f2, 0x26f3, 1}, {0x26f5, 0x26f5, 1}, {0x26fa, 0x26fa, 1}, {0x26fd, 0x26fd, 1},
		{0x2705, 0x2705, 1}, {0x270a, 0x270b, 1}, {0x2728, 0x2728, 1}, {0x274c, 0x274c, 1},
		{0x274e, 0x274e, 1}, {0x2753, 0x2755, 1}, {0x2757, 0x2757, 1}, {0x2795, 0x2797, 1},
		{0x27b0, 0x27b0, 1}, {0x27bf, 0x27bf, 1}, {0x2b1b, 0x2b1c, 1}, {0x2b50, 0x2b50, 1},
		{0x2b55, 0x2b55, 1},
	},
	R32: []unicode.Range32{
		{0x1f004, 0x1f004, 1}, {0x1f0cf, 0x1f0cf, 1}, {0x1f18e, 0x1f18e, 1}, {0x1f191, 0x1f19a, 1},
		{0x1f1e6, 0x1f1ff, 1}, {0x1f201, 0x1f201, 1}, {0x1f21a, 0x1f21a, 1}, {0x1f22f, 0x1f22f, 1},
		{0x1f232, 0x1f236, 1}, {0x1f238, 0x1f23a, 1}, {0x1f250, 0x1f251, 1}, {0x1f300, 0x1f320, 1},
		{0x1f32d, 0x1f335, 1}, {0x1f337, 0x1f37c, 1}, {0x1f37e, 0x1f393, 1}, {0x1f3a0, 0x1f3ca, 1},
		{0x1f3cf, 0x1f3d3, 1}, {0x1f3e0, 0x1f3f0, 1}, {0x1f3f4, 0x1f3f4, 1}, {0x1f3f8, 0x1f43e, 1},
		{0x1f440, 0x1f440, 1}, {0x1f442, 0x1f4fc, 1}, {0x1f4ff, 0x1f53d, 1}, {0x1f54b, 0x1f54e, 1},
		{0x1f550, 0x1f567, 1}, {0x1f57a, 0x1f57a, 1}, {0x1f595, 0x1f596, 1}, {0x1f5a4, 0x1f5a4, 1},
		{0x1f5fb, 0x1f64f, 1}, {0x1f680, 0x1f6c5, 1}, {0x1f6cc, 0x1f6cc, 1}, {0x1f6d0, 0x1f6d2, 1},
		{0x1f6d5, 0x1f6d7, 1}, {0x1f6dc, 0x1f6df, 1}, {0x1f6eb, 0x1f6ec, 1}, {0x1f6f4, 0x1f6fc, 1},
		{0x1f7e0, 0x1f7eb, 1}, {0x1f7f0, 0x1f7f0, 1}, {0x1f90c, 0x1f93a, 1}, {0x1f93c, 0x1f945, 1},
		{0x1f947, 0x1f9ff, 1}, {0x1fa70, 0x1fa7c, 1}, {0x1fa80, 0x1fa88, 1}, {0x1fa90, 0x1fabd, 1},
		{0x1fabf, 0x1fac5, 1}, {0x1face, 0x1fadb, 1}, {0x1fae0, 0x1fae8, 1}, {0x1faf0, 0x1faf8, 1},
	},
}

package form

import (
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/text/unicode/rangetable"
)

// This file decides which runes have a width that the layout and every
// terminal agree on. The width library the frontends lay out with
// (ansi.StringWidth, on grapheme clusters) is compared with cells below,
// an independent per-rune measure of what a terminal draws, and the
// tables terminals draw with are compared with each other: glibc's
// wcwidth and the East Asian Width and emoji presentation of Unicode 15.0,
// 16.0 and 17.0 (width_gen.go, which internal/widthgen writes from their
// data). The renderer escapes a rune any two of them disagree on, or whose
// width depends on its neighbours.
//
// The tables below are Unicode 15.0.0, the version of Go's unicode
// package and of the width library's data: extendedPictographic and
// emojiModifier from
// https://www.unicode.org/Public/15.0.0/ucd/emoji/emoji-data.txt;
// regionalIndicator from auxiliary/GraphemeBreakProperty.txt and
// conjoiningJamo (Hangul_Syllable_Type L, V and T) from
// HangulSyllableType.txt, both under https://www.unicode.org/Public/15.0.0/ucd/.
// width_test.go checks each against the width library.

//go:generate go run ./internal/widthgen/cmd/widthgen -o width_gen.go

// cells is the independent measure: how many terminal cells r takes where
// the tables of width_gen.go agree: 2 for wideCells, none for combining
// marks (Mn, Me), 1 for anything else.
func cells(r rune) int {
	switch {
	case r < utf8.RuneSelf: // ASCII, of which only the printable is drawn
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case unicode.Is(wideCells, r):
		return 2
	}
	return 1
}

// uncertainWidths returns the runes of graphic beyond ASCII whose width is
// not certain:
//   - those the width library and cells disagree on, standing alone
//     (vowel signs the width library calls zero-width, pictographs it calls
//     narrow where East Asian Width says wide, dashes it calls three cells
//     wide);
//   - disputedWidths: those the tables terminals draw with disagree on
//     (Yijing hexagrams, 1 cell in Unicode 15.0 but 2 in glibc and Unicode
//     16.0), or one does not know (runes newer than glibc's Unicode), and
//     combining marks East Asian Width calls wide (zero or two cells);
//   - regional indicators, two of which make one flag of 2 or 4 cells;
//   - emoji modifiers, which merge with the emoji before them or not;
//   - the presentation selectors U+FE0E and U+FE0F, which switch a
//     pictograph between its narrow text and wide emoji presentations;
//   - conjoining jamo, which merge with their neighbours into syllables.
//
// Measuring takes a few milliseconds, done once, on first use. Ideographs
// (two thirds of the graphic runes) are not measured: no grapheme cluster
// rule names them, so the width library, like cells, takes their width from
// East Asian Width alone; TestWidthEveryRune measures each one.
func uncertainWidths(graphic *unicode.RangeTable) *unicode.RangeTable {
	// One string holds the runes, so that measuring one allocates nothing.
	var all []byte
	rangetable.Visit(graphic, func(r rune) {
		if r >= utf8.RuneSelf && !unicode.Is(unicode.Ideographic, r) {
			all = utf8.AppendRune(all, r)
		}
	})
	text := string(all)
	var rs []rune
	for i, r := range text {
		n := cells(r)
		if ansi.StringWidth(text[i:i+utf8.RuneLen(r)]) != n {
			rs = append(rs, r)
		}
	}
	return rangetable.Merge(rangetable.New(rs...), disputedWidths, regionalIndicator, emojiModifier,
		rangetable.New(0xfe0e, 0xfe0f), conjoiningJamo)
}

// spacingMarks returns Grapheme_Cluster_Break=SpacingMark and a little
// more: the spacing marks (Mc) and the Thai and Lao AM vowels (UAX #29).
// One joins the grapheme cluster before it; the width library adds its
// width to the cluster unless a pictograph leads it, so the renderer
// escapes one that would follow a pictograph.
func spacingMarks() *unicode.RangeTable {
	return rangetable.Merge(unicode.Mc, rangetable.New(0x0e33, 0x0eb3))
}

// extendedPictographic is Extended_Pictographic=Yes: pictographs, which
// lead a grapheme cluster whose width the width library takes from them
// alone.
var extendedPictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00a9, 0x00a9, 1}, {0x00ae, 0x00ae, 1}, {0x203c, 0x203c, 1}, {0x2049, 0x2049, 1},
		{0x2122, 0x2122, 1}, {0x2139, 0x2139, 1}, {0x2194, 0x2199, 1}, {0x21a9, 0x21aa, 1},
		{0x231a, 0x231b, 1}, {0x2328, 0x2328, 1}, {0x2388, 0x2388, 1}, {0x23cf, 0x23cf, 1},
		{0x23e9, 0x23f3, 1}, {0x23f8, 0x23fa, 1}, {0x24c2, 0x24c2, 1}, {0x25aa, 0x25ab, 1},
		{0x25b6, 0x25b6, 1}, {0x25c0, 0x25c0, 1}, {0x25fb, 0x25fe, 1}, {0x2600, 0x2605, 1},
		{0x2607, 0x2612, 1}, {0x2614, 0x2685, 1}, {0x2690, 0x2705, 1}, {0x2708, 0x2712, 1},
		{0x2714, 0x2714, 1}, {0x2716, 0x2716, 1}, {0x271d, 0x271d, 1}, {0x2721, 0x2721, 1},
		{0x2728, 0x2728, 1}, {0x2733, 0x2734, 1}, {0x2744, 0x2744, 1}, {0x2747, 0x2747, 1},
		{0x274c, 0x274c, 1}, {0x274e, 0x274e, 1}, {0x2753, 0x2755, 1}, {0x2757, 0x2757, 1},
		{0x2763, 0x2767, 1}, {0x2795, 0x2797, 1}, {0x27a1, 0x27a1, 1}, {0x27b0, 0x27b0, 1},
		{0x27bf, 0x27bf, 1}, {0x2934, 0x2935, 1}, {0x2b05, 0x2b07, 1}, {0x2b1b, 0x2b1c, 1},
		{0x2b50, 0x2b50, 1}, {0x2b55, 0x2b55, 1}, {0x3030, 0x3030, 1}, {0x303d, 0x303d, 1},
		{0x3297, 0x3297, 1}, {0x3299, 0x3299, 1},
	},
	R32: []unicode.Range32{
		{0x1f000, 0x1f0ff, 1}, {0x1f10d, 0x1f10f, 1}, {0x1f12f, 0x1f12f, 1}, {0x1f16c, 0x1f171, 1},
		{0x1f17e, 0x1f17f, 1}, {0x1f18e, 0x1f18e, 1}, {0x1f191, 0x1f19a, 1}, {0x1f1ad, 0x1f1e5, 1},
		{0x1f201, 0x1f20f, 1}, {0x1f21a, 0x1f21a, 1}, {0x1f22f, 0x1f22f, 1}, {0x1f232, 0x1f23a, 1},
		{0x1f23c, 0x1f23f, 1}, {0x1f249, 0x1f3fa, 1}, {0x1f400, 0x1f53d, 1}, {0x1f546, 0x1f64f, 1},
		{0x1f680, 0x1f6ff, 1}, {0x1f774, 0x1f77f, 1}, {0x1f7d5, 0x1f7ff, 1}, {0x1f80c, 0x1f80f, 1},
		{0x1f848, 0x1f84f, 1}, {0x1f85a, 0x1f85f, 1}, {0x1f888, 0x1f88f, 1}, {0x1f8ae, 0x1f8ff, 1},
		{0x1f90c, 0x1f93a, 1}, {0x1f93c, 0x1f945, 1}, {0x1f947, 0x1faff, 1}, {0x1fc00, 0x1fffd, 1},
	},
	LatinOffset: 2,
}

// emojiModifier is Emoji_Modifier=Yes: the skin tones.
var emojiModifier = &unicode.RangeTable{
	R32: []unicode.Range32{
		{0x1f3fb, 0x1f3ff, 1},
	},
}

// regionalIndicator is Grapheme_Cluster_Break=Regional_Indicator: pairs of
// them are flags.
var regionalIndicator = &unicode.RangeTable{
	R32: []unicode.Range32{
		{0x1f1e6, 0x1f1ff, 1},
	},
}

// conjoiningJamo is Hangul_Syllable_Type L, V or T: leading consonants,
// vowels and trailing consonants that join into syllables.
var conjoiningJamo = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x1100, 0x11ff, 1}, {0xa960, 0xa97c, 1}, {0xd7b0, 0xd7c6, 1}, {0xd7cb, 0xd7fb, 1},
	},
}

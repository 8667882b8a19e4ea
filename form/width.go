package form

import (
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/text/unicode/rangetable"
	"golang.org/x/text/width"
)

// This file decides which runes have a width that the layout and the
// terminal agree on. Two measures are compared: the width library the
// frontends lay out with (ansi.StringWidth, on grapheme clusters), and cells
// below, an independent per-rune measure of what a terminal draws. The
// renderer escapes a rune they disagree on, or whose width depends on its
// neighbours.
//
// The tables are Unicode 15.0.0, the version of Go's unicode package, of
// golang.org/x/text/width and of the width library's data:
// emojiPresentation, extendedPictographic and emojiModifier from
// https://www.unicode.org/Public/15.0.0/ucd/emoji/emoji-data.txt;
// regionalIndicator from auxiliary/GraphemeBreakProperty.txt and
// conjoiningJamo (Hangul_Syllable_Type L, V and T) from
// HangulSyllableType.txt, both under https://www.unicode.org/Public/15.0.0/ucd/.
// width_test.go checks each against the width library.

// cells is the independent measure: how many terminal cells r takes, from
// the East Asian Width property (Wide and Fullwidth take 2) and
// Emoji_Presentation (2); combining marks take none, anything else 1.
func cells(r rune) int {
	switch {
	case r < utf8.RuneSelf: // ASCII, of which only the printable is drawn
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case wide(r) || unicode.Is(emojiPresentation, r):
		return 2
	}
	return 1
}

func wide(r rune) bool {
	k := width.LookupRune(r).Kind()
	return k == width.EastAsianWide || k == width.EastAsianFullwidth
}

// uncertainWidths returns the runes of graphic beyond ASCII whose width is
// not certain:
//   - those the two measures disagree on, standing alone (vowel signs the
//     width library calls zero-width, pictographs it calls narrow where East
//     Asian Width says wide, dashes it calls three cells wide);
//   - combining marks that East Asian Width calls wide: zero or two cells;
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
		if ansi.StringWidth(text[i:i+utf8.RuneLen(r)]) != n || n == 0 && wide(r) {
			rs = append(rs, r)
		}
	}
	return rangetable.Merge(rangetable.New(rs...), regionalIndicator, emojiModifier,
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

// emojiPresentation is Emoji_Presentation=Yes: drawn as a wide emoji by
// default.
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

package form

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"github.com/askperm/askperm/decision"
)

// This file is the one rendering routine of untrusted text. The output is
// an unambiguous notation: every input, even invalid UTF-8, has exactly one
// rendering, so two different strings never look alike because of the
// renderer. Its tokens are
//
//	a shown rune     any rune but `\` and `⟨` that passes the rules below
//	\\               a backslash
//	\t \n \r \b \e   tab, newline, carriage return, backspace, escape
//	\xHH             another C0 control or DEL (HH < 80), or a byte of
//	                 invalid UTF-8 (HH >= 80); two lowercase hex digits
//	\u{H...}         any other escaped rune, lowercase hex without padding
//	⟨N spaces⟩       Line only: a run of N >= 4 spaces
//
// Every `\` and `⟨` in the output starts a token, which is why a literal `⟨`
// is escaped as \u{27e8}.

const (
	minSpaceRun = 4 // Line shows longer runs of spaces as ⟨N spaces⟩
	maxMarks    = 2 // combining marks (a variation selector included) per base
)

// Line renders an untrusted single-line field: printable text passes, a
// backslash is doubled, and every control, bidi, zero-width, invisible or
// blank-looking character, and every character whose width is not certain
// (width.go), is escaped visibly. The result never holds a byte below 0x20
// and measures the same in the width library and on a terminal. Runs of 4
// or more spaces are counted, so that they cannot push the rest of the field
// out of view. Nothing is cut: wrapping is the frontend's job.
func Line(s string) string { return render(s, false) }

// Block renders untrusted multi-line text (a stated reason): like Line, but
// newlines and tabs are kept as layout (the frontend expands tabs) and runs
// of spaces are kept as indentation.
func Block(s string) string { return render(s, true) }

// Hidden reports whether s holds characters that hide or reorder text:
// format characters (bidi controls, zero-width characters, tags, U+00AD),
// U+0085, U+2028, U+2029, non-ASCII whitespace, private-use, unassigned and
// noncharacter code points, blank-looking letters, overlay marks and
// characters whose width is not certain (width.go), which could push the
// layout apart. The renderer escapes them; frontends show a "hidden or
// reordering characters" warning too. Other controls are escaped without a
// warning: their escapes are plain to see.
func Hidden(s string) bool {
	for _, r := range s {
		if classify(r) == hidden {
			return true
		}
	}
	return false
}

// class is how the renderer treats a rune, wherever it stands.
type class uint8

const (
	shown    class = iota // passes as is
	control               // C0, DEL, C1: escaped
	hidden                // escaped, and Hidden warns about it
	mark                  // combining mark: passes after a base, up to maxMarks
	selector              // variation selector: passes right after a base
)

// runeTables are merged once, on first use, so that classifying a rune
// takes few lookups and a process that renders nothing builds nothing.
type runeTables struct {
	// graphic is what unicode.IsPrint accepts beyond ASCII: L, M, N, P, S.
	// The rest (Zs, Zl, Zp, Cf, Co, Cs and unassigned, noncharacters
	// included) is hidden.
	graphic, combining *unicode.RangeTable
	// hidden is what unicode.IsPrint accepts but shows nothing, obscures
	// its neighbours or has no certain width: invisible letters and marks
	// (U+115F, U+1160, U+3164, U+FFA0, U+034F, U+17B4, U+17B5),
	// blank-looking symbols (braille blank, object replacement, null
	// notehead), overlays and uncertainWidths.
	hidden *unicode.RangeTable
	// spacing is spacingMarks: escaped after a pictograph.
	spacing *unicode.RangeTable
}

var tables = sync.OnceValue(newRuneTables)

func newRuneTables() runeTables {
	graphic := rangetable.Merge(unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
	combining := rangetable.Merge(unicode.Mn, unicode.Me)
	return runeTables{
		graphic:   graphic,
		combining: combining,
		hidden: rangetable.Merge(
			unicode.Other_Default_Ignorable_Code_Point,
			rangetable.New(0x2800, 0xfffc, 0x1d159),
			overlays(combining),
			uncertainWidths(graphic),
		),
		spacing: spacingMarks(),
	}
}

// overlays returns the marks drawn over their base (U+0334-U+0338 and kin,
// canonical combining class 1), which can strike text out of recognition.
func overlays(combining *unicode.RangeTable) *unicode.RangeTable {
	var rs []rune
	rangetable.Visit(combining, func(r rune) {
		if norm.NFD.PropertiesString(string(r)).CCC() == 1 {
			rs = append(rs, r)
		}
	})
	return rangetable.New(rs...)
}

func classify(r rune) class {
	switch {
	case r == 0x85: // NEL: a line break to some consumers
		return hidden
	case r < 0x20 || 0x7f <= r && r <= 0x9f:
		return control
	case r < 0x7f:
		return shown
	}
	t := tables()
	switch {
	case !unicode.Is(t.graphic, r) || unicode.Is(t.hidden, r):
		return hidden
	case unicode.Is(t.combining, r):
		if unicode.Is(unicode.Variation_Selector, r) {
			return selector
		}
		return mark
	}
	return shown
}

func render(s string, block bool) string {
	var b strings.Builder
	b.Grow(len(s))
	// marks counts the marks on the last shown base; -1 when the last thing
	// written was no base (start, escape, layout), so no mark may follow.
	// pict is whether that base is a pictograph, which a spacing mark
	// would join at no width in the width library.
	marks, pict := -1, false
	for i := 0; i < len(s); {
		if !block && s[i] == ' ' {
			j := i + 1
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j-i >= minSpaceRun {
				fmt.Fprintf(&b, "⟨%d spaces⟩", j-i)
				i, marks, pict = j, -1, false
				continue
			}
		}
		if plain(s[i], block) { // fast path
			j := i + 1
			for j < len(s) && plain(s[j], block) {
				j++
			}
			b.WriteString(s[i:j])
			i, marks, pict = j, 0, false
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			escapeByte(&b, s[i])
			i, marks, pict = i+1, -1, false
			continue
		}
		i += n
		switch c := classify(r); {
		case block && (r == '\n' || r == '\t'):
			b.WriteRune(r)
			marks, pict = -1, false
		case c == control || c == hidden || r == '\\' || r == '⟨':
			escape(&b, r)
			marks, pict = -1, false
		case c == shown && !(pict && unicode.Is(tables().spacing, r)):
			b.WriteString(s[i-n : i])
			marks, pict = 0, unicode.Is(extendedPictographic, r)
		case c == mark && 0 <= marks && marks < maxMarks,
			c == selector && marks == 0:
			b.WriteString(s[i-n : i])
			marks++
		default: // a mark, selector or spacing mark out of place
			escape(&b, r)
			marks, pict = -1, false
		}
	}
	return b.String()
}

// plain reports whether c is printable ASCII that stands for itself: not a
// backslash, and in a line no space, which may start a run.
func plain(c byte, block bool) bool {
	return '!' <= c && c <= '~' && c != '\\' || block && c == ' '
}

const hexDigits = "0123456789abcdef"

func escapeByte(b *strings.Builder, c byte) {
	b.Write([]byte{'\\', 'x', hexDigits[c>>4], hexDigits[c&0xf]})
}

func escape(b *strings.Builder, r rune) {
	switch r {
	case '\\':
		b.WriteString(`\\`)
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\b':
		b.WriteString(`\b`)
	case 0x1b:
		b.WriteString(`\e`)
	default:
		if r < 0x80 {
			escapeByte(b, byte(r))
			return
		}
		var buf [16]byte
		b.Write(append(strconv.AppendUint(append(buf[:0], `\u{`...), uint64(r), 16), '}'))
	}
}

// PreviewChars is how many characters of a detail are shown at most
// (protocol.md section 3).
const PreviewChars = 65536

// DetailPreview is one display-only detail ready to show.
type DetailPreview struct {
	Label     string // rendered with Line
	Text      string // rendered with Block, the first PreviewChars characters at most
	Bytes     int    // size of the original text in bytes
	Chars     int    // its length in characters (runes; each invalid byte counts as one)
	Shown     int    // characters previewed
	Truncated bool   // Shown < Chars
	Hidden    bool   // Hidden(original text) || Hidden(label)
}

// Preview renders a detail. Hidden looks at the whole text, so characters
// past the preview still raise the warning.
func Preview(d decision.Detail) DetailPreview {
	p := DetailPreview{
		Label:  Line(d.Label),
		Bytes:  len(d.Text),
		Chars:  utf8.RuneCountInString(d.Text),
		Hidden: Hidden(d.Text) || Hidden(d.Label),
	}
	end, n := len(d.Text), 0
	for i := range d.Text {
		if n == PreviewChars {
			end = i
			break
		}
		n++
	}
	p.Shown, p.Truncated = n, n < p.Chars
	p.Text = Block(d.Text[:end])
	return p
}

// Warning says how much of a truncated detail is shown; "" when all is.
func (p DetailPreview) Warning() string {
	if !p.Truncated {
		return ""
	}
	return fmt.Sprintf("WARNING: only the first %d of %d characters are shown.", p.Shown, p.Chars)
}

// Heading returns the one-line header of a preview, such as
// "content (1.2 KiB, 1234 characters)", followed when truncated by
// " — showing 65536 of 120000 characters".
func (p DetailPreview) Heading() string {
	h := fmt.Sprintf("%s (%s, %s)", p.Label, size(p.Bytes), plural(p.Chars, "character"))
	if p.Truncated {
		h += fmt.Sprintf(" — showing %d of %d characters", p.Shown, p.Chars)
	}
	return h
}

// size formats n bytes in binary units with one decimal from 1 KiB up.
func size(n int) string {
	if n < 1024 {
		return plural(n, "byte")
	}
	v := float64(n)
	for _, unit := range []string{"KiB", "MiB"} {
		// 1023.95 and more would print as "1024.0": take the next unit.
		if v /= 1024; v < 1023.95 {
			return fmt.Sprintf("%.1f %s", v, unit)
		}
	}
	return fmt.Sprintf("%.1f GiB", v/1024)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

package form

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/decision"
)

// lineCases hold exact renderings; they also seed the fuzz targets.
var lineCases = []struct{ name, in, want string }{
	{"empty", "", ""},
	{"plain", `ls -la ~/src "x" 'y' $HOME`, `ls -la ~/src "x" 'y' $HOME`},
	{"CSI 1A 2K rewrites the line above", "ok\x1b[1A\x1b[2Kallowed", `ok\e[1A\e[2Kallowed`},
	{"OSC 0 window title", "\x1b]0;pwned\x07ls", `\e]0;pwned\x07ls`},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\https://good.example/\x1b]8;;\x1b\\",
		`\e]8;;https://evil.example/\e\\https://good.example/\e]8;;\e\\`},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4K\x07", `\e]52;c;cm0gLXJmIH4K\x07`},
	{"C1 CSI as a character", "\u009b2J", `\u{9b}2J`},
	{"C1 CSI as a raw byte", "\x9b2J", `\x9b2J`},
	{"carriage return hides the command", "rm -rf ~/\rls -la", `rm -rf ~/\rls -la`},
	{"named and hex controls", "\t\n\r\b\x1b\x00\x07\x7f", `\t\n\r\b\e\x00\x07\x7f`},
	{"C1 NEL", "a\u0085b", `a\u{85}b`},
	{"Trojan Source", "if access_level != \"user\u202e \u2066// admin\u2069 \u2066\" {",
		`if access_level != "user\u{202e} \u{2066}// admin\u{2069} \u{2066}" {`},
	{"bidi marks", "\u200e\u200f\u061c", `\u{200e}\u{200f}\u{61c}`},
	{"zero-width joiner", "pay\u200dpal", `pay\u{200d}pal`},
	{"zero-width space and BOM", "r\u200bm\ufeff", `r\u{200b}m\u{feff}`},
	{"soft hyphen", "rm\u00ad-rf", `rm\u{ad}-rf`},
	{"tag characters", "ok\U000E0001\U000E0041\U000E007F", `ok\u{e0001}\u{e0041}\u{e007f}`},
	{"line and paragraph separators", "a\u2028b\u2029c", `a\u{2028}b\u{2029}c`},
	{"private use, unassigned, noncharacters", "\ue000\U000F0000\u0378\ufdd0\ufffe\U0010FFFF",
		`\u{e000}\u{f0000}\u{378}\u{fdd0}\u{fffe}\u{10ffff}`},
	{"combining flood", "a" + strings.Repeat("\u0301", 20),
		"a\u0301\u0301" + strings.Repeat(`\u{301}`, 18)},
	{"combining mark at the start", "\u0301a", `\u{301}a`},
	{"combining mark after an escape", "\x1b\u0301 \\\u0301", `\e\u{301} \\\u{301}`},
	{"overlay marks", "rm\u0336 -rf\u0337\u0338", `rm\u{336} -rf\u{337}\u{338}`},
	{"accents", "cafe\u0301 Vie\u0323\u0302t", "cafe\u0301 Vie\u0323\u0302t"},
	{"scripts", "日本語 Ελληνικά हिंदी עִבְרִית", "日本語 Ελληνικά हिंदी עִבְרִית"},
	{"Hangul filler", "rm\u3164-rf", `rm\u{3164}-rf`},
	{"blank-looking letters", "\u115f\u1160\uffa0\u2800\ufffc\U0001D159\u034f\u17b4",
		`\u{115f}\u{1160}\u{ffa0}\u{2800}\u{fffc}\u{1d159}\u{34f}\u{17b4}`},
	{"NBSP", "rm\u00a0-rf", `rm\u{a0}-rf`},
	{"non-ASCII whitespace", "\u1680\u2000\u200a\u202f\u205f\u3000", `\u{1680}\u{2000}\u{200a}\u{202f}\u{205f}\u{3000}`},
	{"literal backslash sequences", `a\x1bb \e \u{1b} \\`, `a\\x1bb \\e \\u{1b} \\\\`},
	{"real control beside its literal", "\x1b" + `\e`, `\e\\e`},
	{"three spaces stay", "a   b", "a   b"},
	{"four spaces are counted", "ls    -la", "ls⟨4 spaces⟩-la"},
	{"long run of spaces", "ok" + strings.Repeat(" ", 200) + "; rm -rf ~", "ok⟨200 spaces⟩; rm -rf ~"},
	{"literal space marker", "⟨4 spaces⟩", `\u{27e8}4 spaces⟩`},
	{"combining mark after a space run", "    \u0301", `⟨4 spaces⟩\u{301}`},
	{"presentation selectors", "\u2764\ufe0f \u263a\ufe0e", "\u2764" + `\u{fe0f} ` + "\u263a" + `\u{fe0e}`},
	{"keycap", "1\ufe0f\u20e3", `1\u{fe0f}\u{20e3}`},
	{"ideographic variation selector", "\u845b\U000E0100", "\u845b\U000E0100"},
	{"variation selector out of place", "\ufe00a\u0301\ufe00", `\u{fe00}a` + "\u0301" + `\u{fe00}`},
	{"emoji ZWJ sequence, modifier, flag", "👨\u200d👩\u200d👧 👍🏽 🇫🇷", `👨\u{200d}👩\u{200d}👧 👍\u{1f3fd} \u{1f1eb}\u{1f1f7}`},
	{"modifier after a non-emoji", "rm🏽🏽🏽", `rm\u{1f3fd}\u{1f3fd}\u{1f3fd}`},
	{"vowel sign the width library calls zero-width", "\u0b95\u0bbe", "\u0b95" + `\u{bbe}`},
	{"halfwidth sound mark", "\uff76\uff9e", "\uff76" + `\u{ff9e}`},
	{"musical stem", "\U0001D158\U0001D165", "\U0001D158" + `\u{1d165}`},
	{"wide ideographic tone mark", "\u4e2d\u302a", "\u4e2d" + `\u{302a}`},
	{"wide pictograph the width library calls narrow", "\u3297", `\u{3297}`},
	{"three-em dash", "\u2e3b", `\u{2e3b}`},
	{"conjoining jamo", "\u1100\u1161\u11a8 \uac00", `\u{1100}\u{1161}\u{11a8} ` + "\uac00"},
	{"spacing mark after a pictograph", "😀\u093e \u0915\u093e", `😀\u{93e} ` + "\u0915\u093e"},
	{"invalid UTF-8", "a\xffb\xc3 \xed\xa0\x80", `a\xffb\xc3 \xed\xa0\x80`},
	{"replacement character is text", "\ufffd", "\ufffd"},
}

func TestLine(t *testing.T) {
	for _, c := range lineCases {
		if got := Line(c.in); got != c.want {
			t.Errorf("%s: Line(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		checkRendering(t, c.in, Line(c.in), false)
	}
}

func TestBlock(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"layout kept", "line 1\n\tindented\n    four spaces\n", "line 1\n\tindented\n    four spaces\n"},
		{"CRLF", "a\r\nb", "a\\r\nb"},
		{"other controls", "\x1b[2J\x00\v\f\u0085", `\e[2J\x00\x0b\x0c\u{85}`},
		{"mark at a line start", "a\n\u0301\t\u0301", "a\n\\u{301}\t\\u{301}"},
		{"line separator", "a\u2028b", `a\u{2028}b`},
		{"literal space marker", "⟨4 spaces⟩", `\u{27e8}4 spaces⟩`},
	} {
		if got := Block(c.in); got != c.want {
			t.Errorf("%s: Block(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		checkRendering(t, c.in, Block(c.in), true)
	}
	// Apart from layout, Block renders as Line does.
	for _, c := range lineCases {
		if !strings.ContainsAny(c.in, "\n\t ") && Block(c.in) != c.want {
			t.Errorf("%s: Block(%q) = %q, want %q", c.name, c.in, Block(c.in), c.want)
		}
	}
}

func TestHidden(t *testing.T) {
	for _, s := range []string{
		"\u202e", "\u2066", "\u061c", "\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad",
		"\U000E0041", "\u2028", "\u2029", "\u0085", "\ue000", "\u0378", "\ufffe",
		"\u3164", "\u115f", "\u2800", "\u00a0", "\u3000", "\u0336", "ok\u202e",
		"\u2764\ufe0f", "\ufe0f", "👍🏽", "\U0001F1EB", "\u0bbe", "\u302a", "\u2e3a", "\u1161",
	} {
		if !Hidden(s) {
			t.Errorf("Hidden(%q) = false", s)
		}
	}
	for _, s := range []string{
		"", "ls -la", "\x1b[2J\r\n\t\x00", "\u009b", "\xff", "cafe\u0301", "日本語",
		"\u2764", "👍", "\u845b\U000E0100", strings.Repeat("\u0301", 5), "⟨", "😀\u093e",
	} {
		if Hidden(s) {
			t.Errorf("Hidden(%q) = true", s)
		}
	}
}

func TestPreview(t *testing.T) {
	long := strings.Repeat("ab\n", 33333) + "\u202e" // 100000 characters
	p := Preview(decision.Detail{Label: "con\x1btent", Text: long})
	want := DetailPreview{
		Label:     `con\etent`,
		Text:      strings.Repeat("ab\n", 21845) + "a",
		Bytes:     100002,
		Chars:     100000,
		Shown:     65536,
		Truncated: true,
		Hidden:    true, // from past the preview
	}
	if p != want {
		t.Errorf("Preview(long) = %+v", p)
	}
	if h, want := p.Heading(), `con\etent (97.7 KiB, 100000 characters) — showing 65536 of 100000 characters`; h != want {
		t.Errorf("Heading() = %q, want %q", h, want)
	}

	text := "for i in 1 2 3; do\n\techo \"$i\"\ndone\r\n"
	p = Preview(decision.Detail{Label: "stdin", Text: text})
	want = DetailPreview{
		Label: "stdin",
		Text:  "for i in 1 2 3; do\n\techo \"$i\"\ndone\\r\n",
		Bytes: 36, Chars: 36, Shown: 36,
	}
	if p != want {
		t.Errorf("Preview(short) = %+v", p)
	}
	if h, want := p.Heading(), "stdin (36 bytes, 36 characters)"; h != want {
		t.Errorf("Heading() = %q, want %q", h, want)
	}

	p = Preview(decision.Detail{Label: "diff\u200b", Text: strings.Repeat("é", PreviewChars)})
	if p.Truncated || p.Shown != PreviewChars || p.Bytes != 2*PreviewChars || !p.Hidden || p.Label != `diff\u{200b}` {
		t.Errorf("Preview(exactly PreviewChars) = %+v", p)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int]string{
		0: "0 bytes", 1: "1 byte", 1023: "1023 bytes", 1024: "1.0 KiB", 1234: "1.2 KiB",
		1<<20 - 1: "1.0 MiB", 5 << 20: "5.0 MiB", 5 << 30: "5.0 GiB",
	} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}

// checkRendering asserts the renderer's promises on one rendering: valid
// UTF-8; only printable runes (no C0, DEL, C1, Cf, Zl, Zp, Co, Cs or Cn),
// save tab and newline in a block; none the renderer calls
// hidden; no combining mark at the start or more than maxMarks in a row; in
// a line no run of 4 spaces; every line as wide in the width library as in
// cells; and the input recoverable from the output, which makes the
// rendering one-to-one.
func checkRendering(t *testing.T, in, out string, block bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("render(%q) = %q: invalid UTF-8", in, out)
	}
	marks := 0
	for i, r := range out {
		c := classify(r)
		switch {
		case block && (r == '\n' || r == '\t'):
		case c == control || c == hidden || !unicode.IsPrint(r):
			t.Fatalf("render(%q) = %q: %U at byte %d", in, out, r, i)
		}
		if cells(r) == 0 {
			if marks++; i == 0 || marks > maxMarks {
				t.Fatalf("render(%q) = %q: mark %U at byte %d", in, out, r, i)
			}
		} else {
			marks = 0
		}
	}
	if !block && strings.Contains(out, "    ") {
		t.Fatalf("Line(%q) = %q: a run of spaces", in, out)
	}
	checkWidths(t, in, out)
	if got := unrender(t, out); got != in {
		t.Fatalf("render(%q) = %q, which reads back as %q", in, out, got)
	}
}

// checkWidths asserts that each line of a rendering, and each part of it
// between tabs (which the frontend expands), is as wide in the width library
// the frontends lay out with as in cells, the independent measure of what a
// terminal draws.
func checkWidths(t *testing.T, in, out string) {
	for _, part := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\t' }) {
		if lib, term := ansi.StringWidth(part), termWidth(part); lib != term {
			t.Fatalf("render(%q) holds %q: %d cells wide to the width library, %d to a terminal", in, part, lib, term)
		}
	}
}

// termWidth sums cells over s.
func termWidth(s string) int {
	n := 0
	for _, r := range s {
		n += cells(r)
	}
	return n
}

// unescaped maps the letter of each named escape to its byte.
var unescaped = map[byte]byte{'\\': '\\', 't': '\t', 'n': '\n', 'r': '\r', 'b': '\b', 'e': 0x1b}

// unrender reads the notation of render.go back.
func unrender(t *testing.T, out string) string {
	var b strings.Builder
	for i := 0; i < len(out); {
		rest := out[i:]
		switch {
		case strings.HasPrefix(rest, "⟨"):
			digits, _, ok := strings.Cut(rest[len("⟨"):], " spaces⟩")
			n, err := strconv.Atoi(digits)
			if !ok || err != nil || n < minSpaceRun {
				t.Fatalf("bad space run at byte %d of %q", i, out)
			}
			b.WriteString(strings.Repeat(" ", n))
			i += len("⟨" + digits + " spaces⟩")
		case strings.HasPrefix(rest, `\x`) && len(rest) >= 4:
			c, err := strconv.ParseUint(rest[2:4], 16, 8)
			if err != nil {
				t.Fatalf("bad \\x escape at byte %d of %q", i, out)
			}
			b.WriteByte(byte(c))
			i += 4
		case strings.HasPrefix(rest, `\u{`):
			hex, _, ok := strings.Cut(rest[3:], "}")
			r, err := strconv.ParseUint(hex, 16, 32)
			if !ok || err != nil {
				t.Fatalf("bad \\u escape at byte %d of %q", i, out)
			}
			b.WriteRune(rune(r))
			i += len(`\u{` + hex + "}")
		case rest[0] == '\\' && len(rest) >= 2:
			c, ok := unescaped[rest[1]]
			if !ok {
				t.Fatalf("bad escape at byte %d of %q", i, out)
			}
			b.WriteByte(c)
			i += 2
		default:
			_, n := utf8.DecodeRuneInString(rest)
			b.WriteString(rest[:n])
			i += n
		}
	}
	return b.String()
}

func BenchmarkBlock1MiB(b *testing.B) {
	chunk := "func main() {\n\tfmt.Println(\"héllo, wörld\") // 日本語 ❤️ 👨\u200d👩\u200d👧\n" +
		"    x := `a\\b` \x1b[2J\u202e\u00a0cafe\u0301\r\n}\n"
	text := strings.Repeat(chunk, 1<<20/len(chunk)+1)[:1<<20]
	b.SetBytes(int64(len(text)))
	tables() // built once per process: BenchmarkTables
	for b.Loop() {
		Block(text)
	}
}

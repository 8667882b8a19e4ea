package cli

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/askperm/askperm/form"
)

// genText is a string of runes a terminal acts on, hides or shows, and
// of the runes that start the renderer's escapes.
func genText(r *rand.Rand) string {
	pool := []rune{'a', 'Z', ' ', '\\', '⟨', '⟩', 'e', '{', 'é', '中', '\x1b', '\x07', '\x7f', '\u009b', '\u0085', '\u202e', '\u2066', '\u200b', '\ufeff', '\u0301', '\U0001F600', '\n', '\t'}
	var b strings.Builder
	for range r.IntN(16) {
		b.WriteRune(pool[r.IntN(len(pool))])
	}
	if r.IntN(8) == 0 {
		b.WriteString("\xff") // invalid UTF-8
	}
	return b.String()
}

// raw reports a rune a terminal must never get unrendered.
func raw(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar
}

// Text of another machine is shown with nothing a terminal acts on; text
// rendered already (as the audit log writes it) is shown unchanged, and
// is said to be; JSON made all ASCII is the same JSON.
func TestShownAndASCIIJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 23))
	for range 20000 {
		s := genText(r)
		got, ok := Shown(s)
		if strings.ContainsFunc(got, raw) {
			t.Fatalf("Shown(%q) = %q", s, got)
		}
		if ok != (got == s) {
			t.Fatalf("Shown(%q) = %q, %v", s, got, ok)
		}
		line := form.Line(s)
		if again, ok := Shown(line); again != line || !ok {
			t.Fatalf("rendered %q shown as %q, %v", line, again, ok)
		}
		b, err := json.Marshal(map[string]string{s: s})
		if err != nil {
			t.Fatal(err)
		}
		a := ASCIIJSON(b)
		for _, c := range a {
			if c >= 0x7f || c < 0x20 {
				t.Fatalf("ASCIIJSON(%q) holds %#x: %q", b, c, a)
			}
		}
		var back map[string]string
		if err := json.Unmarshal(a, &back); err != nil || len(back) != 1 {
			t.Fatalf("ASCIIJSON(%q) = %q: %v", b, a, err)
		}
		var want map[string]string
		json.Unmarshal(b, &want)
		for k, v := range want {
			if back[k] != v {
				t.Fatalf("ASCIIJSON(%q) = %q, reads %q", b, a, back)
			}
		}
	}
}

package form

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
)

func TestHeadline(t *testing.T) {
	dim := []decision.Dimension{{Name: "path", Value: "/home/a/p/report.md"}}
	long := strings.Repeat("x", HeadlineValueRunes) + "\u202eyz"
	for _, c := range []struct {
		req  decision.Request
		want string
	}{
		{decision.Request{Server: "fs-default", Tool: "write_file", Action: "write", Dimensions: dim},
			"write_file (fs-default) wants to write /home/a/p/report.md"},
		{decision.Request{Tool: "Bash", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "ls\n\trm -rf /"}}},
			`Bash wants to run ls\n\trm -rf /`},
		{decision.Request{Server: "fs", Action: "read"}, "A tool of fs wants to read something"},
		{decision.Request{Action: "net\u202e"}, `An agent wants to do the action “net\u{202e}”`},
		{decision.Request{Tool: "t", Action: "exec", Dimensions: []decision.Dimension{{Name: "c", Value: long}}},
			"t wants to run " + strings.Repeat("x", HeadlineValueRunes) + " … (3 more characters, in full below)"},
		// Names the agent chooses are cut too: they must not fill a screen.
		{decision.Request{Tool: "askperm checked this: safe. " + strings.Repeat("lorem ", 600), Server: strings.Repeat("s", HeadlineNameRunes+1), Action: "read"},
			"askperm checked this: safe. lorem lorem lorem lorem lorem lo … (3568 more characters) (" +
				strings.Repeat("s", HeadlineNameRunes) + " … (1 more character)) wants to read something"},
		{decision.Request{Server: strings.Repeat("é", HeadlineNameRunes+2), Action: strings.Repeat("a", HeadlineNameRunes+5)},
			"A tool of " + strings.Repeat("é", HeadlineNameRunes) + " … (2 more characters) wants to do the action “" +
				strings.Repeat("a", HeadlineNameRunes) + " … (5 more characters)”"},
	} {
		if got := New(&c.req, Options{}).Headline(); got != c.want {
			t.Errorf("Headline(%+v) = %q, want %q", c.req, got, c.want)
		}
	}
}

// TestHeadlineHostile draws requests from every pool of width_test.go: the
// headline is one line of renderer output whatever the request holds.
// TestHeadlineVerbs: every action the describers produce, and the
// protocol's, reads as English, with a value and without.
func TestHeadlineVerbs(t *testing.T) {
	path := []decision.Dimension{{Name: "path", Value: "/tmp/x"}}
	bash := []decision.Dimension{{Name: "command", Value: "git push --force origin main", Syntax: decision.SyntaxShell}}
	for _, c := range []struct {
		req  decision.Request
		want string
	}{
		{decision.Request{Server: "claude-code", Tool: "Bash", Action: "destructive", Dimensions: bash},
			"Bash (claude-code) wants to run git push --force origin main"},
		{decision.Request{Tool: "t", Action: "read", Dimensions: path}, "t wants to read /tmp/x"},
		{decision.Request{Tool: "t", Action: "write", Dimensions: path}, "t wants to write /tmp/x"},
		{decision.Request{Tool: "t", Action: "destructive", Dimensions: path}, "t wants to change or delete /tmp/x"},
		{decision.Request{Tool: "t", Action: "destructive"}, "t wants to make a change that may not be undone"},
		{decision.Request{Tool: "t", Action: "network", Dimensions: []decision.Dimension{{Name: "url", Value: "https://x.test/"}}}, "t wants to reach https://x.test/"},
		{decision.Request{Tool: "t", Action: "network"}, "t wants to reach the network"},
		{decision.Request{Tool: "t", Action: "exec", Dimensions: []decision.Dimension{{Name: "c", Value: "make"}}}, "t wants to run make"},
		{decision.Request{Tool: "t", Action: "exec"}, "t wants to run a command"},
		{decision.Request{Tool: "t", Action: "read"}, "t wants to read something"},
		{decision.Request{Tool: "t", Action: "deploy", Dimensions: path}, "t wants to deploy /tmp/x"},
		{decision.Request{Tool: "t", Action: "Deploy_All", Dimensions: path}, "t wants to do the action “Deploy_All” on /tmp/x"},
	} {
		if got := New(&c.req, Options{}).Headline(); got != c.want {
			t.Errorf("Headline(%+v) = %q, want %q", c.req, got, c.want)
		}
	}
}

func TestHeadlineHostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		rs := make([]rune, rng.IntN(200))
		for i := range rs {
			rs[i] = draw(rng)
		}
		return string(rs)
	}
	for range 2000 {
		req := decision.Request{Server: str() + str(), Tool: str() + str() + str(), Action: str(),
			Dimensions: []decision.Dimension{{Name: "d", Value: str()}}}
		h := New(&req, Options{}).Headline()
		// Every part is cut: the headline's length is bounded whatever
		// the agent sends (an escape shows a rune in at most 10).
		if n, most := utf8.RuneCountInString(h), 10*(3*HeadlineNameRunes+HeadlineValueRunes)+300; n > most {
			t.Fatalf("Headline of %+v is %d runes, more than %d", req, n, most)
		}
		for _, b := range []byte(h) {
			if b < 0x20 || b == 0x7f {
				t.Fatalf("Headline of %+v holds byte %#x: %q", req, b, h)
			}
		}
		checkBoth(t, h)
	}
}

func TestArgumentsText(t *testing.T) {
	for in, want := range map[string]string{
		`{"path":"C:\\Users\\a"}`:    `{"path":"C:\\Users\\a"}`,
		`{"q":"say \"hi\"","n":1.0}`: `{"n":1,"q":"say \"hi\""}`,
		`{"s":"a\\\"b"}`:             `{"s":"a\\\"b"}`,
		`{"t":"tab\there\u202e"}`:    `{"t":"tab\there\u{202e}"}`,
		`["    ",null,true]`:         `["⟨4 spaces⟩",null,true]`,
	} {
		if got := argumentsText([]byte(in)); got != want {
			t.Errorf("argumentsText(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestArgumentsTextInjective: distinct string values never show alike, and
// each shows as Line of it with quotes marked.
func TestArgumentsTextInjective(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune{'"', '\\', 'a', ' ', '\n', '\u202e', '⟨', ',', ':', '{', '}'}
	seen := map[string]string{}
	for range 20000 {
		rs := make([]rune, rng.IntN(8))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(rs)
		raw, _ := json.Marshal(map[string]string{"k": s})
		got := argumentsText(raw)
		if want := `{"k":"` + strings.ReplaceAll(Line(s), `"`, `\"`) + `"}`; got != want {
			t.Fatalf("argumentsText(%s) = %s, want %s", raw, got, want)
		}
		if prev, ok := seen[got]; ok && prev != s {
			t.Fatalf("%q and %q both show as %s", prev, s, got)
		}
		seen[got] = s
	}
}

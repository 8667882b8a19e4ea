package match

import (
	"testing"

	"github.com/askperm/askperm/decision"
)

// wordExamples are allows whose wildcards once spanned the blank between
// two words of a command, or read a word holding a blank as several
// (protocol section 10, "Matching"), and a deny of each, which reads the
// command as before: its words joined by spaces, a `*` spanning them
// (a path glob's `*` never spans a '/', so `rm -rf build/*` denies
// nothing more of `rm -rf build/x /`).
var wordExamples = []struct {
	pattern, line string
	allow, deny   bool
}{
	{"rm -rf build/*", "rm -rf build/x ..", false, true},
	{"rm -rf build/*", "rm -rf build/x /", false, false},
	{"rm -rf build/*", "rm -rf build/x", true, true},
	{"cat src/*", "cat src/a .env", false, true},
	{"cat src/*", "cat src/a", true, true},
	{"ls*", "ls -l", false, true},
	{"git st?tus", "git st tus", false, true},
	{"git st[ a]tus", "git st tus", false, true},
	{"git status *", "git status -s", true, true},
	{"git status *", "git status", false, false},
	{"git *", "git log -n 1 ./x", true, true},
	{"rm *", "rm -rf /", true, true},
	{"{ls,git *}", "git log -n 1", true, true},
	{"{ls,git *} -l", "git log -l", true, true},
	{"{ls,git *} -l", "git log x -l", false, true},
	{"rm -rf status", `"rm -rf" status`, false, false},
	{"rm -rf status", "'rm -rf' status", false, false},
	{"rm -rf status", `rm\ -rf status`, false, false},
	{"rm -rf status", "$'rm\\t-rf' status", false, false},
	{"rm -rf status", "$'rm\\n-rf' status", false, false},
	{"'rm -rf' status", `"rm -rf" status`, true, true},
	{"echo a b", "echo 'a b'", false, true},
	{"echo a*", "echo 'a b'", false, true},
	{"echo 'a b'", "echo 'a b'", true, true},
	{"echo *", "echo 'a b'", true, true},
	{"echo 'a b'", "echo \"'a\" \"b'\"", false, true},
	{"echo a", "echo a > f", false, true},
	{"echo *", "echo a > f", false, true},
	{"echo a > f", "echo a > f", true, true},
}

// An allow's glob matches a command word by word: a wildcard within one
// word, a lone last `*` one or more words; a word holding a blank is
// never several. A deny keeps the glob's reading across words.
func TestGlobWordByWord(t *testing.T) {
	c := NewCompiler()
	for _, tc := range wordExamples {
		m, err := c.Matcher(Spec{Dimensions: map[string]string{"command": tc.pattern}})
		if err != nil {
			t.Fatal(err)
		}
		req := &decision.Request{Dimensions: []decision.Dimension{{Name: "command", Value: tc.line, Syntax: decision.SyntaxShell}}}
		if got := m.Match(NewCache(req)); got != tc.allow {
			t.Errorf("allow %q on %q: %v, want %v", tc.pattern, tc.line, got, tc.allow)
		}
		if got := m.MatchWide(NewCache(req)); got != tc.deny {
			t.Errorf("deny %q on %q: %v, want %v", tc.pattern, tc.line, got, tc.deny)
		}
	}
}

package shell

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

// genWord is a word for a command, of characters that may let it pass
// for several words or for a quoted one.
func genWord(r *rand.Rand) string {
	const chars = "ab-/ \t\n'\"*?=x"
	var b strings.Builder
	for range 1 + r.IntN(4) {
		b.WriteByte(chars[r.IntN(len(chars))])
	}
	return b.String()
}

// genPattern is a glob for the command of words ws: its words written
// as MatchText writes them, unquoted (raw) or quoted, with wildcards
// put in, a word dropped or added, and a lone `*` word last or not.
func genPattern(r *rand.Rand, ws []string) string {
	var pw []string
	for _, w := range ws {
		if r.IntN(4) == 0 {
			pw = append(pw, w) // raw: a blank in it splits it
			continue
		}
		w = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "{", `\{`, "}", `\}`, ",", `\,`).Replace(matchWord(w))
		switch r.IntN(5) {
		case 0:
			w = "*"
		case 1:
			w += "*"
		case 2:
			w = "?" + w
		}
		pw = append(pw, w)
	}
	switch r.IntN(4) {
	case 0:
		pw = pw[:r.IntN(len(pw)+1)]
	case 1:
		pw = append(pw, genWord(r))
	}
	if r.IntN(3) == 0 {
		pw = append(pw, "*")
	}
	if len(pw) == 0 {
		return "*"
	}
	return strings.Join(pw, " ")
}

// wordOracle is whether glob p covers c read word by word: for one
// alternative, each pattern word matches its word alone, and a lone last
// `*` the rest, one or more words.
func wordOracle(t *testing.T, p string, c Command) bool {
	alts, err := decision.Alternatives(p)
	if err != nil {
		t.Fatal(err)
	}
	words := c.matchWords()
	for _, alt := range alts {
		pw := patternWords(alt)
		rest := len(pw) > 0 && pw[len(pw)-1] == "*"
		n := len(pw)
		if rest {
			n--
		}
		if rest && len(words) <= n || !rest && len(words) != n {
			continue
		}
		ok := true
		for i := range n {
			// Each word alone, as a text glob: no wildcard reaches past it.
			ok = ok && decision.Glob(pw[i], words[i])
		}
		if ok && (!rest || decision.Glob("*", strings.Join(words[n:], " "))) {
			return true
		}
	}
	return false
}

// Property (protocol section 10, "Matching"): on generated commands,
// read from a line that quotes each word, and generated globs, an
// allow's glob covers a command only when the word counts agree (or the
// pattern's last word is a lone `*` and the command has more words),
// and each pattern word matches its word alone; a word holding a blank
// is never matched as several, nor several as one.
func TestGlobCoversWordByWord(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	hits := map[bool]int{}
	for range 20000 {
		ws := []string{"a"}
		for range r.IntN(4) {
			ws = append(ws, genWord(r))
		}
		var line []string
		for _, w := range ws {
			line = append(line, shq(w))
		}
		l := Split(strings.Join(line, " "))
		if len(l.Commands) != 1 || !slices.Equal(l.Commands[0].Words, ws) {
			t.Fatalf("%q read as %+v", ws, l.Commands)
		}
		c := l.Commands[0]
		p := genPattern(r, ws)
		if strings.Contains(p, "/") { // path patterns: `*` short of '/', climbing refused
			p = strings.ReplaceAll(p, "/", "a")
		}
		g, err := CompileGlob(p)
		if err != nil {
			continue // a raw word made the glob malformed
		}
		got := g.Covers(c)
		hits[got]++
		if want := wordOracle(t, p, c); got != want {
			t.Fatalf("%q on %q: covers %v, word by word %v", p, c.MatchText(), got, want)
		}
		fields := strings.Fields(p)
		if got && fields[len(fields)-1] != "*" && len(fields) != len(c.matchWords()) && !strings.ContainsAny(p, `'"`) {
			t.Fatalf("%q covers %q, of another count of words", p, strings.Join(ws, " "))
		}
	}
	if hits[true] == 0 || hits[false] == 0 {
		t.Fatalf("the patterns generated cover all or nothing: %v", hits)
	}
}

// Bash as the oracle of the match text: read back by bash (globs off),
// each command's MatchText is its words, one for one, whatever blanks,
// line breaks, quotes, controls or bytes they hold; so no word passes
// for several.
func TestMatchTextReadsBackAsItsWords(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	r := rand.New(rand.NewPCG(13, 14))
	var script strings.Builder
	var want []string
	for range 500 {
		var c Command
		for range 1 + r.IntN(4) {
			w := genWord(r)
			switch r.IntN(8) {
			case 0:
				w = string([]byte{byte(1 + r.IntN(31))}) + w // a control
			case 1:
				w = string([]byte{byte(127 + r.IntN(129))}) + w // DEL, or not UTF-8 alone
			}
			c.Words = append(c.Words, w)
		}
		fmt.Fprintf(&script, "printf '%%s\\0' %s; printf '\\1'\n", c.MatchText())
		want = append(want, strings.Join(c.Words, "\x00")+"\x00")
	}
	// Globs off: a word's `*` is matched by a pattern, not expanded.
	out, err := exec.Command(bash, "--norc", "--noprofile", "-f", "-c", script.String()).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(string(out), "\x01")
	if len(got) != len(want)+1 {
		t.Fatalf("bash printed %d commands, want %d", len(got)-1, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bash reads %q as %q", want[i], got[i])
		}
	}
}

// FuzzGlobCovers: a glob compiles word by word exactly when it compiles
// (decision.CompileGlob), and covers a command of a line only when one
// alternative's words are as many as the command's (or fewer, before a
// lone last `*`).
func FuzzGlobCovers(f *testing.F) {
	for _, s := range [][2]string{{"rm -rf build/*", "rm -rf build/x .."}, {"cat src/*", "cat src/a .env"}, {"'rm -rf' *", `"rm -rf" status`},
		{"{ls,git *} -l", "git log -l"}, {"a\\ b [ ]c", "a\\ b ' c'"}, {"x 'a\nb' *", "x $'a\\nb' y"}, {"*", "ls > f"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		g, err := CompileGlob(pattern)
		if _, flat := decision.CompileGlob(pattern); (err == nil) != (flat == nil) {
			t.Fatalf("%q: compiles word by word: %v, as a glob: %v", pattern, err, flat)
		}
		if err != nil {
			return
		}
		alts, _ := decision.Alternatives(pattern)
		for _, c := range Split(line).Commands {
			if !g.Covers(c) {
				continue
			}
			n := len(c.matchWords())
			if !slices.ContainsFunc(alts, func(a string) bool {
				pw := patternWords(a)
				rest := len(pw) > 0 && pw[len(pw)-1] == "*"
				return len(pw) == n || rest && n >= len(pw)
			}) {
				t.Fatalf("%q covers %q, of %d words, though no alternative has as many", pattern, c.MatchText(), n)
			}
		}
	})
}

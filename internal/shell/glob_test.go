package shell

import (
	"math/rand/v2"
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

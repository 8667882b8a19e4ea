package policy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The index gives the opinions that checking every rule gives, in load
// order.
func TestIndexSameOpinions(t *testing.T) {
	p := parse(t, `
[[rule]]
name = "git"
[[rule.when]]
path = "$.argv"
prefix = ["git", ["status", "log"]]
[[rule]]
name = "any-tool"
tool = "shell"
[[rule]]
name = "git-or-hg"
decision = "prompt"
[[rule.when]]
path = "$.argv"
prefix = [["git", "hg"]]
[[rule]]
name = "mode"
[[rule.when]]
path = "$.mode"
in = ["fast", "slow"]
[[rule]]
name = "mode-equals"
[[rule.when]]
path = "$.mode"
equals = "fast"
[[rule]]
name = "number-first"
[[rule.when]]
path = "$.argv"
prefix = [1]
[[rule]]
name = "in-nothing"
[[rule.when]]
path = "$.mode"
in = []
[[rule]]
name = "exists"
decision = "deny"
[[rule.when]]
path = "$.argv"
exists = true
[[rule]]
name = "mixed-in"
[[rule.when]]
path = "$.mode"
in = ["fast", 1]
`)
	for _, raw := range []string{
		`{"action":"exec","tool":"shell","arguments":{"argv":["git","status"],"mode":"fast"}}`,
		`{"action":"exec","tool":"shell","arguments":{"argv":["hg","log"],"mode":"slow"}}`,
		`{"action":"exec","tool":"shell","arguments":{"argv":[1],"mode":1}}`,
		`{"action":"exec","tool":"shell","arguments":{"argv":"git","mode":["fast"]}}`,
		`{"action":"exec","tool":"shell","arguments":{"argv":[]}}`,
		`{"action":"exec","tool":"shell","arguments":[1,2]}`,
		`{"action":"exec","tool":"shell"}`,
	} {
		r := req(t, raw)
		got := names(p.Opinions(r))
		all := *p
		all.index = nil
		if want := names(all.Opinions(r)); got != want {
			t.Errorf("%s: indexed %q, every rule %q", raw, got, want)
		}
	}
	if got := names(p.Opinions(req(t, `{"action":"exec","tool":"shell","arguments":{"argv":["git","log"],"mode":"slow"}}`))); got != "git:allow any-tool:allow git-or-hg:prompt mode:allow exists:deny" {
		t.Errorf("got %q", got)
	}
	if !slices.Equal(merge([]int32{1, 4, 9}, []int32{2, 3, 10}), []int32{1, 2, 3, 4, 9, 10}) {
		t.Error("merge")
	}
}

// Rules filed under the head of their glob on a command line give the
// opinions checking every rule gives, for generated lines.
func TestIndexByHeadSameOpinions(t *testing.T) {
	var text strings.Builder
	pats := []string{"rm -rf *", "rm", "go test *", "git status", "/bin/rm *", " rm -rf *", "sudo *", "r", "cat *", "x/y*", "ls*", "git *", "echo hi > out"}
	for i, p := range pats {
		for j, d := range []string{"allow", "prompt", "deny"} {
			fmt.Fprintf(&text, "[[rule]]\nname = \"r%d%s\"\ndecision = %q\ntool = \"Bash\"\ndimensions = { command = %q }\n", i, d[:1], d, p)
			if j == 0 {
				fmt.Fprintf(&text, "[[rule]]\nname = \"two%d\"\ntool = \"Bash\"\ndimensions = { command = %q, other = \"x*\" }\n", i, p)
			}
		}
	}
	p := parse(t, text.String())
	all := *p
	all.index = nil
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"rm", "-rf", "~", "/bin/rm", "=rm", "sudo", "go", "test", "./...", "git", "status", "r$x", "$(echo rm)", "x/y", "cat", "ls", "echo", "hi", ">", "out", "'rm'"}
	for range 2000 {
		var line strings.Builder
		for c := range 1 + r.IntN(4) {
			if c > 0 {
				line.WriteString([]string{"; ", " && ", " | ", "\n"}[r.IntN(4)])
			}
			for w := range 1 + r.IntN(3) {
				if w > 0 {
					line.WriteByte(' ')
				}
				line.WriteString(words[r.IntN(len(words))])
			}
		}
		v, _ := json.Marshal(line.String())
		syntax := []string{`,"syntax":"shell"`, ""}[r.IntN(2)]
		raw := `{"tool":"Bash","action":"exec","dimensions":[{"name":"command","value":` + string(v) + syntax + `},{"name":"other","value":"x1"}]}`
		rq := req(t, raw)
		if got, want := names(p.Opinions(rq)), names(all.Opinions(rq)); got != want {
			t.Fatalf("%s: indexed %q, every rule %q", raw, got, want)
		}
	}
}

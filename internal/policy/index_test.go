package policy

import (
	"slices"
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

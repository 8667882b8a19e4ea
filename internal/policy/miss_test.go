package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

const missRules = `
[[rule]]
name = "tool"
tool = "Bash"
[[rule]]
name = "server"
server = "fs"
[[rule]]
name = "no-server"
source = "ci"
[[rule]]
name = "dim"
decision = "deny"
dimensions = { path = "/etc/*" }
[[rule]]
name = "cmd"
dimensions = { command = "go test *" }
[[rule]]
name = "when"
tool = "*"
[[rule.when]]
path = "$.n"
equals = 1
`

func TestMisses(t *testing.T) {
	p := parse(t, missRules)
	r := req(t, `{"version":1,"server":"git","tool":"Read","action":"read","dimensions":[{"name":"path","value":"/home/a"},{"name":"command","value":"make && rm -rf /","syntax":"shell"}],"arguments":{"n":2}}`)
	got := map[string]string{}
	for _, m := range p.Misses(r) {
		got[m.Rule] = m.Why
	}
	for rule, want := range map[string]string{
		"tool":      `tool "Read" does not match "Bash"`,
		"server":    `server "git" does not match "fs"`,
		"no-server": `source: the request has none (the rule wants "ci")`,
		"dim":       `dimensions.path: "/home/a" does not match "/etc/*"`,
		"cmd":       `dimensions.command: "make && rm -rf /" is not matched by "go test *" in every simple command (or a command is opaque)`,
		"when":      `when: $.n equals does not hold`,
	} {
		if got[rule] != want {
			t.Errorf("miss of %s = %q, want %q", rule, got[rule], want)
		}
	}
}

// TestMissesAreTheAbstentions: over generated requests, the rules Misses
// names are exactly those that give no opinion, each with the matcher
// that fails.
func TestMissesAreTheAbstentions(t *testing.T) {
	p := parse(t, missRules)
	rng := rand.New(rand.NewPCG(5, 6))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	for range 2000 {
		raw := fmt.Sprintf(`{"version":1,"server":%q,"tool":%q,"action":"exec","dimensions":[{"name":%q,"value":%q},{"name":"command","value":%q,"syntax":"shell"}],"arguments":{"n":%s}}`,
			pick("fs", "git", "f"), pick("Bash", "Read", "bash"), pick("path", "file"), pick("/etc/passwd", "/etc", "/home/a", "etc/x"),
			pick("go test ./...", "go test ./... && ls", "go build", "$(go test x)"), pick("1", "2", "1.0", `"1"`))
		r := req(t, raw)
		ops := p.Opinions(r)
		for _, m := range p.Misses(r) {
			if slices.ContainsFunc(ops, func(o Opinion) bool { return o.Name == m.Rule }) {
				t.Fatalf("%s: %s gives an opinion, yet misses: %s", raw, m.Rule, m.Why)
			}
			if m.Why == "" || m.Why == "no matcher fails" {
				t.Fatalf("%s: %s misses without a reason: %q", raw, m.Rule, m.Why)
			}
		}
		if n := len(p.Misses(r)); n+len(ops) != len(p.rules) {
			t.Fatalf("%s: %d misses and %d opinions of %d rules", raw, n, len(ops), len(p.rules))
		}
	}
}

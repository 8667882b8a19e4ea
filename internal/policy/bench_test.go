package policy

import (
	"fmt"
	"strings"
	"testing"
)

// tenThousand is a rules file of 10,000 prefix rules over $.argv, the
// shape of an exec policy, with a few globs on tool and dimensions.
func tenThousand() []byte {
	var b strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&b, "[[rule]]\nname = \"r%d\"\ndecision = %q\ntool = \"shell*\"\n", i, []string{"allow", "prompt", "deny"}[i%3])
		if i%10 == 0 {
			fmt.Fprintf(&b, "dimensions = { command = \"cmd%d *\" }\n", i)
		}
		fmt.Fprintf(&b, "[[rule.when]]\npath = \"$.argv\"\nprefix = [\"cmd%d\", [\"-a\", \"-b\"]]\n", i)
	}
	return []byte(b.String())
}

// BenchmarkOpinions10000Rules: one request against 10,000 compiled rules.
func BenchmarkOpinions10000Rules(b *testing.B) {
	p, err := Parse("bench.toml", tenThousand())
	if err != nil {
		b.Fatal(err)
	}
	r := req(b, `{"action":"exec","tool":"shell","dimensions":[{"name":"command","value":"cmd9990 -a x"}],"arguments":{"argv":["cmd9990","-a","x"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if len(p.Opinions(r)) != 1 {
			b.Fatal("the rule did not match")
		}
	}
}

// BenchmarkLoad10000Rules: compiling them, as every process does.
func BenchmarkLoad10000Rules(b *testing.B) {
	text := tenThousand()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("bench.toml", text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad10000PrefixRules: compiling 10,000 prefix rules and
// nothing else, the rules file `askperm check` is timed with against
// Codex's execpolicy (bench/measure, section 5).
func BenchmarkLoad10000PrefixRules(b *testing.B) {
	var text strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&text, "[[rule]]\nname = \"r%d\"\ndecision = %q\n[[rule.when]]\npath = \"$.argv\"\nprefix = [\"cmd%d\", [\"-a\", \"-b\"]]\n", i, []string{"allow", "prompt", "deny"}[i%3], i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("bench.toml", []byte(text.String())); err != nil {
			b.Fatal(err)
		}
	}
}

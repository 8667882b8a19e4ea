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

// BenchmarkOpinions10000RulesCompoundCommand: one 4 KiB command line of
// many simple commands, each allowed by its own rule, decided against
// 10,000 rules with a glob on the command line (allow, prompt and deny
// alike), combined per command (protocol section 10).
func BenchmarkOpinions10000RulesCompoundCommand(b *testing.B) {
	var text strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&text, "[[rule]]\nname = \"r%d\"\ndecision = %q\ntool = \"Bash\"\ndimensions = { command = \"cmd%d -a *\" }\n", i, []string{"allow", "prompt", "deny"}[i%3], i)
	}
	p, err := Parse("bench.toml", []byte(text.String()))
	if err != nil {
		b.Fatal(err)
	}
	var line strings.Builder
	for i := 0; line.Len() < 4096-40; i += 3 {
		if line.Len() > 0 {
			line.WriteString([]string{" && ", "; ", " || ", " | "}[i%4])
		}
		fmt.Fprintf(&line, "cmd%d -a ./pkg/%d", i%10_000, i)
	}
	r := req(b, bash(b, line.String()))
	if n := len(r.Dimensions[0].Value); n < 4000 || n > 4096 {
		b.Fatalf("a line of %d bytes", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if v, _ := Combine(p.Opinions(r)); v != Allow {
			b.Fatalf("not allowed: %v", v)
		}
	}
}

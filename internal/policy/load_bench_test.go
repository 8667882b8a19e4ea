package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseExample: compiling the example rules file, its rules'
// examples checked, as every request that loads it does.
func BenchmarkParseExample(b *testing.B) {
	raw, err := os.ReadFile("../../testdata/rules/example.toml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("example.toml", raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadDecide10000Rules: what a process with a 10,000-rule file
// pays for one decision: reading the file, compiling it, deciding.
func BenchmarkLoadDecide10000Rules(b *testing.B) {
	path := filepath.Join(b.TempDir(), "rules.toml")
	if err := os.WriteFile(path, tenThousand(), 0o600); err != nil {
		b.Fatal(err)
	}
	r := req(b, `{"action":"exec","tool":"shell","dimensions":[{"name":"command","value":"cmd9990 -a x"}],"arguments":{"argv":["cmd9990","-a","x"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Load("", []string{path}, "")
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Opinions(r)) != 1 {
			b.Fatal("the rule did not match")
		}
	}
}

// BenchmarkLoadDecide10000RulesCached: the same from the file's compiled
// cache, as every process but the first pays.
func BenchmarkLoadDecide10000RulesCached(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "rules.toml")
	if err := os.WriteFile(path, tenThousand(), 0o600); err != nil {
		b.Fatal(err)
	}
	if _, err := Load("", []string{path}, dir); err != nil {
		b.Fatal(err)
	}
	r := req(b, `{"action":"exec","tool":"shell","dimensions":[{"name":"command","value":"cmd9990 -a x"}],"arguments":{"argv":["cmd9990","-a","x"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Load("", []string{path}, dir)
		if err != nil || p.lazy == nil {
			b.Fatal("not from the cache", err)
		}
		if len(p.Opinions(r)) != 1 {
			b.Fatal("the rule did not match")
		}
	}
}

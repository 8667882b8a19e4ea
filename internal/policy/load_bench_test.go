package policy

import (
	"os"
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

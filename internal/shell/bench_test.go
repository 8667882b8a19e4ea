package shell

import (
	"strings"
	"testing"
)

// A 4 KiB line of 800 nested evals, the most a line makes askperm read:
// split, then a deny of leading words and one without plain leading words
// (every reading's text matched).
func BenchmarkDeniedNestedEvals(b *testing.B) {
	line := strings.Repeat("eval ", 800)
	anywhere := Deny{Covers: func(s string) bool { return strings.Contains(s, "--no-verify") }}
	for b.Loop() {
		l := Split(line)
		l.Denied(denied)
		l.Denied(anywhere)
	}
}

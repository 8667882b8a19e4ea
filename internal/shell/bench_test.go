package shell

import (
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
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

// A 4 KiB compound line of the kind agents send: lists, pipes, if and
// for bodies, a -c string, quoting, assignments and redirections.
func BenchmarkSplitDialect4KiB(b *testing.B) {
	part := `if test -f go.mod; then FOO=1 go test ./internal/... -run 'TestX|TestY' 2>&1 | tee "out $i.log"; fi && ` +
		`for p in a b; do git -C "dir" status --short >> log.txt || echo $'fail\t' ; done; bash -c 'ls -la && pwd' ; `
	line := strings.Repeat(part, 4096/len(part)+1)[:4096]
	line = line[:strings.LastIndex(line, " ; ")]
	if !Split(line).Parsed {
		b.Fatal("the line does not parse")
	}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		SplitDialect(line, decision.DialectBash)
	}
}

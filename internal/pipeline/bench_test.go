package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/state"
)

// benchRequest is a request with a session, a dimension and grants, as
// an agent's call would be.
const benchRequest = `{"id":"b","server":"fs","tool":"write_file","action":"write","session_id":"s","arguments":{"path":"/p/a"},
	"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"file","match":"/p/a"},{"label":"dir","match":"/p/","kind":"prefix"}]}],
	"grants":[{"name":"fs.write"}]}`

// benchDecide decides benchRequest by a canned answer, b.N times.
func benchDecide(b *testing.B, memory *Memory) {
	canned, err := answers.Single("allow-once", "")
	if err != nil {
		b.Fatal(err)
	}
	p := New(Config{Timeout: time.Minute, MaxRequest: 1 << 20, Answers: canned, Memory: memory})
	raw := []byte(benchRequest)
	b.ReportAllocs()
	for b.Loop() {
		if out := p.Decide(context.Background(), raw); out.Decision == nil || out.Err != nil {
			b.Fatal(out.Err)
		}
	}
}

// BenchmarkDecideStateless is the floor: a canned answer, no memory.
func BenchmarkDecideStateless(b *testing.B) { benchDecide(b, nil) }

// BenchmarkDecideWithMemory adds what memory costs a request: the store
// opened for the look-up (rules, session approvals), the rate limit, the
// record step (breaker count) and the audit log.
func BenchmarkDecideWithMemory(b *testing.B) {
	// No rate limit: b.N requests in a few seconds would trip it.
	benchDecide(b, &Memory{Dir: b.TempDir(), SessionIdle: time.Hour, Breaker: state.DefaultBreaker})
}

package pipeline

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
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
		if out := p.Run(context.Background(), bytes.NewReader(raw)); out.Decision == nil || out.Err != nil {
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

// bigRequest is a request of about 1 MiB whose bulk is a detail's text
// (inArgs false) or an argument's string (inArgs true), with escapes and
// non-ASCII text in it.
func bigRequest(inArgs bool) []byte {
	const size = 1 << 20
	head := `{"id":"b","server":"fs","tool":"write_file","action":"write","session_id":"s",` +
		`"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"file","match":"/p/a"}]}],` +
		`"grants":[{"name":"fs.write"}],`
	var body, tail string
	if inArgs {
		head += `"arguments":{"path":"/p/a","n":[1,2.50,1e3],"content":"`
		tail = `"}}`
	} else {
		head += `"arguments":{"path":"/p/a"},"details":[{"label":"content","text":"`
		tail = `"}]}`
	}
	const line = "line \u00e9 text\\n\\t\\\""
	body = strings.Repeat(line, (size-len(head)-len(tail))/len(line))
	return []byte(head + body + tail)
}

// benchDecideBig decides a 1 MiB request by a canned answer, as
// `askperm --answer deny-once` does.
func benchDecideBig(b *testing.B, inArgs bool) {
	canned, err := answers.Single("deny-once", "")
	if err != nil {
		b.Fatal(err)
	}
	p := New(Config{Timeout: time.Minute, MaxRequest: 2 << 20, Answers: canned})
	raw := bigRequest(inArgs)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if out := p.Run(context.Background(), bytes.NewReader(raw)); out.Decision == nil || out.Err != nil {
			b.Fatal(out.Err)
		}
	}
}

func BenchmarkDecide1MiB(b *testing.B)          { benchDecideBig(b, false) }
func BenchmarkDecide1MiBArguments(b *testing.B) { benchDecideBig(b, true) }

// BenchmarkDecideWithMemoryConcurrent decides benchRequest with memory on
// from 1, 10 and 100 calls at once on one pipeline, as the gate and
// `askperm mcp` do, and reports the 99th percentile of one call's time
// (p99-ms): what waiting for the store adds when calls overlap.
func BenchmarkDecideWithMemoryConcurrent(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			canned, err := answers.Single("allow-once", "")
			if err != nil {
				b.Fatal(err)
			}
			mem := &Memory{Dir: b.TempDir(), SessionIdle: time.Hour, Breaker: state.DefaultBreaker}
			p := New(Config{Timeout: time.Minute, MaxRequest: 1 << 20, Answers: canned, Memory: mem})
			raw := []byte(benchRequest)
			var took []time.Duration
			var mu sync.Mutex
			for b.Loop() {
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						start := time.Now()
						out := p.Run(context.Background(), bytes.NewReader(raw))
						mu.Lock()
						defer mu.Unlock()
						if out.Decision == nil || out.Err != nil {
							b.Error(out.Err)
						}
						took = append(took, time.Since(start))
					})
				}
				wg.Wait()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100])/float64(time.Millisecond), "p99-ms")
		})
	}
}

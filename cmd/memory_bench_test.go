package cmd

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/state"
)

// rulesStore is a store of n remembered command allows.
func rulesStore(b *testing.B, n int) *state.Store {
	st, err := state.Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if err := st.Do(func(tx *state.Tx) error {
		for i := range n {
			r := state.Rule{Decision: decision.Allow, Tool: "Bash", Action: "exec", Origin: "tui", Created: 1_700_000_000,
				Dimensions: []state.Dimension{{Name: "command", Match: fmt.Sprintf("tool%d sub", i), Kind: decision.KindWords}}}
			if _, err := tx.Remember(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	return st
}

// rules list by how many rules are remembered: streamed, each rule
// written as it is read; peak-heap-MiB is the heap in use, sampled every
// 1,000 rules, over the heap before.
func BenchmarkRulesList(b *testing.B) {
	for _, n := range []int{10, 1_000, 10_000, 100_000} {
		st := rulesStore(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			base, peak := ms.HeapInuse, ms.HeapInuse
			for b.Loop() {
				i := 0
				err := cli.StreamTable(io.Discard, cli.RulesHeading, func(_ bool, emit func([]string) error) error {
					return st.EachRule(time.Now(), func(r state.Rule) error {
						if i++; i%1000 == 0 {
							runtime.ReadMemStats(&ms)
							peak = max(peak, ms.HeapInuse)
						}
						return emit(cli.RuleRow(r))
					})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak-base)/(1<<20), "peak-heap-MiB")
		})
	}
}

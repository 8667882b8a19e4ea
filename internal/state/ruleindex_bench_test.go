package state

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
)

// benchStore is a store of n remembered rules as use leaves them: allows
// of commands (words) and paths (exact, prefix) of many tools, and a few
// denies (one of the command tool's), one allow covering the benchmark's
// request.
func benchStore(b *testing.B, n int) *Store {
	st := open(b, b.TempDir())
	if err := st.Do(func(tx *Tx) error {
		for i := range n {
			r := commandRule(decision.Allow, fmt.Sprintf("tool%d sub", i))
			switch {
			case i == n/2:
				r = commandRule(decision.Allow, "git status")
			case i == 1:
				r = commandRule(decision.Deny, "rm -rf")
			case i%100 == 0:
				// Denies of other tools, spread as their requests are.
				r = commandRule(decision.Deny, "rm -rf")
				r.Tool = fmt.Sprintf("Other%d", i)
			case i%3 == 1:
				r = Rule{Decision: decision.Allow, Tool: "Read", Action: "read",
					Dimensions: []Dimension{{Name: "path", Match: fmt.Sprintf("/home/a/p%d/", i), Kind: decision.KindPrefix}}}
			case i%3 == 2:
				r.Tool = fmt.Sprintf("mcp%d", i%50)
			}
			if _, err := tx.Remember(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the building's garbage is no look-up's to collect
	return st
}

// A decision's look-up of remembered rules (Covering, as the pipeline
// runs it), by how many are remembered; scan is every rule read and
// judged, as before the index.
func BenchmarkRememberedDecision(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	req := commandRequest("git status --short")
	req.Dimensions[0].Syntax = decision.SyntaxShell
	for _, n := range benchSizes {
		st := benchStore(b, n)
		b.Run(fmt.Sprintf("indexed/%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := st.Do(func(tx *Tx) error {
					m, err := tx.Covering(req, now)
					if err == nil && len(m) != 1 {
						err = fmt.Errorf("%d rules cover the request", len(m))
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("scan/%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := st.Do(func(tx *Tx) error {
					rules, err := tx.Rules(now)
					matching(rules, req, now, &readings{req: req})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchSizes = []int{10, 1_000, 10_000, 100_000}

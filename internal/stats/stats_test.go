package stats

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// TestStatsGenerated: on random logs, the figures are those computed
// here another way: by sorting with sort.Slice and taking ranks by
// counting.
func TestStatsGenerated(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	frontends := []decision.Frontend{"tui", "line", "team", "answers", "rules", "memory", "none", "reviewer"}
	causes := []decision.Cause{"user", "rule", "session", "timeout", "cancelled", "error"}
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := rng.IntN(300)
		c := New(t0, t0.Add(time.Duration(1+rng.IntN(100))*time.Hour))
		var took []int64
		prompts, person, approved, stops := 0, 0, 0, 0
		perTool := map[string]int{}
		for i := range n {
			e := state.AuditEntry{Time: t0.Add(time.Duration(i) * time.Minute), Tool: []string{"a", "b", "c"}[rng.IntN(3)],
				Frontend: frontends[rng.IntN(len(frontends))], Cause: causes[rng.IntN(len(causes))],
				Decision: []string{"allow", "deny"}[rng.IntN(2)], LatencyMS: rng.Int64N(100000), Stop: rng.IntN(20) == 0}
			if rng.IntN(4) > 0 {
				ms := rng.Int64N(60000)
				e.AskedMS = &ms
			}
			c.Add(e)
			if e.Stop {
				stops++
			}
			human := e.Frontend == "tui" || e.Frontend == "line" || e.Frontend == "team"
			if !human {
				continue
			}
			prompts++
			perTool[e.Tool]++
			if e.Cause == "user" {
				person++
				if e.Decision == "allow" {
					approved++
				}
				if e.AskedMS != nil {
					took = append(took, *e.AskedMS)
				} else {
					took = append(took, e.LatencyMS)
				}
			}
		}
		s := c.Stats()
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		rank := func(pct int) int64 {
			for _, v := range took {
				at := 0
				for _, w := range took {
					if w <= v {
						at++
					}
				}
				if at*100 >= pct*len(took) {
					return v
				}
			}
			return 0
		}
		if s.Decisions != n || s.Prompts != prompts || s.ByPerson != person || s.Approved != approved || s.Stops != stops ||
			s.MedianMS != rank(50) || s.P90MS != rank(90) {
			t.Fatalf("seed %d: %+v; want prompts %d person %d approved %d stops %d median %d p90 %d", seed, s, prompts, person, approved, stops, rank(50), rank(90))
		}
		if days := s.To.Sub(s.From).Hours() / 24; s.Days != max(1, days) || s.PerDay != float64(prompts)/s.Days {
			t.Fatalf("seed %d: days %v, per day %v", seed, s.Days, s.PerDay)
		}
		for _, r := range s.Tools {
			if r.Prompts != perTool[r.Name] {
				t.Fatalf("seed %d: tool %s: %d prompts, want %d", seed, r.Name, r.Prompts, perTool[r.Name])
			}
		}
	}
}

func TestRank(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		pct  int
		want int64
	}{{nil, 50, 0}, {[]int64{5}, 90, 5}, {[]int64{1, 2}, 50, 1}, {[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9}, {[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 90, 10}} {
		if got := Rank(c.in, c.pct); got != c.want {
			t.Errorf("Rank(%v, %d) = %d, want %d", c.in, c.pct, got, c.want)
		}
	}
}

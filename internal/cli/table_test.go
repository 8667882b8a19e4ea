package cli

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"
)

// StreamTable writes what tabwriter writes for the whole table, whether
// it holds the rows (a small table) or asks for them again (past
// TableHeld), with cells of any width and text tabwriter reads as breaks.
func TestStreamTableIsTabwriter(t *testing.T) {
	words := []string{"", "a", "写文件", "ünï", "a long cell of text", "-", "x\ty", "x\ny", "\xff", "\v"}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 3))
		n := r.IntN(20)
		large := seed < 2 // one regular, one irregular
		if large {
			n = TableHeld / 64 // rows of some 130 bytes held: past TableHeld
		}
		irregular := seed%2 == 0
		rows := make([][]string, n)
		for i := range rows {
			rows[i] = make([]string, 4)
			for j := range rows[i] {
				w := words[r.IntN(len(words))]
				if !irregular && strings.ContainsAny(w, "\t\n\v\xff") {
					w = "plain"
				}
				rows[i][j] = w + strings.Repeat("z", r.IntN(10))
			}
		}
		heading := []string{"A", "B", "C", "D"}
		var want bytes.Buffer
		w := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		for _, cells := range append([][]string{heading}, rows...) {
			w.Write([]byte(strings.Join(cells, "\t") + "\n"))
		}
		w.Flush()
		calls := 0
		var got bytes.Buffer
		err := StreamTable(&got, heading, func(_ bool, each func([]string) error) error {
			calls++
			for _, cells := range rows {
				if err := each(cells); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || got.String() != want.String() {
			t.Fatalf("seed %d: %v\n%.2000s\nwant\n%.2000s", seed, err, got.String(), want.String())
		}
		if calls != map[bool]int{false: 1, true: 2}[large] {
			t.Errorf("seed %d: rows called %d times for %d bytes", seed, calls, want.Len())
		}
	}
}

package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// LateCountsName is the file, in the state directory, of the breaker's
// counts of decisions whose store stayed locked past their deadline: the
// next transaction that counts a decision folds them in first, in order,
// so a decision is counted late, never not at all.
const LateCountsName = "breaker.pending"

// lateFoldedKey, in the user's breaker bucket, names the last late count
// folded in: its transaction commits before the file is emptied, and a
// crash between the two is mended by skipping the lines up to that one.
var lateFoldedKey = []byte("late-folded")

// lateCount is one line of the late counts' file; ID tells it apart from
// every other, so that it is folded in exactly once.
type lateCount struct {
	ID      string `json:"id"`
	Session string `json:"session,omitempty"`
	Denied  bool   `json:"denied"`
}

// KeepCount appends a decision's count (its session, and whether it was a
// deny) to the late counts' file in dir, under the file's own lock
// waited for within ctx (keepLine).
func KeepCount(ctx context.Context, dir, session string, denied bool) error {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	line, err := json.Marshal(lateCount{ID: hex.EncodeToString(id[:]), Session: session, Denied: denied})
	if err != nil {
		return err
	}
	f, err := openOwned(filepath.Join(dir, LateCountsName), os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	defer f.Close()
	return keepLine(ctx, f, append(line, '\n'))
}

// FoldLateCounts counts, in order and before anything else tx counts, the
// decisions kept in the late counts' file, and reports how many of them
// tripped the breaker: such a decision was answered long ago and cannot
// be marked with stop, so it is counted, the counts start again (as any
// trip does), and the caller says so. The file stays locked until tx
// ends, and is emptied only once tx has committed. A file locked by
// another helper is left for the next transaction.
func (tx *Tx) FoldLateCounts(b Breaker) (trips int, err error) {
	if tx.dir == "" || tx.lateFile != nil {
		return 0, nil
	}
	f, err := openOwned(filepath.Join(tx.dir, LateCountsName), os.O_APPEND)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ok, lines, err := takeLines(f)
	if !ok {
		f.Close()
		return 0, err
	}
	tx.lateFile = f // let go when tx ends
	if err != nil || len(lines) == 0 {
		return 0, err
	}
	counts := lateCountsAfter(lines, tx.bucket(userBreakerBucket).Get(lateFoldedKey))
	for _, c := range counts {
		tripped, err := tx.CountDecision(c.Session, c.Denied, b)
		if err != nil {
			return trips, err
		}
		if tripped {
			trips++
		}
	}
	if len(counts) > 0 {
		if err := tx.put(tx.bucket(userBreakerBucket), lateFoldedKey, []byte(counts[len(counts)-1].ID)); err != nil {
			return trips, err
		}
	}
	tx.lateEmpty = true
	return trips, nil
}

// lateCountsAfter decodes lines, leaving out those up to the one whose ID
// is folded (already counted by a transaction whose file was not emptied).
func lateCountsAfter(lines []byte, folded []byte) []lateCount {
	var counts []lateCount
	for line := range bytes.Lines(lines) {
		// A line that does not decode (not one KeepCount wrote) counts
		// as a deny of the user's, the most it could have been.
		c := lateCount{Denied: true}
		if json.Unmarshal(line, &c) != nil {
			c = lateCount{Denied: true}
		}
		counts = append(counts, c)
		if folded != nil && c.ID == string(folded) {
			counts = counts[:0]
		}
	}
	return counts
}

// endLateCounts empties the late counts' file once tx has committed
// (committed), and lets it go.
func (tx *Tx) endLateCounts(committed bool) error {
	f := tx.lateFile
	if f == nil {
		return nil
	}
	defer f.Close()
	if committed && tx.lateEmpty {
		return f.Truncate(0)
	}
	return nil
}

package state

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// counts reads the user's and session s's recent decisions in dir.
func recentCounts(t *testing.T, dir, s string) (user, sess []bool) {
	t.Helper()
	st, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.View(func(tx *Tx) error {
		u, err := tx.breakerCounts(userBreakerBucket, userKey)
		if err != nil {
			return err
		}
		c, err := tx.breakerCounts(breakerBucket, []byte(s))
		user, sess = u.Recent, c.Recent
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return user, sess
}

// Property: in any sequence of decisions counted with the store free,
// kept while it was held, written torn by a helper that died, and folded
// by a helper that died before emptying the file, every count is applied
// exactly once, the kept ones before the next count, in order.
func TestLateCountsFoldedOnceInOrder(t *testing.T) {
	b := Breaker{User: Thresholds{Window: 1000}, Session: Thresholds{Window: 1000}}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 22))
		dir := t.TempDir()
		late := filepath.Join(dir, LateCountsName)
		var want, pending, wantA, pendingA []bool
		for range 5 + r.IntN(30) {
			denied := r.IntN(2) == 0
			sess := []string{"a", "b", ""}[r.IntN(3)]
			switch r.IntN(4) {
			case 0, 1: // the store held: kept
				if err := KeepCount(context.Background(), dir, sess, denied); err != nil {
					t.Fatal(err)
				}
				pending = append(pending, denied)
				if sess == "a" {
					pendingA = append(pendingA, denied)
				}
				if r.IntN(4) == 0 { // a keeper died mid-line
					f, err := os.OpenFile(late, os.O_WRONLY|os.O_APPEND, 0o600)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteString(`{"id":"torn","den`)
					f.Close()
				}
				continue
			}
			crash := r.IntN(3) == 0
			before, _ := os.ReadFile(late)
			st, err := Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			err = st.Do(func(tx *Tx) error {
				if _, err := tx.FoldLateCounts(b); err != nil {
					return err
				}
				_, err := tx.CountDecision(sess, denied, b)
				return err
			})
			st.Close()
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if crash && before != nil { // died after the commit, before emptying
				if err := os.WriteFile(late, before, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, pending = append(append(want, pending...), denied), nil
			wantA, pendingA = append(wantA, pendingA...), nil
			if sess == "a" {
				wantA = append(wantA, denied)
			}
		}
		user, a := recentCounts(t, dir, "a")
		if !reflect.DeepEqual(user, want) && len(user)+len(want) > 0 {
			t.Fatalf("seed %d: the user's counts %v, want %v", seed, user, want)
		}
		if !reflect.DeepEqual(a, wantA) && len(a)+len(wantA) > 0 {
			t.Fatalf("seed %d: session a's counts %v, want %v", seed, a, wantA)
		}
	}
}

// A late deny that trips the breaker is counted, its trip reported, and
// the counts start again: the decision was answered without stop.
func TestLateDenyTripsAndCountsStartAgain(t *testing.T) {
	dir := t.TempDir()
	b := Breaker{Session: Thresholds{Consecutive: 2}}
	for range 3 {
		if err := KeepCount(context.Background(), dir, "s", true); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var trips int
	var tripped bool
	err = st.Do(func(tx *Tx) error {
		var err error
		if trips, err = tx.FoldLateCounts(b); err != nil {
			return err
		}
		tripped, err = tx.CountDecision("s", true, b)
		return err
	})
	st.Close()
	if err != nil || trips != 1 || !tripped {
		t.Errorf("three late denials and one more, two in a row tripping: %d late trips, tripped %v, %v; want 1, true", trips, tripped, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, LateCountsName)); err != nil || fi.Size() != 0 {
		t.Errorf("the late counts were not emptied: %v, %v", fi, err)
	}
}

package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// An audit line whose log stayed locked past the request's deadline is
// reported and appended later, before the next line, by the next helper
// that holds the log: in any sequence of locked and free logs, every
// line is in the log, once, in order.
func TestAuditLockedLinesAppendedLater(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 1))
		dir := t.TempDir()
		path := filepath.Join(dir, AuditName)
		var want []string
		var holder *os.File
		n := 2 + r.IntN(10)
		for i := range n {
			locked := i < n-1 && r.IntN(2) == 0 // the last append finds the log free
			if locked && holder == nil {
				f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
					t.Fatal(err)
				}
				holder = f
			}
			if !locked && holder != nil {
				holder.Close()
				holder = nil
			}
			action := strings.Repeat("a", i+1)
			want = append(want, action)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			err := bounded(t, "an append", func() error { return AppendAudit(ctx, dir, AuditEntry{Action: action}) })
			cancel()
			switch {
			case locked && !errors.Is(err, ErrLocked):
				t.Fatalf("seed %d: append to a locked log: %v, want ErrLocked", seed, err)
			case locked && !strings.Contains(err.Error(), PendingName):
				t.Errorf("seed %d: the error does not say the line was kept: %v", seed, err)
			case !locked && err != nil:
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		var got []string
		if _, err := ReadAudit(dir, func(e AuditEntry) bool { got = append(got, e.Action); return false }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("seed %d: log %q, want %q", seed, got, want)
		}
	}
}

// Helpers that all keep a line or a count at once, their log or store
// locked, each keep theirs: none is lost to another holding the kept
// lines' file for its own append.
func TestKeepersAtOnceLoseNothing(t *testing.T) {
	for seed := range uint64(4) {
		n := 20 + rand.New(rand.NewPCG(seed, 2)).IntN(80)
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // a request's deadline
		defer cancel()
		errs := make(chan error, 2*n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs <- keepPending(ctx, dir, fmt.Appendf(nil, "line %d\n", i)) })
			wg.Go(func() { errs <- KeepCount(ctx, dir, fmt.Sprint("s", i), i%2 == 0) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("seed %d: %v", seed, err)
			}
		}
		for _, name := range []string{PendingName, LateCountsName} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || bytes.Count(b, []byte{'\n'}) != n {
				t.Errorf("seed %d: %s holds %d lines (%v), want %d", seed, name, bytes.Count(b, []byte{'\n'}), err, n)
			}
		}
	}
}

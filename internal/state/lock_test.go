package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdReadOnly locks path exclusively through a read-only descriptor, as
// a process that may only read the state directory can.
func holdReadOnly(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
}

// bounded runs fn and fails the test if it has not returned after a
// generous bound: a lock waited for in the kernel never returns.
func bounded(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hung on a held lock", what)
		return nil
	}
}

// Every lock of the state directory, held through a read-only descriptor,
// is given up when the request's context ends (its deadline or a signal),
// with an error naming the held file.
func TestLocksHeldByAReader(t *testing.T) {
	ops := map[string]func(ctx context.Context, dir string) error{
		AuditName: func(ctx context.Context, dir string) error {
			return AppendAudit(ctx, dir, AuditEntry{Action: "write"})
		},
		PromptsFile: func(ctx context.Context, dir string) error {
			_, err := TakePrompt(ctx, dir, "s", time.Now(), DefaultRate)
			return err
		},
		DBName: func(ctx context.Context, dir string) error {
			s, err := Open(ctx, dir)
			if err == nil {
				s.Close()
			}
			return err
		},
		TurnName: func(ctx context.Context, dir string) error {
			_, err := WaitTurn(ctx, dir, func() {})
			return err
		},
	}
	for name, op := range ops {
		for _, ending := range []string{"deadline", "cancel"} {
			t.Run(name+"/"+ending, func(t *testing.T) {
				dir := t.TempDir()
				holdReadOnly(t, filepath.Join(dir, name))
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				if ending == "deadline" {
					ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
				} else {
					time.AfterFunc(100*time.Millisecond, cancel)
				}
				defer cancel()
				err := bounded(t, name, func() error { return op(ctx, dir) })
				if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), filepath.Join(dir, name)) {
					t.Errorf("got %v; want ErrLocked naming the file", err)
				}
				if ending == "cancel" && !errors.Is(err, context.Canceled) {
					t.Errorf("got %v; want the context's cancellation", err)
				}
			})
		}
	}
}

// A held shared lock blocks too: it is waited for without blocking.
func TestSharedLockHeld(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, AuditName), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := bounded(t, "audit", func() error { return AppendAudit(ctx, dir, AuditEntry{}) }); !errors.Is(err, ErrLocked) {
		t.Errorf("got %v", err)
	}
}

// A caller naming a new session for every request still meets the user's
// limits: the rate limit and the breaker count per user too.
func TestLimitsPerUserAcrossSessions(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	rate := Rate{Session: 60, User: 5}
	taken := 0
	for i := range 8 {
		ok, err := TakePrompt(context.Background(), dir, fmt.Sprint("rotated-", i), now.Add(time.Duration(i)*time.Second), rate)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			taken++
		}
	}
	if taken != rate.User {
		t.Errorf("%d prompts taken over rotating sessions, want %d", taken, rate.User)
	}
	if ok, _ := TakePrompt(context.Background(), dir, "late", now.Add(61*time.Second), rate); !ok {
		t.Error("the user's window did not slide")
	}

	s := open(t, t.TempDir())
	var trips []int
	for i := range 10 {
		tripped, err := s.CountDecision(fmt.Sprint("rotated-", i), true, DefaultBreaker)
		if err != nil {
			t.Fatal(err)
		}
		if tripped {
			trips = append(trips, i+1)
		}
	}
	if len(trips) != 1 || trips[0] != DefaultBreaker.User.Consecutive {
		t.Errorf("rotating sessions tripped at %v, want [%d]", trips, DefaultBreaker.User.Consecutive)
	}
	// Requests without a session count for the user.
	b := Breaker{User: Thresholds{Consecutive: 2}}
	if first, _ := s.CountDecision("", true, b); first {
		t.Error("tripped at the first denial")
	}
	if second, _ := s.CountDecision("", true, b); !second {
		t.Error("the user's second denial in a row without a session did not trip it")
	}
	// A trip of the session starts the user's counts again too.
	s2 := open(t, t.TempDir())
	b = Breaker{Session: Thresholds{Consecutive: 2}, User: Thresholds{Consecutive: 3}}
	got := []bool{}
	for _, sess := range []string{"a", "a", "b", "c"} {
		tripped, _ := s2.CountDecision(sess, true, b)
		got = append(got, tripped)
	}
	if fmt.Sprint(got) != "[false true false false]" {
		t.Errorf("trips %v", got)
	}
}

// failingFile is an audit log on a disk that fills up: a write past room
// bytes is cut there and fails.
type failingFile struct {
	*os.File
	room int
}

func (f *failingFile) Write(b []byte) (int, error) {
	if len(b) <= f.room {
		f.room -= len(b)
		return f.File.Write(b)
	}
	n, _ := f.File.Write(b[:f.room])
	f.room = 0
	return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// An audit line is written whole or not at all: a write that fails
// part-way is cut back, and a torn tail left by a crash is cut before the
// next line, which it would otherwise swallow. Over generated sequences of
// lines and failures, the log holds exactly the lines written whole.
func TestAuditLinesWholeOrNot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AuditName)
	// A torn tail, then an append.
	if err := os.WriteFile(path, []byte("{\"action\":\"a\"}\n{\"action\":\"tor"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendAudit(context.Background(), dir, AuditEntry{Action: "b"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.HasSuffix(string(b), "\n") || strings.Count(string(b), "\n") != 2 || strings.Contains(string(b), "tor") {
		t.Errorf("after a torn tail: %q", b)
	}
	// A log that is one torn line.
	if err := os.WriteFile(path, []byte("{\"act"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendAudit(context.Background(), dir, AuditEntry{Action: "c"}); err != nil {
		t.Fatal(err)
	}
	if all, _ := ReadAudit(dir, func(AuditEntry) bool { return true }); len(all) != 1 || all[0].Action != "c" {
		t.Errorf("after a wholly torn log: %v", all)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		f, err := os.OpenFile(filepath.Join(t.TempDir(), AuditName), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range 1 + rng.IntN(8) {
			line := fmt.Sprintf("%d-%d-%s\n", round, i, strings.Repeat("x", rng.IntN(5000)))
			room := len(line) + 1
			if rng.IntN(3) == 0 {
				room = rng.IntN(len(line)) // the disk fills during the line
			}
			err := appendWhole(&failingFile{f, room}, []byte(line))
			switch {
			case room >= len(line) && err != nil:
				t.Fatal(err)
			case room < len(line) && !errors.Is(err, syscall.ENOSPC):
				t.Fatalf("a failed write: %v", err)
			case err == nil:
				want = append(want, line)
			}
			if rng.IntN(5) == 0 { // a crash left a torn line
				if _, err := f.Write([]byte("torn-" + strings.Repeat("y", rng.IntN(9000)))); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := appendWhole(f, []byte("last\n")); err != nil {
			t.Fatal(err)
		}
		want = append(want, "last\n")
		got, _ := os.ReadFile(f.Name())
		if string(got) != strings.Join(want, "") {
			t.Fatalf("round %d: the log holds %d bytes, want the %d lines written whole", round, len(got), len(want))
		}
		f.Close()
	}
}

// Property: over generated requests, whatever sessions they name, the
// prompts taken in any minute never pass the user's limit nor a session's,
// and a prompt is refused only when one of them is reached.
func TestTakePromptLimitsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	for round := range 20 {
		dir := t.TempDir()
		rate := Rate{Session: 1 + rng.IntN(6), User: 1 + rng.IntN(12)}
		now := time.Unix(1_700_000_000, 0)
		type taken struct {
			at  time.Time
			key string
		}
		var log []taken
		for i := range 60 {
			now = now.Add(time.Duration(rng.IntN(8000)) * time.Millisecond)
			key := fmt.Sprint("s", rng.IntN(4))
			if rng.IntN(2) == 0 {
				key = fmt.Sprint("rotated-", round, "-", i) // a new session each time
			}
			ok, err := TakePrompt(context.Background(), dir, key, now, rate)
			if err != nil {
				t.Fatal(err)
			}
			session, user := 0, 0
			for _, p := range log {
				if p.at.After(now.Add(-time.Minute)) {
					user++
					if p.key == key {
						session++
					}
				}
			}
			if want := session < rate.Session && user < rate.User; ok != want {
				t.Fatalf("round %d, prompt %d of %q: taken %v with %d of the session's and %d of the user's in the last minute, rate %+v",
					round, i, key, ok, session, user, rate)
			}
			if ok {
				log = append(log, taken{now, key})
			}
		}
	}
}

// A lock held by another process is waited for, not polled: while it is
// held the waiter tries it once, and once more when it is let go, however
// long it was held; and waits for one file share one waiting thread.
func TestLockWaitDoesNotPoll(t *testing.T) {
	for _, waits := range []int{1, 2, 8} {
		t.Run(fmt.Sprint(waits), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "held")
			holder, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			tries := make(chan int, waits)
			waiting := make(chan struct{}, waits)
			for range waits {
				go func() {
					f, err := os.Open(path)
					if err != nil {
						tries <- -1
						return
					}
					defer f.Close()
					n := 0
					err = retry(context.Background(), path, 0, func() { waiting <- struct{}{} }, func() (bool, error) {
						n++
						return tryLock(f)
					})
					if err != nil {
						n = -1
					}
					syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
					tries <- n
				}()
			}
			for range waits {
				<-waiting
			}
			// Long enough for a poll to try many times; a wait tries
			// again only when the lock is let go.
			time.Sleep(300 * time.Millisecond)
			holder.Close()
			for range waits {
				n := bounded(t, "a waiter", func() error {
					if n := <-tries; n < 2 || n > 2+waits {
						return fmt.Errorf("tried the lock %d times", n)
					}
					return nil
				})
				if n != nil {
					t.Error(n)
				}
			}
		})
	}
}

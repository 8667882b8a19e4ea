package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a lock held by another process is tried again.
// flock needs only a descriptor, even a read-only one: a process that can
// merely read the state directory can hold any of its locks, so no lock
// is ever waited for in the kernel, where neither a deadline nor a signal
// reaches.
const lockPoll = 50 * time.Millisecond

// maxWait bounds a wait for a lock of the state directory. Helpers hold
// them for milliseconds; one held longer is stuck or hostile, and the
// request should rather go on without what it guards than wait out its
// deadline.
const maxWait = 3 * time.Second

// ErrLocked means a file of the state directory stayed locked by another
// process for as long as the request could wait.
var ErrLocked = errors.New("locked by another process")

// lockedError is ErrLocked for one file, with how long it was waited for
// and, when the request ended first, its context's error.
type lockedError struct {
	path  string
	held  time.Duration
	ended error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("%s is %v (held past %v)", e.path, ErrLocked, e.held.Round(100*time.Millisecond))
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

func (e *lockedError) Unwrap() error { return e.ended }

// lockWait is how long a request may wait for a lock: half the time ctx
// has left (the rest is the request's, to be decided), and never more
// than maxWait.
func lockWait(ctx context.Context) time.Duration {
	wait := maxWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)/2)
	}
	return wait
}

// retry calls try, which takes path's lock without waiting, until it
// succeeds or fails, every lockPoll, until ctx ends or, when wait is
// positive, wait has passed: then the error is ErrLocked (with ctx's
// error when ctx ended). waiting, when not nil, is called once if the
// lock is not free at first.
func retry(ctx context.Context, path string, wait time.Duration, waiting func(), try func() (bool, error)) error {
	start := time.Now()
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for said := false; ; {
		switch ok, err := try(); {
		case err != nil:
			return err
		case ok:
			return nil
		case !said && waiting != nil:
			waiting()
		}
		said = true
		select {
		case <-ctx.Done():
			return &lockedError{path, time.Since(start), ctx.Err()}
		case <-expired:
			return &lockedError{path, time.Since(start), nil}
		case <-tick.C:
		}
	}
}

// tryLock takes f's exclusive lock without waiting; false when another
// process holds it (exclusive or shared).
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", f.Name(), err)
}

// lockFile takes f's exclusive lock within ctx and lockWait.
func lockFile(ctx context.Context, f *os.File) error {
	wait := lockWait(ctx)
	if wait <= 0 {
		return fmt.Errorf("%s: no time left to wait for its lock", f.Name())
	}
	return retry(ctx, f.Name(), wait, nil, func() (bool, error) { return tryLock(f) })
}

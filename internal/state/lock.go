package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// A lock held by another process is waited for by a thread blocked in
// flock on a descriptor of its own (waitFree), never by polling: flock
// needs only a descriptor, even a read-only one, so a process that can
// merely read the state directory can hold any of its locks, and the
// kernel's wait is reached by neither a deadline nor a signal. The request
// stops waiting when its deadline comes; the thread stays blocked until
// the lock frees, then lets it go at once. One such thread per file serves
// every wait of the process (waiters), so a lock held forever costs a
// long-lived process one thread per file, not one per request.

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
// succeeds or fails, waiting in between until the lock is free
// (waitFree), until ctx ends or, when wait is positive, wait has passed:
// then the error is ErrLocked (with ctx's error when ctx ended). waiting,
// when not nil, is called once if the lock is not free at first.
func retry(ctx context.Context, path string, wait time.Duration, waiting func(), try func() (bool, error)) error {
	start := time.Now()
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
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
		w, err := waitFree(path)
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return &lockedError{path, time.Since(start), ctx.Err()}
		case <-expired:
			return &lockedError{path, time.Since(start), nil}
		case <-w.free:
			if w.err != nil {
				return w.err
			}
		}
	}
}

// waiters are the threads waiting for a lock of the state directory, by
// path.
var waiters = struct {
	sync.Mutex
	m map[string]*waiter
}{m: map[string]*waiter{}}

// waiter is one thread waiting for a lock: free is closed once the lock
// has been free, or once the wait failed (err).
type waiter struct {
	free chan struct{}
	err  error
}

// waitFree returns the wait, shared by every wait of the process for
// path, for path's lock to be free: taken and let go at once by a
// blocking flock on a read-only descriptor of its own. Free is not taken:
// the caller tries again, and may find it taken by another in between.
func waitFree(path string) (*waiter, error) {
	waiters.Lock()
	defer waiters.Unlock()
	if w, ok := waiters.m[path]; ok {
		return w, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	w := &waiter{free: make(chan struct{})}
	waiters.m[path] = w
	go func() {
		defer f.Close()
		for {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			if err == nil {
				err = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			}
			if !errors.Is(err, syscall.EINTR) {
				if err != nil {
					w.err = fmt.Errorf("%s: waiting for its lock: %w", path, err)
				}
				break
			}
		}
		waiters.Lock()
		delete(waiters.m, path)
		waiters.Unlock()
		close(w.free)
	}()
	return w, nil
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

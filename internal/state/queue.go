package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// TurnName is the lock file that queues prompts in the state directory.
const TurnName = "prompt.lock"

// turnPoll is how often a queued helper tries for its turn.
const turnPoll = 50 * time.Millisecond

// WaitTurn waits until no other helper of the user is asking a person,
// then holds the turn until release. waiting is called once if the turn
// is not free at first. The kernel releases a turn whose holder dies, even
// by SIGKILL. It fails with ctx's error when ctx ends first.
func WaitTurn(ctx context.Context, dir string, waiting func()) (release func(), err error) {
	if err := checkOwned(dir, true); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, TurnName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := checkOwned(path, false); err != nil {
		f.Close()
		return nil, err
	}
	t := time.NewTicker(turnPoll)
	defer t.Stop()
	for said := false; ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { f.Close() }, nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		case !said:
			said = true
			waiting()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

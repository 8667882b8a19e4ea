package state

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
)

// TurnName is the lock file that queues prompts in the state directory.
const TurnName = "prompt.lock"

// WaitTurn waits until no other helper of the user is asking a person,
// then holds the turn until release. waiting is called once if the turn
// is not free at first. The kernel releases a turn whose holder dies, even
// by SIGKILL. It fails, wrapping ctx's error, when ctx ends first.
func WaitTurn(ctx context.Context, dir string, waiting func()) (release func(), err error) {
	f, err := openTurn(dir)
	if err != nil {
		return nil, err
	}
	if err := retry(ctx, f.Name(), 0, waiting, func() (bool, error) { return tryLock(f) }); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// TryTurn takes the turn if no other helper of the user is asking a
// person, without waiting; ok false (and release nil) when one is. A
// helper that takes it while its store is open knows that whatever the
// previous holder recorded before releasing the turn is in the store.
func TryTurn(dir string) (release func(), ok bool, err error) {
	f, err := openTurn(dir)
	if err != nil {
		return nil, false, err
	}
	if ok, err = tryLock(f); !ok {
		f.Close()
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}

// openTurn opens the turn's lock file in dir.
func openTurn(dir string) (*os.File, error) {
	if err := ownedDir(dir); err != nil {
		return nil, err
	}
	return openOwned(filepath.Join(dir, TurnName), os.O_CREATE)
}

// openOwned opens the state file at path for reading and writing (mode
// 0600 when created), never through a symlink, refusing the file opened
// (not whatever path names by then) as checkOwned does.
func openOwned(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|flag, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = ownedInfo(path, fi, false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

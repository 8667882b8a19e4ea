// Package state is askperm's memory across requests: one bbolt database in
// the state directory, shared by every helper process of the user.
// Remembered always-rules, session approvals and the breaker's counts live
// in it; beside it, the prompt rate limit's file (PromptsFile), the prompt
// queue's lock, the audit log and the breaker's late counts (LateCountsName).
//
// The database's lock is held only while it is open, and a helper opens it
// only to read or to record, never while a person is being asked, so
// parallel helpers queue for milliseconds. A process deciding many
// requests at once (the gate, `askperm mcp`) keeps one Store open while
// any of them uses it, closing it when none waits or once it has been open
// 20 ms, so that others get their turn: never for its lifetime. Every lock of the directory is
// taken without blocking, and, when held, tried again as soon as it is
// let go, within the request's deadline (lock.go). When the store cannot be used (unsafe, corrupt, locked past
// the wait) Open says why, and the caller decides without memory: a
// remembered deny may then be unseen, so no automatic allow stands.
package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// DBName is the database's file name in the state directory.
const DBName = "askperm.db"

// Buckets of the database.
var (
	rulesBucket    = []byte("rules")
	sessionsBucket = []byte("sessions")
)

// Store is the open database.
type Store struct {
	db  *bolt.DB
	dir string // the state directory, of the late counts' file
}

// ErrCorrupt means the database could not be read; it was moved aside.
var ErrCorrupt = errors.New("corrupt")

// Open opens the store in dir, creating dir (mode 0700) and the database
// (0600) when missing, and waiting for the database's lock at most half
// the time ctx has left, and never more than maxWait (ErrLocked then).
// It refuses a directory or database that another user owns or that others
// may write, and moves a corrupt database aside (never deleting it).
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := ownedDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, DBName)
	if err := checkOwned(path, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	wait := lockWait(ctx)
	if wait <= 0 {
		return nil, fmt.Errorf("%s: no time left to wait for its lock", path)
	}
	// bbolt polls for the lock in a loop of its own that no context ends:
	// it is asked to try once (the shortest timeout), and retry waits.
	var db *bolt.DB
	err := retry(ctx, path, wait, nil, func() (bool, error) {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Nanosecond})
		if errors.Is(err, bolterrors.ErrTimeout) {
			return false, nil
		}
		return true, err
	})
	switch {
	case errors.Is(err, ErrLocked):
		return nil, err
	case err != nil:
		return nil, moveAside(path, err)
	}
	s := &Store{db: db, dir: dir}
	if err := s.ensureBuckets(); err != nil {
		db.Close()
		return nil, moveAside(path, err)
	}
	if err := s.ensureRuleIndex(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// ensureBuckets creates the buckets a new database lacks, writing only
// then: opening a store costs no write to disk.
func (s *Store) ensureBuckets() error {
	all := [][]byte{rulesBucket, sessionsBucket, breakerBucket, userBreakerBucket}
	missing := false
	if err := s.view(func(tx *bolt.Tx) error {
		for _, b := range all {
			missing = missing || tx.Bucket(b) == nil
		}
		return nil
	}); err != nil || !missing {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		for _, b := range all {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close releases the database and its lock.
func (s *Store) Close() error { return s.db.Close() }

// update runs fn in a read-write transaction. A database corrupted under
// us can make bbolt panic; that is an error like any other.
func (s *Store) update(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, p)
		}
	}()
	return s.db.Update(fn)
}

// view runs fn in a read-only transaction, as update does.
func (s *Store) view(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, p)
		}
	}()
	return s.db.View(fn)
}

// moveAside renames a database that could not be opened, so the next
// helper starts afresh and the old file is kept for a person to look at.
func moveAside(path string, cause error) error {
	aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("%s: %w: %v (and it could not be moved aside: %v)", path, ErrCorrupt, cause, err)
	}
	return fmt.Errorf("%s: %w: %v; moved aside to %s", path, ErrCorrupt, cause, aside)
}

// ownedDir makes the state directory dir (mode 0700) when it is missing,
// as whatever first writes to it may be the audit log or the prompt
// queue, and refuses it as checkOwned does.
func ownedDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return checkOwned(dir, true)
}

// checkOwned refuses a state file or directory (links followed) that is
// of the wrong kind, owned by another user, or writable by others: what
// others can write could allow in your name.
func checkOwned(path string, dir bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return ownedInfo(path, fi, dir)
}

// ownedInfo refuses, as checkOwned does, the file at path that fi
// describes.
func ownedInfo(path string, fi fs.FileInfo, dir bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case dir && !fi.IsDir():
		return fmt.Errorf("%s: not a directory", path)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file", path)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s: not owned by you", path)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s: unsafe permissions %#o: group- or world-writable", path, fi.Mode().Perm())
	}
	return nil
}

// keysWhere lists the keys of b for which pick says true. Keys are deleted
// after a walk, never during it: a cursor that deletes may skip the next
// key.
func keysWhere(b *bolt.Bucket, pick func(k, v []byte) (bool, error)) ([][]byte, error) {
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		ok, err := pick(k, v)
		if ok {
			keys = append(keys, bytes.Clone(k))
		}
		return err
	})
	return keys, err
}

func deleteKeys(b *bolt.Bucket, keys [][]byte) error {
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// cmpErr is the first error that is not nil.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

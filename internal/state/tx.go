package state

import (
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// Tx is one transaction on the store: what a request reads and writes
// between one open and its close (the look-up, the record and the
// breaker), made durable by one commit.
type Tx struct {
	tx *bolt.Tx
	// dirty says something was written: only then is the transaction
	// committed, which costs the disk's syncs; a look-up that finds
	// nothing to change writes nothing.
	dirty bool
	// dir is the state directory; lateFile the late counts' file, held
	// locked from FoldLateCounts to the transaction's end, and emptied
	// then (lateEmpty) when the transaction committed.
	dir       string
	lateFile  *os.File
	lateEmpty bool
}

// Do runs fn in one read-write transaction, committed (durably: bbolt
// syncs the file) when fn wrote something and returned nil, rolled back
// otherwise. A panic of bbolt's over a corrupt database is an error
// (ErrCorrupt); any other panic in fn is fn's own and goes on, the
// transaction rolled back.
func (s *Store) Do(fn func(*Tx) error) (err error) {
	btx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	tx := &Tx{tx: btx, dir: s.dir}
	committed := false
	defer func() {
		if btx.DB() != nil { // not committed: fn failed or panicked, or wrote nothing
			_ = btx.Rollback()
		}
		// A file left unemptied is harmless: the counts it holds are
		// marked folded in the committed transaction.
		_ = tx.endLateCounts(committed)
	}()
	if err := fn(tx); err != nil || !tx.dirty {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, p)
		}
	}()
	err = btx.Commit()
	committed = err == nil
	return err
}

// View runs fn in a read-only transaction: it writes nothing, and the
// methods of Tx that would (a session approval's use, pruning) leave it
// undone.
func (s *Store) View(fn func(*Tx) error) error {
	return s.view(func(btx *bolt.Tx) error { return fn(&Tx{tx: btx}) })
}

// bucket is the named bucket.
func (tx *Tx) bucket(name []byte) *bolt.Bucket { return tx.tx.Bucket(name) }

// put writes k's value in b and marks tx to be committed.
func (tx *Tx) put(b *bolt.Bucket, k, v []byte) error {
	tx.dirty = true
	return b.Put(k, v)
}

// del removes keys from b and marks tx to be committed.
func (tx *Tx) del(b *bolt.Bucket, keys ...[]byte) error {
	if len(keys) > 0 {
		tx.dirty = true
	}
	return deleteKeys(b, keys)
}

// guard turns a panic of bbolt's over a corrupt database, in a read or
// write of one of Tx's methods, into an error.
func guard(err *error) {
	if p := recover(); p != nil {
		*err = errors.Join(*err, fmt.Errorf("%w: %v", ErrCorrupt, p))
	}
}

package team

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nats-io/nkeys"
)

// maxSecretFile caps a key or credentials file: a .creds file is a few
// kilobytes.
const maxSecretFile = 64 << 10

// readSecret reads a file holding a secret (a seed or credentials): a
// regular file of the effective user, which nobody else may read or
// write. The checks run on the opened descriptor, so the file checked is
// the file read.
func readSecret(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s: unsafe permissions %#o: a secret is readable by its owner alone (chmod 600)", path, fi.Mode().Perm())
	case !ok:
		return nil, fmt.Errorf("%s: cannot tell the file's owner", path)
	case int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("%s: owned by uid %d, not you", path, st.Uid)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxSecretFile)
	}
	return b, nil
}

// LoadKey reads the approver's signing key, an nkey user seed (SU...)
// in a file of its own (readSecret).
func LoadKey(path string) (nkeys.KeyPair, error) {
	b, err := readSecret(path)
	if err != nil {
		return nil, err
	}
	kp, err := nkeys.ParseDecoratedUserNKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not an nkey user seed: %w", path, err)
	}
	return kp, nil
}

// ErrKeyExists is CreateKey refusing to replace a key: answers signed
// with the old one would no longer be the approver's.
var ErrKeyExists = errors.New("a key exists already")

// CreateKey creates a new approver key at path (mode 0600, its directory
// 0700 when missing) and returns it. It never overwrites a file.
func CreateKey(path string) (nkeys.KeyPair, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrKeyExists)
	}
	if err != nil {
		return nil, err
	}
	_, err = f.Write(append(seed, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path) // a partial seed is no key
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kp, nil
}

// PublicKey is kp's public key (U...).
func PublicKey(kp nkeys.KeyPair) string {
	k, err := kp.PublicKey()
	if err != nil {
		panic("team: a key pair without a public key: " + err.Error()) // every KeyPair built here has one
	}
	return k
}

package team

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/internal/userfile"
)

// LoadKey reads the approver's signing key, an nkey user seed (SU...)
// in a file of the user's that nobody else may read (userfile.ReadSecret).
func LoadKey(path string) (nkeys.KeyPair, error) {
	b, err := userfile.ReadSecret(path)
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

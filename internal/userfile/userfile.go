// Package userfile reads the files a user writes for askperm (answers,
// rules, config) and refuses unsafe ones: a file anyone else could have
// written must never steer a permission decision.
package userfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxSize caps a user file; no sane answers, rules or config file is larger.
const MaxSize = 4 << 20

// Read returns the contents of the user file at path (links followed). It
// refuses a file that is not a regular file, that is group- or
// world-writable, that is owned by neither the effective user nor root, or
// that is larger than MaxSize. The checks run on the opened descriptor, so
// the file checked is the file read.
func Read(path string) ([]byte, error) { return read(path, check) }

// ReadSecret is Read of a file holding a secret (a key, credentials): it
// must moreover be the effective user's own, and nobody else may read it.
func ReadSecret(path string) ([]byte, error) { return read(path, checkSecret) }

func read(path string, check func(os.FileInfo, int) error) ([]byte, error) {
	f, fi, err := open(path, check)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized to the file, with the room ReadFrom wants free before each
	// read (bytes.MinRead): a big rules file (or its compiled cache) is
	// read into one buffer, never copied into a larger one.
	buf := bytes.NewBuffer(make([]byte, 0, min(fi.Size(), MaxSize)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxSize+1)); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxSize)
	}
	return b, nil
}

// Digest is the SHA-256 of the contents of the user file at path, which
// Read would return (and refuse as Read would), streamed: a big file's
// digest needs no buffer of its size.
func Digest(path string) ([sha256.Size]byte, error) {
	f, _, err := open(path, check)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxSize+1))
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	if n > MaxSize {
		return [sha256.Size]byte{}, fmt.Errorf("%s: larger than %d bytes", path, MaxSize)
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}

// open opens the user file at path and checks it with check.
func open(path string, check func(os.FileInfo, int) error) (*os.File, os.FileInfo, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; check then
	// refuses it. Regular files ignore the flag.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = check(fi, os.Geteuid())
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkSecret is check of a secret's file.
func checkSecret(fi os.FileInfo, euid int) error {
	if err := check(fi, euid); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("unsafe permissions %#o: a secret is readable by its owner alone (chmod 600)", fi.Mode().Perm())
	}
	if st, _ := fi.Sys().(*syscall.Stat_t); int(st.Uid) != euid { // check found the owner
		return fmt.Errorf("owned by uid %d, not you", st.Uid)
	}
	return nil
}

func check(fi os.FileInfo, euid int) error {
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("unsafe permissions %#o: group- or world-writable", fi.Mode().Perm())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("cannot tell the file's owner")
	}
	if int(st.Uid) != euid && st.Uid != 0 {
		return fmt.Errorf("owned by uid %d, neither you nor root", st.Uid)
	}
	return nil
}

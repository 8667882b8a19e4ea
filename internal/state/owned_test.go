package state

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReplaceOwned writes a file of its own, whole, that ReadOwned reads
// back; ReadOwned refuses what others could have written, a link, and a
// file past its limit.
func TestOwnedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := ReadOwned(dir, "f", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no directory: %v", err)
	}
	if err := ReplaceOwned(dir, "f", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceOwned(dir, "f", []byte("two")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "f")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	if b, err := ReadOwned(dir, "f", 10); err != nil || string(b) != "two" {
		t.Errorf("read %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if _, err := ReadOwned(dir, "f", 2); err == nil || !strings.Contains(err.Error(), "larger than 2 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadOwned(dir, "missing", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	os.Chmod(path, 0o620)
	if _, err := ReadOwned(dir, "f", 10); err == nil || !strings.Contains(err.Error(), "unsafe permissions") {
		t.Errorf("group-writable: %v", err)
	}
	os.Remove(path)
	other := filepath.Join(t.TempDir(), "other")
	os.WriteFile(other, []byte("x"), 0o600)
	os.Symlink(other, path)
	if _, err := ReadOwned(dir, "f", 10); err == nil {
		t.Error("read through a symlink")
	}
	os.Chmod(dir, 0o777)
	if _, err := ReadOwned(dir, "f", 10); err == nil || !strings.Contains(err.Error(), "unsafe permissions") {
		t.Errorf("world-writable directory: %v", err)
	}
}

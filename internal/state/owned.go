package state

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadOwned reads the state file name in dir, of at most limit bytes,
// never through a symlink, refusing the file opened as checkOwned does:
// what others can write could allow in your name. A missing file is
// fs.ErrNotExist.
func ReadOwned(dir, name string, limit int64) ([]byte, error) {
	if err := checkOwned(dir, true); err != nil {
		return nil, err
	}
	f, err := openOwned(filepath.Join(dir, name), 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", f.Name(), limit)
	}
	return b, nil
}

// ReplaceOwned replaces the state file name in dir (the directory made
// as ownedDir does) with data, whole: written to a new file of its own
// (mode 0600) beside it, then renamed over it, so that a reader finds the
// old content or the new, never a part.
func ReplaceOwned(dir, name string, data []byte) error {
	if err := ownedDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

package userfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxLinks is how many links Program follows, as the kernel's limit.
const maxLinks = 40

// Program checks that path names a program the user may trust as much as
// a user file: a dialog program that approves everything without a window
// must not be planted by anyone else. path must be absolute; every
// directory on the way to the program, those that links lead through
// included, must be owned by the effective user or root and writable by
// no one else (a sticky bit does not count: others may still create any
// name not taken there); the program, links followed, must be a regular
// executable file that check accepts (owner, not group- or
// world-writable). The checks walk the path one name at a time, as the
// kernel resolves it.
func Program(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%q is not an absolute path", path)
	}
	euid := os.Geteuid()
	file, fi, err := resolve(path, func(dir string, fi fs.FileInfo) error { return checkDir(dir, fi, euid) })
	if err != nil {
		return err
	}
	if err := check(fi, euid); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s: not executable", file)
	}
	return nil
}

// resolve follows the absolute path from the root one name at a time,
// links included, calls dir for every directory it passes through (the
// root first), and returns the file it ends at, links resolved, and its
// metadata.
func resolve(path string, dir func(string, fs.FileInfo) error) (string, fs.FileInfo, error) {
	cur := "/"
	fi, err := os.Lstat(cur)
	if err == nil {
		err = dir(cur, fi)
	}
	if err != nil {
		return "", nil, err
	}
	rest, links := names(path), 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		if name == ".." {
			cur = filepath.Dir(cur) // cur holds no link: its parent was checked on the way
			continue
		}
		next := filepath.Join(cur, name)
		if fi, err = os.Lstat(next); err != nil {
			return "", nil, err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", nil, fmt.Errorf("%s: more than %d links", path, maxLinks)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", nil, err
			}
			if filepath.IsAbs(target) {
				cur = "/"
			}
			rest = append(names(target), rest...)
		case len(rest) == 0:
			return next, fi, nil
		case !fi.IsDir():
			return "", nil, fmt.Errorf("%s: not a directory", next)
		default:
			if err := dir(next, fi); err != nil {
				return "", nil, err
			}
			cur = next
		}
	}
	return cur, fi, nil
}

// names are the names of path, without the empty ones and ".".
func names(path string) []string {
	return slices.DeleteFunc(strings.Split(path, "/"), func(n string) bool { return n == "" || n == "." })
}

// checkDir refuses a directory that anyone but the effective user and
// root may write to.
func checkDir(dir string, fi fs.FileInfo, euid int) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("cannot tell the owner of " + dir)
	}
	if int(st.Uid) != euid && st.Uid != 0 {
		return fmt.Errorf("directory %s is owned by uid %d, neither you nor root", dir, st.Uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		if fi.Mode()&fs.ModeSticky != 0 {
			return fmt.Errorf("directory %s is writable by others (mode %#o; a sticky bit does not count)", dir, 0o1000|perm)
		}
		return fmt.Errorf("directory %s is writable by others (mode %#o)", dir, perm)
	}
	return nil
}

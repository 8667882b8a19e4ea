package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// safeBase is a fresh directory that Program trusts, with every directory
// above it: none under a world-writable /tmp, so in the user's cache
// directory. The test is skipped where there is none.
func safeBase(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory: %v", err)
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Skipf("no cache directory: %v", err)
	}
	base, err := os.MkdirTemp(cache, "askperm-program-test-")
	if err != nil {
		t.Skipf("no cache directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := trusted(base); err != nil {
		t.Skipf("no directory only the user may write to: %v", err)
	}
	return base
}

// trusted is why Program would not trust directory d and those above it.
func trusted(d string) error {
	_, _, err := resolve(d, func(dir string, fi fs.FileInfo) error { return checkDir(dir, fi, os.Geteuid()) })
	return err
}

// program writes an executable script at path with mode, its directory
// made first.
func program(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// dir makes directory path with mode (umask aside).
func dir(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func link(t *testing.T, target, path string) string {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProgramAccepts(t *testing.T) {
	base := safeBase(t)
	prog := program(t, filepath.Join(base, "bin", "yad"), 0o755)
	dir(t, filepath.Join(base, "sub"), 0o700)
	for name, path := range map[string]string{
		"mode 0755":             prog,
		"mode 0500":             program(t, filepath.Join(base, "ro"), 0o500),
		"absolute link":         link(t, prog, filepath.Join(base, "abs")),
		"relative link":         link(t, "bin/yad", filepath.Join(base, "rel")),
		"link to a link":        link(t, "rel", filepath.Join(base, "twice")),
		"link to its directory": link(t, "../bin", filepath.Join(base, "sub", "bin")) + "/yad",
		"dot and dot-dot":       base + "/./sub/../bin/yad",
		"a system program":      "/bin/sh",
	} {
		if err := Program(path); err != nil {
			t.Errorf("%s (%s): %v", name, path, err)
		}
	}
}

func TestProgramRefuses(t *testing.T) {
	base := safeBase(t)
	safe := program(t, filepath.Join(base, "safe", "yad"), 0o755)
	worldDir := dir(t, filepath.Join(base, "world"), 0o777)
	cases := []struct {
		name, path, want string
	}{
		{"relative", "bin/yad", "not an absolute path"},
		{"world-writable", program(t, filepath.Join(base, "ww"), 0o757), "group- or world-writable"},
		{"group-writable", program(t, filepath.Join(base, "gw"), 0o775), "group- or world-writable"},
		{"not executable", program(t, filepath.Join(base, "nx"), 0o644), "not executable"},
		{"a directory", filepath.Join(base, "safe"), "not a regular file"},
		{"in a world-writable directory", program(t, filepath.Join(worldDir, "yad"), 0o755), "directory " + worldDir + " is writable by others (mode 0777)"},
		{"in a sticky world-writable directory", program(t, filepath.Join(dir(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky), "yad"), 0o755), "(mode 01777; a sticky bit does not count)"},
		{"in a group-writable directory", program(t, filepath.Join(dir(t, filepath.Join(base, "group"), 0o775), "yad"), 0o755), "is writable by others (mode 0775)"},
		{"a link to a world-writable file", link(t, filepath.Join(base, "ww"), filepath.Join(base, "to-ww")), "group- or world-writable"},
		{"a link in a world-writable directory", link(t, safe, filepath.Join(worldDir, "to-safe")), "is writable by others"},
		{"a link through a world-writable directory", link(t, "../world/to-safe", filepath.Join(base, "safe", "via-world")), "is writable by others"},
		{"a loop of links", link(t, "loop", filepath.Join(base, "loop")), "more than 40 links"},
		{"a file as a directory", safe + "/x", "not a directory"},
	}
	if tmp := os.TempDir(); trusted(tmp) != nil {
		cases = append(cases, struct{ name, path, want string }{"under " + tmp, program(t, filepath.Join(t.TempDir(), "yad"), 0o755), "is writable by others"})
	}
	for _, tc := range cases {
		if err := Program(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (%s): got %v, want %q", tc.name, tc.path, err, tc.want)
		}
	}
	if err := Program(filepath.Join(base, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: got %v", err)
	}
	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Program(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo: got %v", err)
	}
}

// A program or a directory of another user's is refused, tested for real
// where the test may give a file away (as root).
func TestProgramRefusesForeignOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another user")
	}
	base := safeBase(t)
	const nobody = 65534
	prog := program(t, filepath.Join(base, "theirs"), 0o755)
	theirDir := dir(t, filepath.Join(base, "their-dir"), 0o755)
	inTheirDir := program(t, filepath.Join(theirDir, "yad"), 0o755)
	for _, p := range []string{prog, theirDir} {
		if err := os.Lchown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		prog:       "owned by uid 65534, neither you nor root",
		inTheirDir: "directory " + theirDir + " is owned by uid 65534",
		link(t, prog, filepath.Join(base, "to-theirs")): "owned by uid 65534",
	} {
		if err := Program(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", path, err, want)
		}
	}
}

func TestCheckDirOwners(t *testing.T) {
	fi, err := os.Stat(safeBase(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owner, euid uint32
		ok          bool
	}{
		{1000, 1000, true},
		{0, 1000, true},
		{1001, 1000, false},
		{1000, 0, false},
	} {
		err := checkDir("/d", ownedBy{fi, tc.owner}, int(tc.euid))
		if (err == nil) != tc.ok {
			t.Errorf("owner %d, euid %d: got %v", tc.owner, tc.euid, err)
		}
	}
}

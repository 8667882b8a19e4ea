package userfile

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.toml")
	if err := os.WriteFile(p, []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadAcceptsPrivateAndReadOnlyFiles(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o644, 0o400} {
		b, err := Read(write(t, mode))
		if err != nil || string(b) != "x = 1\n" {
			t.Errorf("mode %#o: %q, %v", mode, b, err)
		}
	}
}

func TestReadRefusesWritableByOthers(t *testing.T) {
	for _, mode := range []os.FileMode{0o620, 0o602, 0o666} {
		_, err := Read(write(t, mode))
		if err == nil || !strings.Contains(err.Error(), "group- or world-writable") {
			t.Errorf("mode %#o: got %v", mode, err)
		}
	}
}

func TestReadFollowsLinksAndChecksTheTarget(t *testing.T) {
	target := write(t, 0o666)
	link := filepath.Join(t.TempDir(), "link.toml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(link); err == nil {
		t.Fatal("a link to a world-writable file was accepted")
	}
	if err := os.Chmod(target, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(link); err != nil {
		t.Fatalf("a link to a private file was refused: %v", err)
	}
}

func TestReadRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{t.TempDir(), fifo, "/dev/null"} {
		if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: got %v", p, err)
		}
	}
}

// ownedBy is a file's metadata with another owner.
type ownedBy struct {
	os.FileInfo
	uid uint32
}

func (o ownedBy) Sys() any { return &syscall.Stat_t{Uid: o.uid} }

func TestCheckRefusesForeignOwner(t *testing.T) {
	fi, err := os.Stat(write(t, 0o600))
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
		err := check(ownedBy{fi, tc.owner}, int(tc.euid))
		if (err == nil) != tc.ok {
			t.Errorf("owner %d, euid %d: got %v", tc.owner, tc.euid, err)
		}
	}
}

func TestReadRefusesOversizedFile(t *testing.T) {
	p := write(t, 0o600)
	if err := os.WriteFile(p, make([]byte, MaxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("got %v", err)
	}
}

// Digest refuses what Read refuses, with the same error, and is the
// digest of what Read returns, at sizes around Read's buffer's edges.
func TestDigestIsReadsDigest(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{write(t, 0o666), dir, fifo, filepath.Join(dir, "missing")}
	for i, n := range []int{0, 1, bytes.MinRead - 1, 32 << 10, 32<<10 + 1, 1 << 20, MaxSize, MaxSize + 1} {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		b := make([]byte, n)
		rand.NewChaCha8([32]byte{byte(n)}).Read(b)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		b, rerr := Read(p)
		d, derr := Digest(p)
		if fmt.Sprint(rerr) != fmt.Sprint(derr) {
			t.Errorf("%s: Read: %v, Digest: %v", p, rerr, derr)
		}
		if rerr == nil && d != sha256.Sum256(b) {
			t.Errorf("%s: not the digest of Read's %d bytes", p, len(b))
		}
	}
}

// A secret's file is refused when anyone but its owner may read it, on
// top of every check of Read.
func TestReadSecret(t *testing.T) {
	for _, tc := range []struct {
		mode os.FileMode
		want string // "" reads
	}{
		{0o600, ""},
		{0o400, ""},
		{0o640, "unsafe permissions 0640: a secret is readable by its owner alone"},
		{0o604, "unsafe permissions 0604"},
		{0o620, "group- or world-writable"},
	} {
		_, err := ReadSecret(write(t, tc.mode))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.mode, err, tc.want)
		}
	}
}

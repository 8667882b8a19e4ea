package team

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateAndLoadKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", KeyFile)
	kp, err := CreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", fi.Mode(), err)
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v, want 0700", dir.Mode().Perm())
	}
	got, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if PublicKey(got) != PublicKey(kp) {
		t.Errorf("loaded %s, created %s", PublicKey(got), PublicKey(kp))
	}
	before, _ := os.ReadFile(path)
	if _, err := CreateKey(path); !errors.Is(err, ErrKeyExists) {
		t.Errorf("CreateKey over a key: %v, want ErrKeyExists", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("CreateKey changed an existing key")
	}
}

func TestLoadKeyRefuses(t *testing.T) {
	dir := t.TempDir()
	kp := userKey(t)
	seed, _ := kp.Seed()
	acct, _ := userKeyAccount()
	write := func(name string, mode os.FileMode, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"group-readable", write("g", 0o640, seed), "unsafe permissions 0640"},
		{"world-writable", write("w", 0o602, seed), "unsafe permissions 0602"},
		{"not a seed", write("n", 0o600, []byte("hello\n")), "not an nkey user seed"},
		{"an account seed", write("a", 0o600, acct), "not an nkey user seed"},
		{"a directory", dir, "not a regular file"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
	} {
		_, err := LoadKey(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := LoadKey(write("ok", 0o400, seed)); err != nil {
		t.Errorf("a read-only key: %v", err)
	}
}

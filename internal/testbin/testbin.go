// Package testbin builds the askperm binary, and askperm-team beside it,
// for the tests that run it as a helper would be run. Tests only.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Main builds askperm, sets *bin to its path, runs the tests m, removes the
// binary and exits with the tests' status.
func Main(m *testing.M, bin *string) {
	dir, err := Dir()
	if err == nil {
		*bin, err = Build(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building askperm:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Dir is a new directory for the binaries, which its caller removes:
// askperm runs askperm-team found beside it only from a directory the
// user may trust (userfile.Program), none of whose parents others may
// write, so not under a world-writable temporary directory: under the
// user's cache directory.
func Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		return "", fmt.Errorf("a directory for the binaries: %w", err)
	}
	return os.MkdirTemp(cache, "askperm-test-")
}

// Build builds the module's command, and askperm-team beside it (where
// askperm looks for it first), into dir and returns askperm's path; the
// output goes to stderr.
func Build(dir string) (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("the module's directory: %w", err)
	}
	mod := strings.TrimSpace(string(root))
	// One go build of both: their shared packages compile once.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), mod, filepath.Join(mod, "cmd", "askperm-team"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return filepath.Join(dir, "askperm"), cmd.Run()
}

// Package testbin builds the askperm binary for the tests that run it as
// a helper would be run. Tests only.
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
	dir, err := os.MkdirTemp("", "askperm-test")
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

// Build builds the module's command into dir and returns the binary's
// path; its output goes to stderr.
func Build(dir string) (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("the module's directory: %w", err)
	}
	bin := filepath.Join(dir, "askperm")
	cmd := exec.Command("go", "build", "-o", bin, strings.TrimSpace(string(root)))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return bin, cmd.Run()
}

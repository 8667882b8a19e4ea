// Package clitest runs a command line of askperm's in the test's process,
// for the tests of cmd and teamcmd. Tests only.
package clitest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/askperm/askperm/internal/cli"
)

// Invoke runs run (a command line's) with args and req on stdin, in an
// environment of env alone but for an empty XDG_CONFIG_HOME, and returns
// the exit status, stdout and stderr.
func Invoke(t *testing.T, run func(cli.Streams, []string) int, req string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "request.json")
	if err := os.WriteFile(in, []byte(req), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	var stderr bytes.Buffer
	if env == nil {
		env = map[string]string{}
	}
	env["XDG_CONFIG_HOME"] = dir // no config file unless a test writes one
	code := run(cli.Streams{In: stdin, Decision: stdout, ErrOut: &stderr, Getenv: func(k string) string { return env[k] }}, args)
	out, err := os.ReadFile(stdout.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(out), stderr.String()
}

// WriteFile writes text to a file name in a directory of its own and
// returns its path.
func WriteFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

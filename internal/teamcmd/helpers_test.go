package teamcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/askperm/askperm/internal/cli"
)

// invoke runs askperm-team with args and req on stdin, in an environment
// of env alone, and returns its exit status, stdout and stderr.
func invoke(t *testing.T, req string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	in := writeFile(t, "request.json", req)
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

// writeFile writes text to a file name of its own and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

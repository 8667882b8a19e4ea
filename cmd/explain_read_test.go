package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/internal/cli"
)

// explain reads its stdin under askperm's deadline, as check does: a
// caller that never closes it gets exit 65, not a hang.
func TestExplainUnclosedStdinEnds(t *testing.T) {
	for _, args := range [][]string{{"explain", "request"}, {"check"}} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "askperm", "config.toml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte("timeout = \"1s\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pw.WriteString(`{"action": "wri`)
		stdout, err := os.Create(filepath.Join(dir, "stdout"))
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		env := map[string]string{"XDG_CONFIG_HOME": dir}
		done := make(chan int, 1)
		go func() {
			done <- run(cli.Streams{In: pr, Decision: stdout, ErrOut: &stderr, Getenv: func(k string) string { return env[k] }}, args)
		}()
		var code int
		select {
		case code = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%v waited for stdin past its deadline", args)
		}
		pw.Close()
		pr.Close()
		stdout.Close()
		if code != cli.ExitRequest || !strings.Contains(stderr.String(), "request not fully read") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/askperm/askperm/internal/cli"
)

// forwarded is what forwardToTeam ran in askperm's place.
type forwarded struct {
	program string
	argv    []string
}

// recordExec makes forwardToTeam record what it runs, and fail as err.
func recordExec(t *testing.T, err error) *forwarded {
	t.Helper()
	var got forwarded
	old := execProgram
	execProgram = func(program string, argv, _ []string) error {
		got = forwarded{program, argv}
		return err
	}
	t.Cleanup(func() { execProgram = old })
	return &got
}

// A team command is askperm-team's, with the same arguments: the one
// [team] program names, else the first found; none is a usage error
// saying how to install it.
func TestForwardToTeam(t *testing.T) {
	dir := t.TempDir()
	program := "/bin/true" // a program the user may trust, as [team] program must be
	conf := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(conf, []byte("[team]\nurl = \"nats://127.0.0.1:4222\"\nhost = \"h\"\nprogram = \""+program+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := cli.Streams{Getenv: func(string) string { return "" }}
	got := recordExec(t, syscall.ENOEXEC)
	err := forwardToTeam(s, conf, []string{"inbox", "answer", "--message", "not now"})
	want := forwarded{program, []string{"askperm-team", "inbox", "answer", "--message", "not now"}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("ran %+v, want %+v", *got, want)
	}
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != cli.ExitInternal || !strings.Contains(err.Error(), "exec format error") {
		t.Errorf("a program that cannot run: %v", err)
	}

	os.WriteFile(conf, []byte("[team]\nurl = \"nats://127.0.0.1:4222\"\nhost = \"h\"\n"), 0o600)
	t.Setenv("PATH", dir)
	*got = forwarded{}
	err = forwardToTeam(s, conf, []string{"inbox"})
	if !errors.As(err, &ee) || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), "go install github.com/askperm/askperm/cmd/askperm-team@") || got.program != "" {
		t.Errorf("askperm-team nowhere: %v; ran %+v", err, *got)
	}
}

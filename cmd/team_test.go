package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/teamcmd"
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

// askperm inbox, rules list|forget --team and log --team run askperm-team
// with what was given, flags as they were set: askperm-team's same
// command takes them, to the same values.
func TestTeamCommandsForwarded(t *testing.T) {
	conf := writeFile(t, "config.toml", "[team]\nurl = \"nats://127.0.0.1:4222\"\nhost = \"h\"\nprogram = \"/bin/true\"\n")
	for _, args := range [][]string{
		{"inbox", "--config", conf},
		{"inbox", "answer", "d", "allow-always", "--config=" + conf, "--scope", "path=/p/", "--grant", "a", "--grant", "b"},
		{"rules", "list", "--team", "--json", "--config", conf},
		{"rules", "--config", conf, "forget", "--team", "0123"},
		{"log", "--team", "--since", "1h", "--decision", "deny", "--session", "a b", "--config", conf},
	} {
		got := recordExec(t, syscall.ENOEXEC)
		code, _, stderr := invoke(t, "", nil, args...)
		if code != cli.ExitInternal || got.program != "/bin/true" || len(got.argv) < 2 || got.argv[0] != "askperm-team" {
			t.Errorf("%q: exit %d, %s; ran %+v", args, code, stderr, *got)
			continue
		}
		if args[0] == "inbox" {
			if !reflect.DeepEqual(got.argv[1:], args) {
				t.Errorf("%q: ran %q", args, got.argv)
			}
			continue
		}
		// The values askperm parsed are the values askperm-team parses.
		mine, rest, err := Root().Find(args)
		if err != nil || mine.ParseFlags(rest) != nil {
			t.Fatalf("%q: %v", args, err)
		}
		theirs, rest, err := teamcmd.Tree().Find(got.argv[1:])
		if err != nil || theirs.ParseFlags(rest) != nil || theirs.CommandPath() != strings.Replace(mine.CommandPath(), "askperm", "askperm-team", 1) {
			t.Fatalf("%q: askperm-team takes %q as %s: %v", args, got.argv, theirs.CommandPath(), err)
		}
		mine.Flags().Visit(func(f *pflag.Flag) {
			if tf := theirs.Flags().Lookup(f.Name); tf == nil || tf.Value.String() != f.Value.String() {
				t.Errorf("%q: --%s is %v in askperm-team, %q in askperm", args, f.Name, tf, f.Value)
			}
		})
		if !reflect.DeepEqual(theirs.Flags().Args(), mine.Flags().Args()) {
			t.Errorf("%q: arguments %q, want %q", args, theirs.Flags().Args(), mine.Flags().Args())
		}
	}
}

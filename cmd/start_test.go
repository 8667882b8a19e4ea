package cmd

import (
	"io"
	"os"
	"testing"

	"github.com/askperm/askperm/internal/cli"
)

func nullStreams(tb testing.TB) cli.Streams {
	tb.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { null.Close() })
	return cli.Streams{In: null, Decision: null, ErrOut: io.Discard, Getenv: func(string) string { return "" }}
}

// TestAlone: only a command line made of the root's own flags (and their
// values) is run without the rest of the tree; help, the version, a
// command's name, a short flag or an unknown flag get the whole tree.
func TestAlone(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--answer", "allow-once"}, true},
		{[]string{"--answer=allow-once", "--no-remember", "--rules", "r.toml", "--rules=s.toml"}, true},
		{[]string{"--verbose", "--timeout", "5s", "--exit-status", "--state-dir", "ask"}, true}, // ask is --state-dir's value
		{[]string{"--no-remember=false", "--strict"}, true},
		{[]string{"ask", "--answer", "allow-once"}, false},
		{[]string{"--answer", "allow-once", "ask"}, false},
		{[]string{"--answer", "allow-once", "--help"}, false},
		{[]string{"-h"}, false},
		{[]string{"--version"}, false},
		{[]string{"--bogus"}, false},
		{[]string{"--", "x"}, false},
		{[]string{"__complete", "--answer", ""}, false},
		{[]string{"-"}, false},
	} {
		if got := alone(newRootCommand(nullStreams(t)), tc.args); got != tc.want {
			t.Errorf("alone(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// BenchmarkStart: the command tree a request decided by the root command
// builds (alone), and the whole tree.
func BenchmarkStart(b *testing.B) {
	s := nullStreams(b)
	b.Run("alone", func(b *testing.B) {
		for b.Loop() {
			newRootCommand(s)
		}
	})
	b.Run("tree", func(b *testing.B) {
		for b.Loop() {
			newRoot(s)
		}
	})
}

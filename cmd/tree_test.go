package cmd

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
)

// Root is askperm's command tree, for the tests that read it and make
// the man pages from it: its commands are never run.
func Root() *cobra.Command {
	null, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	return newRoot(cli.Streams{In: null, Decision: null, ErrOut: io.Discard, Getenv: func(string) string { return "" }})
}

// newRoot is the whole command tree.
func newRoot(s cli.Streams) *cobra.Command {
	root := newRootCommand(s)
	addCommands(s, root)
	return root
}

package cmd

import (
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Root is askperm's command tree, for the tests that read it and make
// the man pages from it: its commands are never run.
func Root() *cobra.Command {
	null, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	return newRoot(streams{in: null, decision: null, errOut: io.Discard, getenv: func(string) string { return "" }})
}

// newRoot is the whole command tree.
func newRoot(s streams) *cobra.Command {
	root := newRootCommand(s)
	addCommands(s, root)
	return root
}

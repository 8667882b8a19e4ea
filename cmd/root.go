// Package cmd owns askperm's command line: the cobra commands, their flags,
// writing each command's outcome, and the exit codes. Each command has an
// options struct and a run function that tests call without a process;
// settings are resolved by internal/settings and requests decided by
// internal/pipeline: cmd decides nothing itself.
package cmd

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
)

// Main runs askperm and returns its exit status.
func Main() int {
	// Libraries that print to os.Stdout (bubbletea's panic report, huh's
	// accessible mode) must never reach the decision channel.
	s := cli.Streams{In: os.Stdin, Decision: os.Stdout, ErrOut: os.Stderr, Getenv: os.Getenv}
	os.Stdout = os.Stderr
	return run(s, os.Args[min(1, len(os.Args)):])
}

func run(s cli.Streams, args []string) int {
	root := newRootCommand(s)
	if !alone(root, args) {
		addCommands(s, root)
	}
	root.SetArgs(args)
	return cli.Status(s.ErrOut, root.Execute())
}

// alone reports whether args run the root command itself, deciding a
// request, so that no other command need be built: each argument is one
// of the root's flags in its long form, or the value of the one before,
// and none asks for help or the version. Anything else, a command's name
// included, gets the whole tree.
func alone(root *cobra.Command, args []string) bool {
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		f := root.Flags().Lookup(name)
		if !strings.HasPrefix(args[i], "--") || f == nil || name == "version" {
			return false // -h and --help are not flags of the root until it runs
		}
		if !hasValue && f.NoOptDefVal == "" {
			i++ // the value is the next argument
		}
	}
	return true
}

// newRootCommand is the root command alone: askperm deciding a request.
func newRootCommand(s cli.Streams) *cobra.Command {
	root := (&askOptions{}).command(s, "askperm", "Ask a human before an AI agent's tool call runs")
	root.Long = rootLong
	root.SilenceUsage = true
	root.SilenceErrors = true
	// Help, the version and completion scripts are what was asked for:
	// stdout. A command that decides writes only its decision there. Set
	// before the completion command, which keeps the writer it is given.
	root.SetOut(s.Decision)
	root.SetErr(s.ErrOut)
	root.DisableAutoGenTag = true // the man pages carry no date
	root.SetVersionTemplate("askperm {{.Version}}\n")
	root.Flags().Bool("version", false, "print askperm's version and exit") // no -v: too near --verbose
	setExamples(root)
	return root
}

// addCommands gives root its other commands, and its version (reading the
// build information is needed only for --version and the version
// command, which never run alone).
func addCommands(s cli.Streams, root *cobra.Command) {
	root.Version = buildVersion()
	root.AddCommand((&askOptions{}).command(s, "ask", "Decide one request (the default command)"), newSchema(s), newRules(s), newSession(s),
		newLog(s), newSuggest(s), newCheck(s), newExplain(s), newDigest(s), newGate(s), newHook(s), newMCP(s), newPane(s), newVersion(s),
		newInstall(s), newDoctor(s), newInbox(s), newReview(s))
	root.InitDefaultCompletionCmd()
	setExamples(root)
}

// setExamples gives every command of the tree its example (examples).
func setExamples(c *cobra.Command) {
	if ex, ok := examples[c.CommandPath()]; ok && c.Example == "" {
		c.Example = ex
	}
	for _, sub := range c.Commands() {
		setExamples(sub)
	}
}

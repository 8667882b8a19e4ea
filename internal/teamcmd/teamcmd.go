// Package teamcmd owns askperm-team's command line: the NATS side of team
// mode, a program of its own so that askperm never links the NATS client
// (its start-up, and every decision, would pay for it). askperm runs its
// hidden `bridge` command for each request the team frontend asks, and
// hands it the team commands a person runs.
package teamcmd

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/team/wire"
)

// Main runs askperm-team with args and returns its exit status.
func Main(args []string) int {
	// Libraries that print to os.Stdout must never reach what the
	// commands write (a decision's bridge events, inbox list's lines).
	s := cli.Streams{In: os.Stdin, Decision: os.Stdout, ErrOut: os.Stderr, Getenv: os.Getenv}
	os.Stdout = os.Stderr
	return run(s, args)
}

// run runs askperm-team with args and returns its exit status, as
// askperm's command line does (an error on stderr, prefixed).
func run(s cli.Streams, args []string) int {
	root := newRoot(s)
	root.SetArgs(args)
	return cli.Status(s.ErrOut, root.Execute())
}

// Tree is askperm-team's command tree, for its man pages.
func Tree() *cobra.Command {
	return newRoot(cli.Streams{ErrOut: io.Discard, Getenv: func(string) string { return "" }})
}

func newRoot(s cli.Streams) *cobra.Command {
	// The hidden commands read and write askperm's pipes.
	var in io.Reader = s.In
	var out io.Writer = s.Decision
	root := &cobra.Command{
		Use:   "askperm-team",
		Short: "The NATS side of askperm's team mode",
		Long: `askperm-team carries askperm's team mode (protocol section 11) over
NATS JetStream. askperm runs it: a host's askperm for each request its
team frontend asks, and the team commands of askperm an approver runs.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(&cobra.Command{
		Use:    "bridge",
		Short:  "Carry one request of the team frontend (run by askperm)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// askperm ends the bridge by its stdin, or kills it; a signal
			// ends it as unrecorded.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return wire.Bridge(ctx, in, out)
		},
	})
	root.AddCommand(&cobra.Command{
		Use:    "rules-fetch",
		Short:  "Write the team's rules as JSON (run by askperm; the config as JSON on stdin)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return wire.RulesFetch(cmd.Context(), in, out)
		},
	})
	root.AddCommand(&cobra.Command{
		Use:    "audit-publish",
		Short:  "Publish an audit line on the team's audit stream (run by askperm; {config, line} on stdin)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return wire.AuditPublish(cmd.Context(), in)
		},
	})
	root.AddCommand(newInbox(s), newRules(s), newLog(s), newSetup(s))
	return root
}

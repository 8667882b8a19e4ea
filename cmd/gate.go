package cmd

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/gate"
	"github.com/askperm/askperm/internal/settings"
)

// gateOptions are the flags of askperm gate.
type gateOptions struct {
	decidingOptions
	name string
}

func newGate(s streams) *cobra.Command {
	o := &gateOptions{}
	c := &cobra.Command{
		Use:   "gate [flags] -- COMMAND [ARGS...]",
		Short: "Run an MCP server behind askperm: each tool call is decided before it reaches the server",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.AnswerSet = c.Flags().Changed("answer")
			return runGate(s, o, args)
		},
	}
	registerDeciding(c, &o.Flags, &o.verbose)
	c.Flags().StringVar(&o.name, "name", "", "the server's name in requests (default: the name the server gives)")
	return c
}

// runGate runs the gate and exits with the server's status.
func runGate(s streams, o *gateOptions, command []string) error {
	set, err := settings.Resolve(o.Flags, s.getenv)
	if err != nil {
		return usage("%v", err)
	}
	awayFromAgent(&set) // the MCP client that spawned the gate owns the terminal
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	code, err := gate.Run(ctx, gate.Config{
		Command: command, Name: o.name, Pipeline: newPipeline(s, set, o.verbose),
		In: s.in, Out: s.decision, Stderr: s.errOut,
	})
	switch {
	case err != nil:
		return &exitError{code: exitInternal, err: err}
	case code != 0:
		return &exitError{code: code}
	}
	return nil
}

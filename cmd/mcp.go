package cmd

import (
	"context"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/permtool"
	"github.com/askperm/askperm/internal/settings"
)

func newMCP(s cli.Streams) *cobra.Command {
	o := &decidingOptions{}
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve Claude Code's --permission-prompt-tool over MCP (stdio): the tool approve",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.AnswerSet = c.Flags().Changed("answer")
			return runMCP(s, o)
		},
	}
	registerDeciding(c, &o.Flags, &o.verbose)
	return c
}

// runMCP serves until the client closes stdin or a signal arrives.
func runMCP(s cli.Streams, o *decidingOptions) error {
	set, err := settings.Resolve(o.Flags, s.Getenv)
	if err != nil {
		return cli.Usage("%v", err)
	}
	awayFromAgent(&set)
	workdir, _ := os.Getwd() // unknown is fine: paths are then scoped without it
	ctx, stop := signal.NotifyContext(context.Background(), cli.EndingSignals...)
	defer stop()
	err = permtool.Serve(ctx, permtool.Config{
		Pipeline: newPipeline(s, set, o.verbose), Workdir: workdir, Version: buildVersion(),
	}, s.In, s.Decision)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	return nil
}

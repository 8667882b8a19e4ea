package cmd

import (
	"context"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/permtool"
	"github.com/askperm/askperm/internal/settings"
)

func newMCP(s streams) *cobra.Command {
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
func runMCP(s streams, o *decidingOptions) error {
	set, err := settings.Resolve(o.Flags, s.getenv)
	if err != nil {
		return usage("%v", err)
	}
	awayFromAgent(&set)
	workdir, _ := os.Getwd() // unknown is fine: paths are then scoped without it
	ctx, stop := signal.NotifyContext(context.Background(), endingSignals...)
	defer stop()
	err = permtool.Serve(ctx, permtool.Config{
		Pipeline: newPipeline(s, set, o.verbose), Workdir: workdir, Version: buildVersion(),
	}, s.in, s.decision)
	if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	return nil
}

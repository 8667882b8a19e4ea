package cmd

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/gate"
	"github.com/askperm/askperm/internal/settings"
)

// gateOptions are the flags of askperm gate.
type gateOptions struct {
	decidingOptions
	name string
}

func newGate(s cli.Streams) *cobra.Command {
	o := &gateOptions{}
	c := &cobra.Command{
		Use:   "gate [flags] -- COMMAND [ARGS...]",
		Short: "Run an MCP server behind askperm: each tool call is decided before it reaches the server",
		Long:  gateLong,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usage("gate: give the MCP server's command line after --: askperm gate [flags] -- COMMAND [ARGS...]")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.AnswerSet = c.Flags().Changed("answer")
			return runGate(s, o, args)
		},
	}
	registerDeciding(c, &o.Flags, &o.verbose)
	// Without --, the server's own flags are read as the gate's.
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return cli.Usage("gate: %v: put -- before the server's command line, as in askperm gate --rules r.toml -- npx -y server", err)
	})
	c.Flags().StringVar(&o.name, "name", "", "the server's name in requests and rules (default: from COMMAND, see above)")
	return c
}

const gateLong = `Run the MCP server COMMAND behind askperm: every message is relayed both
ways, and each tools/call is decided (rules, memory, canned answers, a
person) before it reaches the server. A tools/call before the server's
initialize answer has reached the client is refused with a JSON-RPC error.

The server is known in requests and rules by --name, else by a name taken
from COMMAND: the program's base name, and for a runner (node, nodejs,
bun, bunx, deno, npx, pnpx, python, python3, uv, uvx, pipx, ruby, perl,
php, java, go, sh, bash) a space and its first argument that is not a
flag (a leading "run" skipped), as written:

  npx -y @modelcontextprotocol/server-filesystem /p   npx @modelcontextprotocol/server-filesystem
  python3 -m mcp_server_git                           python3 mcp_server_git
  /opt/bin/mcp-fs /p                                  mcp-fs

Never the name the server gives itself in initialize: another server could
take a trusted one's name. That name is shown to the person as the
server's own words when it differs. Give --name when a runner's flags take
values (npx --package x y) or two servers share a command.`

// runGate runs the gate and exits with the server's status.
func runGate(s cli.Streams, o *gateOptions, command []string) error {
	set, err := settings.Resolve(o.Flags, s.Getenv)
	if err != nil {
		return cli.Usage("%v", err)
	}
	awayFromAgent(&set) // the MCP client that spawned the gate owns the terminal
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	code, err := gate.Run(ctx, gate.Config{
		Command: command, Name: o.name, Pipeline: newPipeline(s, set, o.verbose),
		In: s.In, Out: s.Decision, Stderr: s.ErrOut,
	})
	switch {
	case err != nil:
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	case code != 0:
		return &cli.ExitError{Code: code}
	}
	return nil
}

package teamcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

func newSetup(s cli.Streams) *cobra.Command {
	var config, creds string
	c := &cobra.Command{
		Use:   "setup",
		Short: "Create or update the team's streams and buckets (the set-up user, once)",
		Long: `askperm-team setup creates the team's streams and buckets on the server of
[team] in config.toml, or updates them to this version's settings: every
one refuses deletes, purges and rollups, and keeps its messages within set
sizes. It needs the set-up user's credentials (the setup block of
docs/team/nats.conf): hosts and approvers may not create or update streams,
and refuse one that is not as setup makes it.`,
		Example: `  askperm-team setup --creds ~/.config/askperm/team-setup.nk`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			set, err := settings.Resolve(settings.Flags{Config: config}, s.Getenv)
			if err != nil {
				return cli.Usage("%v", err)
			}
			if set.Team == nil {
				return cli.Usage("setup: no [team] in config.toml: give the team server's url")
			}
			c := *set.Team
			if creds != "" {
				c.Creds = creds
			}
			ctx, stop := cli.OnSignals(context.Background())
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, inboxWait)
			defer cancel()
			if err := wire.SetUp(ctx, c, team.SetupInbox); err != nil {
				return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("setup: %w", err)}
			}
			cli.Warn(s.ErrOut, "the team's streams and buckets are set up")
			return nil
		},
	}
	c.Flags().StringVar(&config, "config", "", "config file (env ASKPERM_CONFIG)")
	c.Flags().StringVar(&creds, "creds", "", "the set-up user's credentials (default: [team] creds)")
	return c
}

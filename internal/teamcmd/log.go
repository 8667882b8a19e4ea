package teamcmd

import (
	"bufio"
	"time"

	"encoding/json"
	"fmt"
	"github.com/spf13/cobra"
	"io"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team/wire"
)

// logOptions are the flags of askperm log --team.
type logOptions struct {
	memoryOptions
	cli.LogFilter
	team bool
}

// newLog is askperm log --team, which askperm hands to askperm-team (its
// own audit log it reads itself).
func newLog(s cli.Streams) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log --team",
		Short: "Show the team's decisions, from its audit stream",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if !o.team {
				return cli.Usage("log: give --team; askperm log is this machine's audit log")
			}
			q, err := o.Query(time.Now())
			if err != nil {
				return err
			}
			set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.Getenv)
			if err != nil {
				return cli.Usage("%v", err)
			}
			q.Skipped = func(err error) { fmt.Fprintf(s.ErrOut, "askperm: audit log: %v\n", err) }
			out := bufio.NewWriterSize(s.Decision, 64<<10)
			if err := writeTeamLog(out, set, q, o.json); err != nil {
				return err
			}
			return out.Flush()
		},
	}
	o.register(c)
	f := c.Flags()
	o.LogFilter.Register(c)
	f.BoolVar(&o.json, "json", false, "the entries as JSON lines")
	f.BoolVar(&o.team, "team", false, "the team's decisions, from its audit stream, of every host the credentials may read")
	return c
}

// teamEntry is a line of the team's audit stream: the audit log's
// entry, from host Host.
type teamEntry struct {
	Host string `json:"host"`
	state.AuditEntry
}

var teamLogColumns = append([]string{"HOST"}, cli.LogColumns...)

// writeTeamLog writes the team decisions of the audit stream that q
// keeps, from every host the credentials of set's [team] may read, to
// out as JSON lines (with their host) or a table like writeLog's, with
// the host first.
func writeTeamLog(out io.Writer, set settings.Settings, q state.AuditQuery, asJSON bool) error {
	if set.Team == nil {
		return cli.Usage("--team: no [team] in the config file (docs/team-memory.md)")
	}
	c := *set.Team
	tc, err := connectTeam(c)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team: %w", err)}
	}
	defer tc.close()
	var kept []teamEntry
	err = wire.ReadAudit(tc.ctx, tc.js, c.Names(), func(l wire.AuditLine) error {
		var e state.AuditEntry
		if err := json.Unmarshal(l.Line, &e); err != nil {
			q.Skipped(fmt.Errorf("a line from host %q: %w", l.Host, err))
			return nil
		}
		if e.Time.Before(q.Since) || !q.Keep(e) {
			return nil
		}
		if !asJSON {
			kept = append(kept, teamEntry{l.Host, e})
			return nil
		}
		b, err := json.Marshal(teamEntry{l.Host, e})
		if err != nil {
			return err
		}
		_, err = out.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team audit stream: %w", tc.why(err))}
	}
	if asJSON {
		return nil
	}
	return cli.StreamTable(out, teamLogColumns, func(_ bool, each func([]string) error) error {
		for _, e := range kept {
			if err := each(append([]string{cli.Dash(e.Host)}, cli.LogRow(e.AuditEntry)...)); err != nil {
				return err
			}
		}
		return nil
	})
}

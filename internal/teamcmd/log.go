package teamcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/form"
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
			flags := settings.Flags{StateDir: o.stateDir, Config: o.config}
			return o.Run(s, flags, time.Now(), func(out io.Writer, set settings.Settings, q state.AuditQuery) error {
				return writeTeamLog(out, s.ErrOut, set, q, o.json)
			})
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
// entry, from host Host, stored by the stream at Stored. The entry is
// the host's report, unsigned (its time, approver, decided_by); the
// host and Stored are the stream's.
type teamEntry struct {
	Host   string    `json:"host"`
	Stored time.Time `json:"stored"`
	state.AuditEntry
}

var teamLogColumns = append([]string{"HOST", "STORED"}, cli.LogColumns...)

// writeTeamLog writes the team decisions of the audit stream that q
// keeps, from every host the credentials of set's [team] may read, to
// out as JSON lines (with their host) or a table like writeLog's, with
// the host first. Another host wrote each line: text in it not rendered
// safe (as its audit log renders it) is rendered here (shown), and the
// lines that held some are counted on errOut.
func writeTeamLog(out, errOut io.Writer, set settings.Settings, q state.AuditQuery, asJSON bool) error {
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
	var raw []string // the hosts of the lines rendered here, one per line
	err = wire.ReadAudit(tc.ctx, tc.js, c.Names(), func(l wire.AuditLine) error {
		host, safeHost := cli.Shown(l.Host)
		e, safe, err := shown(l.Line)
		if !safe || !safeHost {
			raw = append(raw, host)
		}
		if err != nil {
			q.Skipped(fmt.Errorf("a line from host %s: %s", host, form.Line(err.Error())))
			return nil
		}
		// --since by the stream's time: a host may write any time it likes.
		if l.Stored.Before(q.Since) || !q.Keep(e) {
			return nil
		}
		if !asJSON {
			kept = append(kept, teamEntry{host, l.Stored, e})
			return nil
		}
		b, err := json.Marshal(teamEntry{host, l.Stored, e})
		if err != nil {
			return err
		}
		_, err = out.Write(append(b, '\n'))
		return err
	})
	if len(raw) > 0 {
		slices.Sort(raw)
		cli.Warn(errOut, fmt.Sprintf("audit stream: %d lines held text not rendered safe (from %s); shown rendered", len(raw), strings.Join(slices.Compact(raw), ", ")))
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team audit stream: %w", tc.why(err))}
	}
	if asJSON {
		return nil
	}
	return cli.StreamTable(out, teamLogColumns, func(_ bool, each func([]string) error) error {
		for _, e := range kept {
			if err := each(append([]string{cli.Dash(e.Host), e.Stored.Local().Format(time.DateTime)}, cli.LogRow(e.AuditEntry)...)); err != nil {
				return err
			}
		}
		return nil
	})
}

// shown is line, an audit line of the team's stream, with every text in
// it (each member's name and string value) as cli.Shown shows it; false
// when any was not rendered safe.
func shown(line []byte) (state.AuditEntry, bool, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return state.AuditEntry{}, false, err
	}
	safe := true
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			s, ok := cli.Shown(v)
			safe = safe && ok
			return s
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[walk(k).(string)] = walk(x)
			}
			return out
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return state.AuditEntry{}, safe, err
	}
	var e state.AuditEntry
	err = json.Unmarshal(b, &e)
	return e, safe, err
}

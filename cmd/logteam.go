package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
)

// teamEntry is a line of the team's audit stream: the audit log's
// entry, from host Host.
type teamEntry struct {
	Host string `json:"host"`
	state.AuditEntry
}

var teamLogColumns = append([]string{"HOST"}, logColumns...)

// writeTeamLog writes the team decisions of the audit stream that q
// keeps, from every host the credentials of set's [team] may read, to
// out as JSON lines (with their host) or a table like writeLog's, with
// the host first.
func writeTeamLog(out io.Writer, set settings.Settings, q state.AuditQuery, asJSON bool) error {
	if set.Team == nil {
		return usage("--team: no [team] in the config file (docs/team-memory.md)")
	}
	c := *set.Team
	tc, err := connectTeam(c)
	if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("team: %w", err)}
	}
	defer tc.close()
	var kept []teamEntry
	err = team.ReadAudit(tc.ctx, tc.js, c.Names(), func(l team.AuditLine) error {
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
		return &exitError{code: exitInternal, err: fmt.Errorf("team audit stream: %w", tc.why(err))}
	}
	if asJSON {
		return nil
	}
	return streamTable(out, teamLogColumns, func(_ bool, each func([]string) error) error {
		for _, e := range kept {
			if err := each(append([]string{dash(e.Host)}, logRow(e.AuditEntry)...)); err != nil {
				return err
			}
		}
		return nil
	})
}

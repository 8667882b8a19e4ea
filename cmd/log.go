package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
)

// logOptions are the flags of askperm log.
type logOptions struct {
	memoryOptions
	session, since, decision, tool string
	team                           bool
}

// query is the filter the flags describe, checked once.
func (o *logOptions) query(now time.Time) (state.AuditQuery, error) {
	var q state.AuditQuery
	if o.since != "" {
		if d, err := settings.ParseDuration(o.since); err == nil {
			q.Since = now.Add(-d)
		} else if q.Since, err = time.Parse(time.RFC3339, o.since); err != nil {
			return q, usage("--since: %q is neither a duration (1h, 30m) nor a time (2026-12-01T08:00:00Z)", o.since)
		}
	}
	if o.decision != "" && o.decision != "allow" && o.decision != "deny" {
		return q, usage("--decision: %q is neither allow nor deny", o.decision)
	}
	q.Keep = func(e state.AuditEntry) bool {
		return (o.session == "" || e.SessionID == o.session) &&
			(o.decision == "" || e.Decision == o.decision) && (o.tool == "" || e.Tool == o.tool)
	}
	return q, nil
}

func newLog(s streams) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log",
		Short: "Show the audit log: every decision askperm made",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			q, err := o.query(time.Now())
			if err != nil {
				return err
			}
			set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.getenv)
			if err != nil {
				return usage("%v", err)
			}
			if set.StateDir == "" {
				return usage("no state directory: set XDG_STATE_HOME or HOME, or give --state-dir")
			}
			q.Skipped = func(err error) { fmt.Fprintf(s.errOut, "askperm: audit log: %v\n", err) }
			out := bufio.NewWriterSize(s.decision, 64<<10)
			if o.team {
				if err := writeTeamLog(out, set, q, o.json); err != nil {
					return err
				}
				return out.Flush()
			}
			if err := writeLog(out, set.StateDir, q, o.json); err != nil {
				return &exitError{code: exitInternal, err: fmt.Errorf("audit log: %w", err)}
			}
			return out.Flush()
		},
	}
	o.register(c)
	f := c.Flags()
	f.StringVar(&o.session, "session", "", "only this session's decisions")
	f.StringVar(&o.since, "since", "", "only decisions since this long ago (1h) or this time (RFC 3339)")
	f.StringVar(&o.decision, "decision", "", "only allow or only deny")
	f.StringVar(&o.tool, "tool", "", "only this tool's decisions")
	f.BoolVar(&o.json, "json", false, "the entries as JSON lines")
	f.BoolVar(&o.team, "team", false, "the team's decisions, from its audit stream, of every host the credentials may read")
	must(c.RegisterFlagCompletionFunc("decision", fixed("allow", "deny")))
	return c
}

// logColumns are the table's headings; every row has as many cells.
var logColumns = []string{"TIME", "DECISION", "CAUSE", "BY", "SESSION", "TOOL", "ACTION", "VALUES"}

// writeLog writes the entries of the audit log in dir that q keeps to out,
// as JSON lines or as a table (which reads the log twice).
func writeLog(out io.Writer, dir string, q state.AuditQuery, asJSON bool) error {
	if asJSON {
		return state.ScanAudit(dir, q, func(e state.AuditEntry) error {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			_, err = out.Write(append(b, '\n'))
			return err
		})
	}
	return streamTable(out, logColumns, func(measuring bool, each func([]string) error) error {
		q := q
		if !measuring {
			q.Skipped = nil // told of once, when measuring
		}
		return state.ScanAudit(dir, q, func(e state.AuditEntry) error { return each(logRow(e)) })
	})
}

// logRow is the table's row for e.
func logRow(e state.AuditEntry) []string {
	var values []string
	for _, v := range e.Dimensions {
		values = append(values, v)
	}
	sort.Strings(values)
	by := string(e.Frontend)
	if len(e.DecidedBy) > 0 {
		by += " (" + strings.Join(e.DecidedBy, ", ") + ")"
	}
	verdict := e.Decision
	if e.Persist != "once" {
		verdict += " " + e.Persist
	}
	if e.Stop {
		verdict += " stop"
	}
	if e.NotRemembered != "" {
		verdict += " (not remembered)"
	}
	return []string{e.Time.Local().Format(time.DateTime), verdict, string(e.Cause), by,
		dash(e.SessionID), dash(e.Tool), e.Action, dash(strings.Join(values, " "))}
}

package cmd

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
)

// logOptions are the flags of askperm log.
type logOptions struct {
	memoryOptions
	session, since, decision, tool string
}

// keep is the filter the flags describe, checked once.
func (o *logOptions) keep(now time.Time) (func(state.AuditEntry) bool, error) {
	var since time.Time
	if o.since != "" {
		if d, err := settings.ParseDuration(o.since); err == nil {
			since = now.Add(-d)
		} else if since, err = time.Parse(time.RFC3339, o.since); err != nil {
			return nil, usage("--since: %q is neither a duration (1h, 30m) nor a time (2026-12-01T08:00:00Z)", o.since)
		}
	}
	if o.decision != "" && o.decision != "allow" && o.decision != "deny" {
		return nil, usage("--decision: %q is neither allow nor deny", o.decision)
	}
	return func(e state.AuditEntry) bool {
		return (o.session == "" || e.SessionID == o.session) && !e.Time.Before(since) &&
			(o.decision == "" || e.Decision == o.decision) && (o.tool == "" || e.Tool == o.tool)
	}, nil
}

func newLog(s streams) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log",
		Short: "Show the audit log: every decision askperm made",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			keep, err := o.keep(time.Now())
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
			entries, err := state.ReadAudit(set.StateDir, keep)
			if err != nil {
				return &exitError{code: exitInternal, err: fmt.Errorf("audit log: %w", err)}
			}
			sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time.Before(entries[j].Time) })
			if o.json {
				for _, e := range entries {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					if _, err := s.decision.Write(append(b, '\n')); err != nil {
						return err
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(s.decision, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIME\tDECISION\tCAUSE\tBY\tSESSION\tTOOL\tACTION\tVALUES")
			for _, e := range entries {
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
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), verdict, e.Cause, by,
					dash(e.SessionID), dash(e.Tool), e.Action, dash(strings.Join(values, " ")))
			}
			return w.Flush()
		},
	}
	o.register(c)
	f := c.Flags()
	f.StringVar(&o.session, "session", "", "only this session's decisions")
	f.StringVar(&o.since, "since", "", "only decisions since this long ago (1h) or this time (RFC 3339)")
	f.StringVar(&o.decision, "decision", "", "only allow or only deny")
	f.StringVar(&o.tool, "tool", "", "only this tool's decisions")
	f.BoolVar(&o.json, "json", false, "the entries as JSON lines")
	must(c.RegisterFlagCompletionFunc("decision", fixed("allow", "deny")))
	return c
}

package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/stats"
)

// statsUsage is the help of askperm log --stats.
const statsUsage = "instead of the entries, their figures: prompts a day, the share a person approved, the time a person took (median, p90), per tool and per server, what decided, the breaker's stops (--since also takes days: 30d)"

// logStats writes the figures of the entries of the audit log that o's
// filters keep, as text tables or JSON (stats.Stats).
func logStats(s cli.Streams, o logOptions, now time.Time) error {
	dir, err := stateDirOf(o.memoryOptions, s)
	if err != nil {
		return err
	}
	since, err := parseSince(o.Since, now)
	if o.Since == "" {
		since, err = time.Time{}, nil
	}
	if err != nil {
		return err
	}
	o.Since = "" // parsed above, days too
	q, err := o.Query(now)
	if err != nil {
		return err
	}
	q.Since = since
	q.Skipped = func(err error) { fmt.Fprintf(s.ErrOut, "askperm: audit log: %v\n", err) }
	c := stats.New(since, now)
	if err := state.ScanAudit(dir, q, func(e state.AuditEntry) error { c.Add(e); return nil }); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("audit log: %w", err)}
	}
	if o.json {
		return json.NewEncoder(s.Decision).Encode(c.Stats())
	}
	return writeStats(s.Decision, c.Stats())
}

// writeStats writes s as text: the totals, then a table of what decided,
// of the tools and of the servers. Their names are the log's, written by
// requests: rendered safe (form.Line).
func writeStats(out io.Writer, s stats.Stats) error {
	fmt.Fprintf(out, "from %s to %s (%.1f days): %d decisions\n", s.From.Local().Format(time.DateTime), s.To.Local().Format(time.DateTime), s.Days, s.Decisions)
	fmt.Fprintf(out, "prompts: %d (%.1f a day); decided by a person: %d, approved %s; time to decide: median %s, p90 %s\n",
		s.Prompts, s.PerDay, s.ByPerson, percent(s.Figures), seconds(s.MedianMS), seconds(s.P90MS))
	fmt.Fprintf(out, "breaker stops: %d\n\n", s.Stops)
	var by [][]string
	for _, k := range slices.Sorted(mapKeys(s.DecidedBy)) {
		by = append(by, []string{form.Line(k), strconv.Itoa(s.DecidedBy[k])})
	}
	if err := rowsTable(out, []string{"DECIDED BY", "DECISIONS"}, by); err != nil {
		return err
	}
	for _, t := range []struct {
		heading string
		rows    []stats.Row
	}{{"TOOL", s.Tools}, {"SERVER", s.Servers}} {
		var rows [][]string
		for _, r := range t.rows {
			rows = append(rows, []string{cli.Dash(form.Line(r.Name)), strconv.Itoa(r.Prompts), fmt.Sprintf("%.1f", r.PerDay),
				strconv.Itoa(r.ByPerson), percent(r.Figures), seconds(r.MedianMS), seconds(r.P90MS)})
		}
		io.WriteString(out, "\n")
		if err := rowsTable(out, []string{t.heading, "PROMPTS", "A DAY", "BY PERSON", "APPROVED", "MEDIAN", "P90"}, rows); err != nil {
			return err
		}
	}
	return nil
}

// rowsTable writes a table of rows held in memory.
func rowsTable(out io.Writer, heading []string, rows [][]string) error {
	return cli.StreamTable(out, heading, func(_ bool, each func([]string) error) error {
		for _, r := range rows {
			if err := each(r); err != nil {
				return err
			}
		}
		return nil
	})
}

func percent(f stats.Figures) string {
	if f.ByPerson == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f.Share)
}

func seconds(ms int64) string { return fmt.Sprintf("%.1fs", float64(ms)/1000) }

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

package cmd

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
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
	team, stats                    bool
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
			if o.stats {
				return logStats(s, *o, time.Now())
			}
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
	f.BoolVar(&o.stats, "stats", false, statsUsage)
	must(c.RegisterFlagCompletionFunc("decision", fixed("allow", "deny")))
	return c
}

// logColumns are the table's headings; every row has as many cells.
var logColumns = []string{"TIME", "DECISION", "CAUSE", "BY", "SESSION", "TOOL", "ACTION", "VALUES"}

// writeLog writes the entries of the audit log in dir that q keeps to out,
// as JSON lines or as a table. The table's rows are spooled while its
// columns are measured, so a log too big to hold is still read once (and
// the rows written are the rows measured); without a spool it is read
// again.
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
	spool := &rowSpool{}
	defer spool.close()
	return streamTable(out, logColumns, func(measuring bool, each func([]string) error) error {
		if !measuring {
			if ok, err := spool.replay(each); ok {
				return err
			}
		}
		q := q
		if !measuring {
			q.Skipped = nil // told of once, when measuring
		}
		return state.ScanAudit(dir, q, func(e state.AuditEntry) error {
			cells := logRow(e)
			if measuring {
				spool.add(cells)
			}
			return each(cells)
		})
	})
}

// rowSpool keeps table rows in memory up to spoolBuffer, then in an
// unlinked temporary file (mode 0600): each row the number of its cells
// and their lengths (uvarints), then their bytes. Failing to keep a row
// drops the spool, and the caller makes the rows again.
type rowSpool struct {
	buf     []byte
	f       *os.File
	dropped bool
}

// spoolBuffer is how much of the spool is held before it goes to a file.
const spoolBuffer = 64 << 10

// add keeps cells, or drops the spool.
func (s *rowSpool) add(cells []string) {
	if s.dropped {
		return
	}
	s.buf = binary.AppendUvarint(s.buf, uint64(len(cells)))
	for _, c := range cells {
		s.buf = binary.AppendUvarint(s.buf, uint64(len(c)))
	}
	for _, c := range cells {
		s.buf = append(s.buf, c...)
	}
	if len(s.buf) >= spoolBuffer && s.flush() != nil {
		s.dropped, s.buf = true, nil
	}
}

// flush moves the held rows to the file, creating it the first time.
func (s *rowSpool) flush() error {
	if s.f == nil {
		f, err := os.CreateTemp("", "askperm-log-*")
		if err != nil {
			return err
		}
		s.f = f
		if err := os.Remove(f.Name()); err != nil {
			return err
		}
	}
	_, err := s.f.Write(s.buf)
	s.buf = s.buf[:0]
	return err
}

// replay calls each with the rows kept, in order, and returns its first
// error; ok is false if the spool was dropped, nothing replayed.
func (s *rowSpool) replay(each func([]string) error) (ok bool, err error) {
	if s.dropped {
		return false, nil
	}
	var r *bufio.Reader
	if s.f == nil {
		r = bufio.NewReader(bytes.NewReader(s.buf))
	} else {
		if err := s.flush(); err != nil {
			return true, err
		}
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return true, err
		}
		r = bufio.NewReaderSize(s.f, spoolBuffer)
	}
	var cells []string
	var lens []int
	var text []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return true, nil
		}
		lens = lens[:0]
		total := 0
		for i := uint64(0); i < n && err == nil; i++ {
			var l uint64
			l, err = binary.ReadUvarint(r)
			lens, total = append(lens, int(l)), total+int(l)
		}
		if err != nil {
			return true, fmt.Errorf("table spool: %w", err)
		}
		text = slices.Grow(text[:0], total)[:total]
		if _, err := io.ReadFull(r, text); err != nil {
			return true, fmt.Errorf("table spool: %w", err)
		}
		row := string(text) // one allocation a row; the cells share it
		cells = cells[:0]
		for _, l := range lens {
			cells, row = append(cells, row[:l]), row[l:]
		}
		if err := each(cells); err != nil {
			return true, err
		}
	}
}

// close removes the spool's file.
func (s *rowSpool) close() {
	if s.f != nil {
		s.f.Close()
	}
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

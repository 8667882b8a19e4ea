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
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
)

// logOptions are the flags of askperm log.
type logOptions struct {
	memoryOptions
	cli.LogFilter
	team, stats bool
}

func newLog(s cli.Streams) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log",
		Short: "Show the audit log: every decision askperm made",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if o.stats {
				return logStats(s, *o, time.Now())
			}
			if o.team {
				return forwardToTeam(s, o.config, teamArgs(c, args))
			}
			flags := settings.Flags{StateDir: o.stateDir, Config: o.config}
			return o.Run(s, flags, time.Now(), func(out io.Writer, set settings.Settings, q state.AuditQuery) error {
				if set.StateDir == "" {
					return cli.Usage("no state directory: set XDG_STATE_HOME or HOME, or give --state-dir")
				}
				if err := writeLog(out, set.StateDir, q, o.json); err != nil {
					return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("audit log: %w", err)}
				}
				return nil
			})
		},
	}
	o.register(c)
	f := c.Flags()
	o.LogFilter.Register(c)
	f.BoolVar(&o.json, "json", false, "the entries as JSON lines")
	f.BoolVar(&o.team, "team", false, "the team's decisions, from its audit stream, of every host the credentials may read (runs askperm-team)")
	f.BoolVar(&o.stats, "stats", false, statsUsage)
	return c
}

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
	return cli.StreamTable(out, cli.LogColumns, func(measuring bool, each func([]string) error) error {
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
			cells := cli.LogRow(e)
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

// Package cli holds what askperm's and askperm-team's command lines share:
// the standard streams, exit statuses and errors, diagnostics, signals,
// tables, JSON output and flag completion.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// Exit codes (protocol.md section 1).
const (
	ExitOK        = 0
	ExitDeny      = 1 // --exit-status only
	ExitTakenOver = 1 // askperm pane only: another process took over its announcement
	ExitUsage     = 64
	ExitRequest   = 65
	ExitNoMatch   = 69
	ExitInternal  = 70
	ExitTimeout   = 124 // --exit-status only
	ExitCancel    = 130 // --exit-status only
)

// Streams are the process's standard streams. Only the decision writer
// ever reaches the real stdout.
type Streams struct {
	In       *os.File
	Decision *os.File
	ErrOut   io.Writer
	Getenv   func(string) string
}

// ExitError carries an exit status out of a cobra command.
type ExitError struct {
	Code int
	Err  error // printed on stderr when not nil
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Status is the exit status of a command that returned err: an
// ExitError's, its message said on errOut; cobra's own errors (unknown
// flags, bad arguments) are usage errors.
func Status(errOut io.Writer, err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		if ee.Err != nil {
			Warn(errOut, ee.Err.Error())
		}
		return ee.Code
	default:
		Warn(errOut, err.Error())
		return ExitUsage
	}
}

// WriteList writes what items gives to out, one JSON array when asJSON,
// else a table of heading and each one's row; a failure to write is
// ExitInternal.
func WriteList[T any](out io.Writer, asJSON bool, heading []string, row func(T) []string, items func(func(T) error) error) error {
	w := bufio.NewWriterSize(out, 64<<10)
	var err error
	if asJSON {
		err = WriteJSONArray(w, items)
	} else {
		err = WriteTable(w, heading, row, items)
	}
	if err = errors.Join(err, w.Flush()); err != nil {
		return &ExitError{Code: ExitInternal, Err: err}
	}
	return nil
}

// Warn writes a diagnostic on stderr, each of its lines prefixed.
func Warn(w io.Writer, msg string) {
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(w, "askperm: %s\n", line)
	}
}

// Usage is an exit-64 error.
func Usage(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// WriteJSON writes v to out as one line of JSON.
func WriteJSON(out io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// WriteTable writes what items gives as a table of heading and each
// one's row.
func WriteTable[T any](out io.Writer, heading []string, row func(T) []string, items func(func(T) error) error) error {
	return StreamTable(out, heading, func(_ bool, emit func([]string) error) error {
		return items(func(it T) error { return emit(row(it)) })
	})
}

// WriteJSONArray writes what each gives as one JSON array, as WriteJSON
// writes a slice of it, one element at a time.
func WriteJSONArray[T any](out io.Writer, each func(func(T) error) error) error {
	sep := "["
	err := each(func(v T) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		io.WriteString(out, sep)
		sep = ","
		_, err = out.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if sep == "[" {
		io.WriteString(out, sep)
	}
	_, err = io.WriteString(out, "]\n")
	return err
}

func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Fixed completes a flag from a Fixed list of values.
func Fixed(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

// Must panics on an error of a flag's registration: a misspelt flag name,
// a programming error every test run finds.
func Must(err error) {
	if err != nil {
		panic(err)
	}
}

// EndingSignals end a helper: the requests it is deciding are denied as
// cancelled.
var EndingSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// OnSignals returns ctx, cancelled by the first of EndingSignals. Their
// handlers are installed before it returns, before the request is read: a
// signal at any moment of a request ends it with a deny (a caller such as
// Claude Code runs the call when its hook dies without an answer), and
// nothing changes a terminal or starts a dialog unhandled.
func OnSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, EndingSignals...)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, cancel
}

// TableHeld is how many bytes of rows (cells and their headers)
// StreamTable holds from measuring to writing, sparing a table that small
// the second call of rows.
const TableHeld = 4 << 20

// StreamTable writes a table of heading and the rows rows gives, laid out
// byte for byte as tabwriter (minwidth 0, padding 2, spaces) lays out the
// whole table, without holding more than TableHeld of it: rows is called
// first to measure each column's widest cell (measuring is true), then,
// unless the rows were held, again to write.
func StreamTable(out io.Writer, heading []string, rows func(measuring bool, each func(cells []string) error) error) error {
	widths := make([]int, len(heading)-1)
	irregular := false
	var held [][]string
	size, overflow := 0, false
	measure := func(cells []string) error {
		for i, c := range cells {
			irregular = irregular || strings.ContainsAny(c, "\t\n\v\f\xff")
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
			size += len(c) + 16
		}
		size += 24
		if overflow = overflow || size > TableHeld; overflow {
			held = nil
		} else {
			held = append(held, cells)
		}
		return nil
	}
	measure(heading)
	if err := rows(true, measure); err != nil {
		return err
	}
	write := func(cells []string) error {
		for i, c := range cells[:len(widths)] {
			io.WriteString(out, c)
			io.WriteString(out, strings.Repeat(" ", max(widths[i]-utf8.RuneCountInString(c), 0)+2))
		}
		_, err := io.WriteString(out, cells[len(widths)]+"\n")
		return err
	}
	if irregular {
		// A cell holding what tabwriter reads as a cell or line break or
		// an escape: tabwriter lays that out, holding the table.
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		defer w.Flush()
		write = func(cells []string) error {
			_, err := io.WriteString(w, strings.Join(cells, "\t")+"\n")
			return err
		}
	}
	if overflow {
		if err := write(heading); err != nil {
			return err
		}
		return rows(false, write)
	}
	for _, cells := range held {
		if err := write(cells); err != nil {
			return err
		}
	}
	return nil
}

package cmd

import (
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// streamTable writes a table of heading and the rows rows gives, laid out
// byte for byte as tabwriter (minwidth 0, padding 2, spaces) lays out the
// whole table, without holding it: rows is called twice, first to measure
// each column's widest cell (measuring is true), then to write.
func streamTable(out io.Writer, heading []string, rows func(measuring bool, each func(cells []string) error) error) error {
	widths := make([]int, len(heading)-1)
	irregular := false
	measure := func(cells []string) error {
		for i, c := range cells {
			irregular = irregular || strings.ContainsAny(c, "\t\n\v\f\xff")
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
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
	if err := write(heading); err != nil {
		return err
	}
	return rows(false, write)
}

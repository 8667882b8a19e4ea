package cmd

import (
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// tableHeld is how many bytes of rows (cells and their headers)
// streamTable holds from measuring to writing, sparing a table that small
// the second call of rows.
const tableHeld = 4 << 20

// streamTable writes a table of heading and the rows rows gives, laid out
// byte for byte as tabwriter (minwidth 0, padding 2, spaces) lays out the
// whole table, without holding more than tableHeld of it: rows is called
// first to measure each column's widest cell (measuring is true), then,
// unless the rows were held, again to write.
func streamTable(out io.Writer, heading []string, rows func(measuring bool, each func(cells []string) error) error) error {
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
		if overflow = overflow || size > tableHeld; overflow {
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

package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
)

// The request pane. bubbletea cuts lines wider than the window without a
// trace, so everything here is wrapped to the width first. Column 0 belongs
// to askperm: labels start there, the continuation of a wrapped value is
// indented, and every line of multi-line request text starts with the
// gutter, so request text can never pass for a label.

const hangIndent = "  "

// tuiRequestText is the request's summary and details, wrapped to width.
func tuiRequestText(st tuiStyles, f *form.Form, width int) string {
	var lines []string
	for _, fl := range f.Summary() {
		if fl.Multiline {
			lines = append(lines, labelledLines(st, fl.Label+":", "", width)...)
			lines = append(lines, gutterLines(st, fl.Value, width)...)
			continue
		}
		lines = append(lines, labelledLines(st, fl.Label+":", fl.Value, width)...)
	}
	for _, p := range f.Details() {
		lines = append(lines, labelledLines(st, "Detail:", p.Heading(), width)...)
		lines = append(lines, gutterLines(st, p.Text, width)...)
		if w := p.Warning(); w != "" {
			lines = append(lines, st.warn.Render(wrapCells(w, width)))
		}
	}
	return strings.Join(lines, "\n")
}

// labelledLines is "label value" with a hanging indent, the label in
// bold when it fits on the first line.
func labelledLines(st tuiStyles, label, value string, width int) []string {
	text := label
	if value != "" {
		text += " " + value
	}
	lines := hangingLines(text, width)
	if rest, ok := strings.CutPrefix(lines[0], label); ok {
		lines[0] = st.bold.Render(label) + rest
	}
	return lines
}

// hangingLines wraps a single-line text to width, indenting every line after
// the first.
func hangingLines(text string, width int) []string {
	lines := strings.Split(wrapCells(text, width-len(hangIndent)), "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = hangIndent + lines[i]
	}
	return lines
}

// gutterLines wraps multi-line request text (tabs and newlines kept as layout)
// and starts each line with form's gutter.
func gutterLines(st tuiStyles, text string, width int) []string {
	var wrapped []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		wrapped = append(wrapped, wrapCells(form.ExpandTabs(l), width-2))
	}
	lines := strings.Split(form.Gutter(strings.Join(wrapped, "\n")), "\n")
	for i, l := range lines {
		lines[i] = st.faint.Render("│") + strings.TrimPrefix(l, "│")
	}
	return lines
}

// wrapCells wraps text to width cells, at spaces where it can.
func wrapCells(text string, width int) string {
	return ansi.Wrap(text, max(1, width), "")
}

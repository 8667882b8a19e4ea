package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
)

// The request as text. bubbletea cuts lines wider than the window without
// a trace, and a terminal left to wrap a line starts its tail at column 0,
// so everything here is wrapped to the width first. Column 0 belongs to
// askperm: its labels start there; every further line of a labelled value
// and every line of multi-line text starts with the gutter. Request text
// can never pass for a label.
//
// The facts are what a rule matches or the decision binds: server, tool,
// source, action, every dimension's value, the workdir, the grants. They
// stay in a fixed part of the screen. Everything else the request says of
// itself (title, descriptions, hints, the stated reason, the arguments,
// details) is the agent's words, each marked so, in a pane that scrolls.

// The gutter starts every line that continues request text.
const (
	gutterMark  = "│"
	gutterWidth = 2 // the mark and a space
)

// headlineMark starts the headline, askperm's question, at column 0.
const headlineMark = "» "

// factLines are the request's facts at width, under the headline: the
// question in one line, built by askperm from the request's structure.
// They list up to commands commands of each command line.
func factLines(st tuiStyles, f *form.Form, width, commands int) []string {
	ls := continued(st, headlineMark+f.Headline(), width)
	for i, l := range ls {
		if rest, ok := strings.CutPrefix(l, headlineMark); ok {
			ls[i] = st.headline + st.bold.Render(rest)
		} else if rest, ok := strings.CutPrefix(l, st.gutter); ok {
			ls[i] = st.gutter + st.bold.Render(rest)
		}
	}
	for _, fl := range f.FactsUpTo(commands) {
		ls = append(ls, fieldLines(st, fl, width)...)
	}
	return ls
}

// fieldLines are a field of the facts at width: "label: value", then
// each of its items on a row of its own (form.ItemIndent, askperm's marks
// first), every further row of a wrapped item behind the gutter.
func fieldLines(st tuiStyles, fl form.Field, width int) []string {
	ls := labelled(st, fl.Label, fl.Value, width)
	for _, it := range fl.Items {
		ls = append(ls, continued(st, form.ItemIndent+it, width)...)
	}
	return ls
}

// wordsLines are the agent's words at width: each under a label of
// askperm's on a line of its own, every line of text behind the gutter.
func wordsLines(st tuiStyles, f *form.Form, width int) []string {
	var ls []string
	for _, fl := range f.AgentWords() {
		ls = append(ls, labelled(st, fl.Label, "", width)...)
		ls = append(ls, gutterLines(st, fl.Value, width)...)
	}
	for _, p := range f.Details() {
		ls = append(ls, labelled(st, "Detail"+form.AgentsWords, p.Heading(), width)...)
		lines := textLines(p.Text)
		kinds := diffKinds(lines)
		for i, l := range lines {
			ls = append(ls, textRows(st, l, kindOf(kinds, i), width)...)
		}
		if w := p.Warning(); w != "" {
			ls = append(ls, st.warn.Render(wrapCells(w, width)))
		}
	}
	return ls
}

// labelled is "label: value" wrapped to width, the label in bold when it
// fits on the first line, every further line behind the gutter. An empty
// value leaves "label:".
func labelled(st tuiStyles, label, value string, width int) []string {
	text := label + ":"
	if value != "" {
		text += " " + value
	}
	lines := continued(st, text, width)
	if rest, ok := strings.CutPrefix(lines[0], label+":"); ok {
		lines[0] = st.bold.Render(label+":") + rest
	}
	return lines
}

// continued wraps a single line of text holding request text to width,
// every line after the first behind the gutter.
func continued(st tuiStyles, text string, width int) []string {
	lines := wrapLines(text, width-gutterWidth)
	for i := 1; i < len(lines); i++ {
		lines[i] = st.gutter + lines[i]
	}
	return lines
}

// gutterLines wraps multi-line text (tabs and newlines kept as layout)
// and starts each line with the gutter.
func gutterLines(st tuiStyles, text string, width int) []string {
	var lines []string
	for _, l := range textLines(text) {
		lines = append(lines, textRows(st, l, diffContext, width)...)
	}
	return lines
}

// textLines are the lines of multi-line text rendered safe.
func textLines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// textRows is one line of multi-line text wrapped to width, each piece
// behind the gutter and painted as a diff line of kind k.
func textRows(st tuiStyles, line string, k diffKind, width int) []string {
	rows := wrapLines(form.ExpandTabs(line), width-gutterWidth)
	for i, r := range rows {
		rows[i] = st.gutter + st.paint(k, r)
	}
	return rows
}

// kindOf is line i's kind of diff line; kinds is nil for text that is no
// diff.
func kindOf(kinds []diffKind, i int) diffKind {
	if kinds == nil {
		return diffContext
	}
	return kinds[i]
}

// hanging wraps askperm's own text to width, indenting every line after
// the first.
func hanging(text string, width int) []string {
	lines := wrapLines(text, width-2)
	for i := 1; i < len(lines); i++ {
		lines[i] = "  " + lines[i]
	}
	return lines
}

// wrapLines wraps text to width cells, at spaces where it can.
func wrapLines(text string, width int) []string {
	return strings.Split(wrapCells(text, width), "\n")
}

func wrapCells(text string, width int) string {
	return ansi.Wrap(text, max(1, width), "")
}

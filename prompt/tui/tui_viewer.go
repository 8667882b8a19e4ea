package tui

import (
	"fmt"
	"strings"

	"github.com/askperm/askperm/form"
)

// viewer is askperm's own full-screen view of every command of each
// command line (the facts list form.MaxFactCommands of each), then of the
// agent's words with every detail in full, where the pane shows at most
// form.PreviewChars characters of each. Its text is rendered safe (form.Block, form.Line)
// and wrapped by askperm behind the gutter, as in the pane; no pager or
// other program ever sees it. A detail can be a mebibyte of one line or
// of a hundred thousand: the viewer renders the text once, cuts it into
// lines, and wraps only the lines it draws (each once per width), so a
// key costs what the rows on the screen cost.
type viewer struct {
	st       tuiStyles
	lines    []viewLine
	commands bool // it lists commands

	width int
	rows  map[int][]string // a line's rows at width
	top   int              // the line drawn first
	sub   int              // the first of its rows drawn
	shown int              // rows of text the last frame drew
}

// viewLine is a line of the viewer: one of askperm's labels (label set,
// text its request-derived value), an item of a list under its label
// (item set) or a line of request text.
type viewLine struct {
	label string
	text  string
	item  bool
	kind  diffKind
}

// newViewer lays out f's commands, then its words with its details in
// full.
func newViewer(st tuiStyles, f *form.Form) *viewer {
	v := &viewer{st: st}
	for _, fl := range f.CommandLists() {
		v.commands = true
		v.lines = append(v.lines, viewLine{label: fl.Label, text: fl.Value})
		for _, it := range fl.Items {
			v.lines = append(v.lines, viewLine{text: it, item: true})
		}
	}
	for _, fl := range f.AgentWords() {
		v.lines = append(v.lines, viewLine{label: fl.Label})
		for _, l := range textLines(fl.Value) {
			v.lines = append(v.lines, viewLine{text: l})
		}
	}
	for i, p := range f.Details() {
		heading := p.Heading()
		if p.Truncated {
			heading = strings.TrimSuffix(heading, fmt.Sprintf(" — showing %d of %d characters", p.Shown, p.Chars)) + " — in full"
		}
		v.lines = append(v.lines, viewLine{label: "Detail" + form.AgentsWords, text: heading})
		lines := textLines(form.Block(f.Req.Details[i].Text))
		kinds := diffKinds(lines)
		for j, l := range lines {
			v.lines = append(v.lines, viewLine{text: l, kind: kindOf(kinds, j)})
		}
	}
	return v
}

// rowsOf is line i wrapped to the viewer's width.
func (v *viewer) rowsOf(i int) []string {
	if r, ok := v.rows[i]; ok {
		return r
	}
	l := v.lines[i]
	var r []string
	switch {
	case l.label != "":
		r = labelled(v.st, l.label, l.text, v.width)
	case l.item:
		r = continued(v.st, form.ItemIndent+l.text, v.width)
	default:
		r = textRows(v.st, l.text, l.kind, v.width)
	}
	v.rows[i] = r
	return r
}

// resize wraps for width from now on, keeping the first line drawn.
func (v *viewer) resize(width int) {
	if width != v.width || v.rows == nil {
		v.width, v.rows, v.sub = width, map[int][]string{}, 0
	}
}

// down moves the first row drawn n rows on, up when n is negative; it
// stops at either end of the text.
func (v *viewer) down(n int) {
	for ; n > 0; n-- {
		switch {
		case v.sub+1 < len(v.rowsOf(v.top)):
			v.sub++
		case v.top+1 < len(v.lines):
			v.top, v.sub = v.top+1, 0
		default:
			return
		}
	}
	for ; n < 0; n++ {
		switch {
		case v.sub > 0:
			v.sub--
		case v.top > 0:
			v.top--
			v.sub = len(v.rowsOf(v.top)) - 1
		default:
			return
		}
	}
}

// home and end go to either end of the text; end leaves the last page
// drawn, as the next frame will clamp.
func (v *viewer) home() { v.top, v.sub = 0, 0 }

func (v *viewer) end() {
	if len(v.lines) > 0 {
		v.top = len(v.lines) - 1
		v.sub = len(v.rowsOf(v.top)) - 1
	}
}

// view draws rows rows of text from the first row drawn, moved up first
// when the text would end before the screen does.
func (v *viewer) view(rows int) []string {
	out := v.collect(rows)
	if short := rows - len(out); short > 0 && (v.top > 0 || v.sub > 0) {
		v.down(-short)
		out = v.collect(rows)
	}
	v.shown = len(out)
	return out
}

func (v *viewer) collect(rows int) []string {
	out := make([]string, 0, rows)
	for i, sub := v.top, v.sub; i < len(v.lines) && len(out) < rows; i, sub = i+1, 0 {
		r := v.rowsOf(i)
		out = append(out, r[min(sub, len(r)):min(len(r), sub+rows-len(out))]...)
	}
	return out
}

// title says what the viewer holds.
func (v *viewer) title() string {
	if v.commands {
		return "every command, then the agent's words in full, unverified"
	}
	return "the agent's words in full, unverified"
}

// position says which lines the frame shows, in lines of text (a line
// wraps into rows).
func (v *viewer) position() string {
	last, left := v.top, v.shown+v.sub
	for last < len(v.lines) && left > len(v.rowsOf(last)) {
		left -= len(v.rowsOf(last))
		last++
	}
	return fmt.Sprintf("lines %d-%d of %d", v.top+1, min(last+1, len(v.lines)), len(v.lines))
}

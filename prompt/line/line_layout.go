package line

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/form"
)

// The line prompt lays out every line itself, at the terminal's width, so
// that the terminal never wraps one: a wrap of the terminal's would start
// request text at column 0, where it could pass for askperm's own words.
// Column 0 belongs to askperm: a label, a message or the gutter. Askperm
// starts text at columns 0 and 2 (the key legend, numbered options); the
// continuation of a wrapped line starts deeper (hangIndent, or under the
// option's text), and every line of multi-line request text starts with the
// gutter.

const (
	// defaultColumns is the width when the terminal does not tell.
	defaultColumns = 80
	// minColumns is the narrowest terminal the prompt lays out for.
	minColumns = 20
	// hangIndent starts the continuation of a wrapped line.
	hangIndent = 4
	// gutter starts every line of multi-line request text.
	gutter = "│ "
	// minSpaceRun is where form.Line starts counting spaces; the line
	// prompt counts them in multi-line text too.
	minSpaceRun = 4
)

// columns is the width of tty: TIOCGWINSZ, or defaultColumns when it fails
// or reports 0 (a serial line, a terminal that never set it).
func columns(tty *os.File) int {
	rc, err := tty.SyscallConn()
	if err != nil {
		return defaultColumns
	}
	var ws *unix.Winsize
	var ioErr error
	if err := rc.Control(func(fd uintptr) { ws, ioErr = unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ) }); err != nil || ioErr != nil || ws.Col == 0 {
		return defaultColumns
	}
	return int(ws.Col)
}

// errNarrow says the terminal is too narrow to lay the prompt out.
func errNarrow(cols int) error {
	return fmt.Errorf("the terminal is %d columns wide; the line prompt needs %d", cols, minColumns)
}

// page is text laid out for a terminal width cells wide.
type page struct {
	width int
	b     strings.Builder
}

// own writes askperm's words: each line wrapped, with a hanging indent. A
// last line without a newline (a question) stays open.
func (pg *page) own(s string) {
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			pg.b.WriteByte('\n')
		}
		pg.b.WriteString(strings.Join(wrapLine(l, pg.width, hangIndent), "\n"))
	}
}

// field writes "label: value", the label askperm's words; nothing when
// value is empty.
func (pg *page) field(label, value string) {
	if value != "" {
		pg.own(label + ": " + value + "\n")
	}
}

// item writes a list line: prefix (askperm's, indented) then text, wrapped
// under the text's start.
func (pg *page) item(prefix, text string) {
	pg.b.WriteString(strings.Join(wrapLine(prefix+text, pg.width, ansi.StringWidth(prefix)), "\n") + "\n")
}

// listItem writes an item of a list under its label (form.Field.Items):
// askperm's marks first at form.ItemIndent, every further line behind
// the gutter, so that request text never starts a line of its own.
func (pg *page) listItem(text string) {
	for i, l := range wrapLine(form.ItemIndent+text, pg.width-ansi.StringWidth(gutter), 0) {
		if i > 0 {
			l = gutter + l
		}
		pg.b.WriteString(l + "\n")
	}
}

// block writes rendered multi-line request text (form.Block), each line
// behind the gutter: tabs expanded, runs of spaces counted, wrapped.
func (pg *page) block(text string) {
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		for _, w := range wrapLine(countSpaces(form.ExpandTabs(l)), pg.width-ansi.StringWidth(gutter), 0) {
			pg.b.WriteString(gutter + w + "\n")
		}
	}
}

func (pg *page) String() string { return pg.b.String() }

// spaceRun and spaceCount are compiled on first use, not in every
// process's start-up.
var spaceRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(fmt.Sprintf(" {%d,}", minSpaceRun)) })

// countSpaces shows runs of minSpaceRun or more spaces as ⟨N spaces⟩, as
// form.Line does: padding can neither push text out of view nor fill a
// line. The notation stays unambiguous: the renderer escapes every ⟨ of the
// request.
func countSpaces(s string) string {
	return spaceRun().ReplaceAllStringFunc(s, func(run string) string { return fmt.Sprintf("⟨%d spaces⟩", len(run)) })
}

// word is a run of non-spaces, or a ⟨N spaces⟩ count, and the number of
// spaces before it.
type word struct {
	spaces int
	text   string
}

var spaceCount = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`⟨\d+ spaces⟩`) })

// words splits s at spaces and around ⟨N spaces⟩ counts, which stand for
// spaces and never split. A last word of "" carries trailing spaces.
func words(s string) []word {
	var ws []word
	pending := 0
	split := func(seg string) {
		for seg != "" {
			rest := strings.TrimLeft(seg, " ")
			pending += len(seg) - len(rest)
			if rest == "" {
				return
			}
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			ws = append(ws, word{pending, rest[:end]})
			pending, seg = 0, rest[end:]
		}
	}
	last := 0
	for _, m := range spaceCount().FindAllStringIndex(s, -1) {
		split(s[last:m[0]])
		ws = append(ws, word{pending, s[m[0]:m[1]]})
		pending, last = 0, m[1]
	}
	split(s[last:])
	if pending > 0 {
		ws = append(ws, word{spaces: pending})
	}
	return ws
}

// wrapLine breaks text (one line, no tabs) into lines of at most width
// cells, at spaces where it can and inside a word only when the word is
// wider than a line. Runs of spaces past the indentation are counted: where
// request text meets askperm's words, its spaces may add up to one. Lines after the first start with indent spaces; the
// spaces where a line breaks are dropped, leading and trailing ones kept
// when they fit.
func wrapLine(text string, width, indent int) []string {
	w := wrapper{width: width, indent: indent, fresh: true}
	rest := strings.TrimLeft(text, " ")
	for _, wd := range words(text[:len(text)-len(rest)] + countSpaces(rest)) {
		w.add(wd)
	}
	return append(w.lines, w.cur.String())
}

type wrapper struct {
	width, indent int
	lines         []string // the lines done
	cur           strings.Builder
	used          int  // cells of the current line
	fresh         bool // no word on the current line yet
}

func (w *wrapper) add(wd word) {
	gap := wd.spaces
	if wd.text == "" { // trailing spaces
		if w.used+gap <= w.width {
			w.space(gap)
		}
		return
	}
	ww := ansi.StringWidth(wd.text)
	if !w.fresh && w.used+gap+ww > w.width && (ww <= w.width-w.indent || w.used+gap >= w.width) {
		w.newLine()
	}
	if w.fresh && len(w.lines) > 0 || w.used+gap >= w.width {
		gap = 0 // the spaces where a line breaks
	}
	w.space(gap)
	w.fresh = false
	if w.used+ww <= w.width {
		w.cur.WriteString(wd.text)
		w.used += ww
		return
	}
	w.hardBreak(wd.text)
}

func (w *wrapper) space(n int) {
	w.cur.WriteString(strings.Repeat(" ", n))
	w.used += n
}

// hardBreak writes a word wider than the room left: as much as fits on
// this line, the rest on full lines.
func (w *wrapper) hardBreak(text string) {
	head := ansi.Truncate(text, w.width-w.used, "")
	w.cur.WriteString(head)
	w.used += ansi.StringWidth(head)
	rest := text[len(head):]
	if rest == "" {
		return
	}
	for _, piece := range strings.Split(ansi.Hardwrap(rest, w.width-w.indent, true), "\n") {
		w.newLine()
		w.fresh = false
		w.cur.WriteString(piece)
		w.used += ansi.StringWidth(piece)
	}
}

func (w *wrapper) newLine() {
	w.lines = append(w.lines, w.cur.String())
	w.cur.Reset()
	w.used, w.fresh = 0, true
	w.space(w.indent)
}

package tui

import (
	"fmt"
	"strings"
)

// optionList is one question drawn as a list of options with the cursor
// on one. It moves with the arrows, Home, End, PgUp and PgDn and never
// wraps around: Up on the first option and Down on the last do nothing.
// It has no other keys: no type-to-filter, no jumps by letter. Only the options around the cursor are wrapped
// and drawn, so a list of a thousand long options costs what a short one
// does.
type optionList struct {
	st     tuiStyles
	title  string
	labels []string // rendered safe
	multi  bool
	on     []bool // multi: the chosen options
	whole  bool   // all options always drawn, never scrolled
	cursor int
	top    int // first option drawn while not all fit
	shown  int // options the last view drew

	wrapWidth int
	wrapped   map[int][]string // an option's text lines at wrapWidth
}

// Drawing a list: the focus border, the cursor, a multi-select's marks.
const (
	focusBorder = "┃"
	cursorMark  = "> "
	onMark      = "[x] "
	offMark     = "[ ] "
	listIndent  = 2 // the border and a space
)

func (l *optionList) move(delta int) {
	l.cursor = min(max(l.cursor+delta, 0), len(l.labels)-1)
}

// page is how far PgUp and PgDn move: the options the last view drew.
func (l *optionList) page() int { return max(1, l.shown) }

func (l *optionList) toggle() { l.on[l.cursor] = !l.on[l.cursor] }

// leadWidth is the width of what comes before an option's text.
func (l *optionList) leadWidth() int {
	if l.multi {
		return len(cursorMark) + len(onMark)
	}
	return len(cursorMark)
}

// text is option i's wrapped text at width: request text, so its further
// lines are behind the gutter, never to be taken for options of their own.
func (l *optionList) text(i, width int) []string {
	if l.wrapWidth != width || l.wrapped == nil {
		l.wrapWidth, l.wrapped = width, map[int][]string{}
	}
	ls, ok := l.wrapped[i]
	if !ok {
		ls = continued(l.st, l.labels[i], width-listIndent-l.leadWidth())
		l.wrapped[i] = ls
	}
	return ls
}

func (l *optionList) height(i, width int) int { return len(l.text(i, width)) }

// titleLines is the title wrapped to width.
func (l *optionList) titleLines(width int) []string {
	return continued(l.st, l.title, width-listIndent)
}

// fits reports whether every option fits in rows lines.
func (l *optionList) fits(width, rows int) bool {
	return len(l.labels) <= rows && l.span(0, len(l.labels)-1, width) <= rows
}

// minRows is the fewest lines the list needs at width: the title and
// either every option or the cursor's option whole between the two lines
// that say how many more there are.
func (l *optionList) minRows(width int) int {
	title := len(l.titleLines(width))
	scrolled := 2 + l.height(l.cursor, width)
	if !l.whole && !l.fits(width, scrolled) {
		return title + scrolled
	}
	return title + l.span(0, len(l.labels)-1, width)
}

// view draws the list in at most rows lines (at least minRows).
func (l *optionList) view(width, rows int) []string {
	st := l.st
	var out []string
	for i, t := range l.titleLines(width) {
		if i == 0 {
			t = st.bold.Render(t)
		}
		out = append(out, st.border+t)
	}
	avail := rows - len(out)
	if l.whole || l.fits(width, avail) {
		l.shown = len(l.labels)
		return append(out, l.optionLines(0, len(l.labels)-1, width)...)
	}
	first, last := l.window(width, avail-2)
	l.shown = last - first + 1
	out = append(out, st.border+st.faint.Render(more(first, "above")))
	out = append(out, l.optionLines(first, last, width)...)
	return append(out, st.border+st.faint.Render(more(len(l.labels)-1-last, "below")))
}

func more(n int, where string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("(%d more %s)", n, where)
}

// window picks the options drawn in rows lines: the cursor's whole, the
// first drawn moving only as far as needed to keep it so.
func (l *optionList) window(width, rows int) (first, last int) {
	l.top = min(l.top, l.cursor)
	for l.top < l.cursor && l.span(l.top, l.cursor, width) > rows {
		l.top++
	}
	last, used := l.top, l.height(l.top, width)
	for last+1 < len(l.labels) && used+l.height(last+1, width) <= rows {
		last++
		used += l.height(last, width)
	}
	return l.top, last
}

func (l *optionList) span(from, to, width int) int {
	sum := 0
	for i := from; i <= to; i++ {
		sum += l.height(i, width)
	}
	return sum
}

// optionLines draws options first to last.
func (l *optionList) optionLines(first, last, width int) []string {
	st := l.st
	var out []string
	pad := strings.Repeat(" ", l.leadWidth())
	for i := first; i <= last; i++ {
		lead := strings.Repeat(" ", len(cursorMark))
		if i == l.cursor {
			lead = st.pointer
		}
		switch {
		case l.multi && l.on[i]:
			lead += onMark
		case l.multi:
			lead += offMark
		}
		for j, t := range l.text(i, width) {
			if j > 0 {
				lead = pad
			}
			out = append(out, st.border+lead+t)
		}
	}
	return out
}

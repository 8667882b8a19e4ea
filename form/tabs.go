package form

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// tabStop is the terminal's tab width.
const tabStop = 8

// ExpandTabs replaces each tab with spaces up to the next tab stop,
// counting display cells and restarting at each newline. No tab reaches the
// terminal, so the layout is exactly what was measured.
func ExpandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		col := 0
		for {
			text, rest, tab := strings.Cut(line, "\t")
			b.WriteString(text)
			col += ansi.StringWidth(text)
			if !tab {
				break
			}
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
			line = rest
		}
	}
	return b.String()
}

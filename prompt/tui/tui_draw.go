package tui

import (
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// askperm draws its frames on the terminal itself, each as soon as the
// screen has rendered it, rather than through bubbletea's renderer, which
// writes only on the ticks of its frame rate: the first frame waited
// 17 ms for the first tick, and every frame after a key up to as long.
// bubbletea still reads the keys and runs the screen; the program runs
// without its renderer (tea.WithoutRenderer), so askperm also sets the
// terminal up for a stage and back, and passes the window's resizes on.

// Set-up and tear-down of the terminal for one stage: the alternate
// screen, cleared, the cursor hidden, bracketed paste on; and back.
const (
	stageSetUp    = ansi.SetAltScreenSaveCursorMode + ansi.EraseEntireScreen + ansi.CursorHomePosition + ansi.HideCursor + ansi.SetBracketedPasteMode
	stageTearDown = ansi.ResetBracketedPasteMode + ansi.ShowCursor + ansi.ResetAltScreenSaveCursorMode
)

// drawnScreen is a screen drawn on the terminal as each of its frames is
// rendered. Only the lines that changed are written, so a frame whose
// countdown alone changed rewrites one line; a resize repaints them all.
// Its View returns nothing: it has drawn the frame already.
type drawnScreen struct {
	*tuiScreen
	out     io.Writer // the terminal: frameOutput, which tells the gate
	shown   []string  // the lines on the terminal
	repaint bool      // the lines on the terminal are not known
}

func newDrawnScreen(s *tuiScreen, out io.Writer) *drawnScreen {
	return &drawnScreen{tuiScreen: s, out: out}
}

func (d *drawnScreen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		d.repaint = true // the terminal may have reflowed what it showed
	}
	_, cmd := d.tuiScreen.Update(msg)
	return d, cmd
}

func (d *drawnScreen) View() string {
	d.draw(d.tuiScreen.View())
	return ""
}

// draw writes the lines of frame that differ from what the terminal shows,
// in one write, and erases what is below them. It moves between lines as
// bubbletea's renderer does, by line feeds from the top.
func (d *drawnScreen) draw(frame string) {
	var lines []string
	if frame != "" {
		lines = strings.Split(frame, "\n")
	}
	var b strings.Builder
	move := ansi.CursorHomePosition // to the next line to write
	for i, l := range lines {
		if !d.repaint && i < len(d.shown) && d.shown[i] == l {
			move += "\n"
			continue
		}
		b.WriteString(move)
		b.WriteString(l)
		// A line as wide as the window leaves the cursor on its last
		// cell, which erasing would blank.
		if ansi.StringWidth(l) < d.width {
			b.WriteString(ansi.EraseLineRight)
		}
		move = "\r\n"
	}
	if n := len(lines); (d.repaint || n < len(d.shown)) && n < max(1, d.height) {
		b.WriteString(ansi.CursorPosition(1, n+1) + ansi.EraseScreenBelow)
	}
	d.shown, d.repaint = lines, false
	if b.Len() > 0 {
		_, _ = io.WriteString(d.out, b.String())
	}
}

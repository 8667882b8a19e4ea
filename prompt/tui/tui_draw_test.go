package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
)

// drawnChoice is a drawnScreen of stage choice of write-file.json at 80x24 on
// a terminal that records what is written, and the gate it tells.
func drawnChoice(t *testing.T) (*drawnScreen, *bytes.Buffer, *armGate) {
	t.Helper()
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	gate := newArmGate(time.Second, time.Now)
	s := newTUIScreen(f, newChoiceStage(testStyles(), f, &a), screenConfig{
		styles: testStyles(), deadline: time.Now().Add(time.Hour), now: time.Now, gate: gate, width: 80, height: 24,
	})
	var term bytes.Buffer
	return newDrawnScreen(s, frameOutput{w: &term, gate: gate}), &term, gate
}

// The first frame is on the terminal when View returns, and the gate
// counts from its write; a frame that changed nowhere writes nothing; a
// frame writes only the lines that changed; a resize repaints them all.
func TestTUIDrawsEachFrameAtOnce(t *testing.T) {
	d, term, gate := drawnChoice(t)
	if _, ok := gate.armedAt(); ok {
		t.Fatal("armed before any frame")
	}
	d.View()
	if _, ok := gate.armedAt(); !ok {
		t.Fatal("the gate does not know the first frame is on the terminal")
	}
	first := ansi.Strip(term.String())
	for _, want := range []string{"askperm — an agent asks for permission", "Your decision", "> Deny once (n)", "left"} {
		if !strings.Contains(first, want) {
			t.Fatalf("the first frame lacks %q:\n%s", want, first)
		}
	}
	if n := strings.Count(term.String(), "\n"); n != len(d.shown)-1 {
		t.Fatalf("the first frame moved %d lines down for %d lines", n, len(d.shown))
	}

	term.Reset()
	d.View()
	if term.Len() != 0 {
		t.Fatalf("an unchanged frame wrote %q", term.String())
	}

	d.st.key(press{KeyMsg: keyUp})
	d.View()
	wrote := ansi.Strip(term.String())
	if strings.Contains(wrote, "Your decision") || !strings.Contains(wrote, "Deny once") {
		t.Fatalf("a move in the list wrote %q", wrote)
	}

	term.Reset()
	d.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.View()
	if again := ansi.Strip(term.String()); !strings.Contains(again, "Your decision") || !strings.Contains(again, "askperm — an agent") {
		t.Fatalf("a resize did not repaint:\n%q", term.String())
	}
}

// A frame of fewer lines erases the lines below it; the last frame,
// empty, erases the screen.
func TestTUIDrawErasesBelow(t *testing.T) {
	d, term, _ := drawnChoice(t)
	d.draw("a\nb\nc")
	term.Reset()
	d.draw("a\nb")
	if got, want := term.String(), ansi.CursorPosition(1, 3)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	term.Reset()
	d.draw("")
	if got, want := term.String(), ansi.CursorPosition(1, 1)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// A line as wide as the window is not followed by an erase, which would
// blank its last cell.
func TestTUIDrawFullWidthLine(t *testing.T) {
	d, term, _ := drawnChoice(t)
	full := strings.Repeat("x", d.width)
	d.draw(full + "\nshort")
	if got, want := term.String(), ansi.CursorHomePosition+full+"\r\nshort"+ansi.EraseLineRight; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// viewCounter counts how often huh draws a field.
type viewCounter struct {
	huh.Field
	views int
}

func (v *viewCounter) View() string {
	v.views++
	return v.Field.View()
}

// Stage choice's fields are drawn once per change, not once per frame
// nor twice in one (measuring the question, then drawing it).
func TestTUIChoiceDrawnOncePerChange(t *testing.T) {
	d, _, _ := drawnChoice(t)
	c := d.st.(*choiceStage)
	pick := &viewCounter{Field: c.pick}
	c.pick = pick
	d.View()
	d.Update(tuiTickMsg{})
	d.View()
	if pick.views != 1 {
		t.Fatalf("huh drew the Select %d times for one state", pick.views)
	}
	c.key(press{KeyMsg: keyUp})
	d.View()
	if pick.views != 2 {
		t.Fatalf("huh drew the Select %d times for two states", pick.views)
	}
}

// failingTerminal fails every write after the first.
type failingTerminal struct{ writes int }

func (f *failingTerminal) Write(p []byte) (int, error) {
	if f.writes++; f.writes > 1 {
		return 0, io.ErrClosedPipe
	}
	return len(p), nil
}

// A frame whose write failed leaves the question off the terminal, as
// far as the gate knows: input does not count.
func TestTUIFailedWriteDisarms(t *testing.T) {
	d, _, gate := drawnChoice(t)
	d.out = frameOutput{w: &failingTerminal{}, gate: gate}
	d.View()
	if _, ok := gate.armedAt(); !ok {
		t.Fatal("the first frame did not count")
	}
	d.st.key(press{KeyMsg: keyUp})
	d.View()
	if _, ok := gate.armedAt(); ok {
		t.Fatal("the gate counts a frame whose write failed")
	}
}

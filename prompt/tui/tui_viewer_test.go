package tui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/askperm/askperm/form"
)

// mebibyteDetail is write-file.json with a detail of 1 MiB, of lines
// "line N …" and its last line "the very last line".
func mebibyteDetail() []string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-64; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%150))
	}
	return []string{b.String() + "the very last line\n"}
}

// The viewer shows a detail the pane cuts short in full: End reaches its
// last line, Home its first, every frame fits, and it closes with Esc or
// q, back to the question, which must then be on screen for the arming
// delay again before a key counts.
func TestViewerFullDetail(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = mebibyteDetail()[0]
	var a form.Answer
	d := choiceDriver(t, req, &a, 80, 24)
	d.arm()
	if strings.Contains(d.screen(), "the very last line") {
		t.Fatal("the pane shows the whole mebibyte")
	}
	d.send(keyRunes("v"))
	d.wantScreen("the agent's words in full")
	d.arm()
	d.send(tea.KeyMsg{Type: tea.KeyEnd})
	d.wantScreen("│ the very last line", "of 12290")
	wantFits(t, d.s.View(), 80, 24)
	d.send(tea.KeyMsg{Type: tea.KeyPgUp}, keyUp)
	wantFits(t, d.s.View(), 80, 24)
	d.send(tea.KeyMsg{Type: tea.KeyHome})
	d.wantScreen("Title (agent's words):", "lines 1-")
	d.send(keyDown, tea.KeyMsg{Type: tea.KeyPgDown})
	d.send(keyRunes("q"))
	d.wantScreen("Your decision")
	d.arm()
	d.send(keyRunes("v"))
	d.arm()
	d.send(tea.KeyMsg{Type: tea.KeyEsc}) // closes the viewer, does not cancel
	d.wantEnd(tuiRunning)
	d.wantScreen("Your decision")
}

// Opening or closing the viewer re-arms the screen: a key that arrived
// before the change, however late it is handled, or within the arming
// delay after it is discarded: End right after v does not scroll, Enter
// typed right after q never confirms.
func TestViewerRearms(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = mebibyteDetail()[0]
	var a form.Answer
	r := newKeyRig(t, choiceDriver(t, req, &a, 80, 30))
	r.typ(calmWait, 0, "y")
	r.typ(calmWait, 0, "v")
	r.typ(100*time.Millisecond, 0, "\x1b[F") // End
	if strings.Contains(r.screen(), "the very last line") {
		t.Fatal("a key counted before the viewer was on screen for the delay")
	}
	r.typ(calmWait, 0, "\x1b[F")
	r.wantScreen("the very last line")
	r.clock = r.clock.Add(calmWait)
	r.slow = true
	r.typ(calmWait, 50*time.Millisecond, "q", "\r")
	r.wantEnd(tuiRunning)
}

func TestDiffKinds(t *testing.T) {
	lines := textLines("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n--- not a header\n")
	want := []diffKind{diffHeader, diffHeader, diffHunk, diffContext, diffDel, diffAdd, diffDel}
	got := diffKinds(lines)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	for _, text := range []string{"+ good\n- bad\n", "@@ not a hunk\n", "--- only\nno plus\n"} {
		if k := diffKinds(textLines(text)); k != nil {
			t.Errorf("%q taken for a diff: %v", text, k)
		}
	}
}

// A diff is coloured in the pane and the viewer, around the rendered
// text and after the gutter; with NO_COLOR it is not.
func TestDiffColoured(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = "--- a/r.md\n+++ b/r.md\n@@ -1 +1 @@\n-old \x1b[31m\n+new\n"
	f := form.New(req, form.Options{})
	for _, noColor := range []bool{false, true} {
		env := map[string]string{"TERM": "xterm-256color", "CLICOLOR_FORCE": "1"}
		if noColor {
			env["NO_COLOR"] = "1"
		}
		st := newStyles(io.Discard, func(k string) string { return env[k] })
		pane := strings.Join(wordsLines(st, f, 80), "\n")
		v := newViewer(st, f)
		v.resize(80)
		full := strings.Join(v.view(40), "\n")
		for _, text := range []string{pane, full} {
			for _, want := range []string{st.gutter + "\x1b[32m+new", st.gutter + "\x1b[31m-old \\e[31m", st.gutter + "\x1b[36m@@ -1 +1 @@"} {
				if got := strings.Contains(text, want); got == noColor {
					t.Fatalf("NO_COLOR %v: %q in the text is %v:\n%q", noColor, want, got, text)
				}
			}
			if noColor && strings.Contains(text, "\x1b[3") {
				t.Fatalf("colour despite NO_COLOR:\n%q", text)
			}
		}
	}
}

// BenchmarkViewerOpen opens the viewer on a detail of 1 MiB, of many
// lines or of one, and draws its first frame and its last at 80x24.
func BenchmarkViewerOpen(b *testing.B) {
	for name, text := range map[string]string{"lines": mebibyteDetail()[0], "one line": strings.Repeat("0123456789abcdef", 1<<16)} {
		req := tuiWriteFile()
		req.Details[0].Text = text
		f := form.New(req, form.Options{})
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				v := newViewer(testStyles(), f)
				v.resize(80)
				v.view(21)
				v.end()
				v.view(21)
			}
		})
	}
}

// BenchmarkViewerKey is one key in the open viewer on a detail of 1 MiB:
// End, then Home, then a page down, alternating, with a frame each.
func BenchmarkViewerKey(b *testing.B) {
	for _, text := range map[string]string{"lines": mebibyteDetail()[0], "one line": strings.Repeat("0123456789abcdef", 1<<16)} {
		req := tuiWriteFile()
		req.Details[0].Text = text
		f := form.New(req, form.Options{})
		v := newViewer(testStyles(), f)
		v.resize(80)
		v.view(21)
		i := 0
		b.Run(fmt.Sprint(len(strings.Split(text, "\n")), " lines"), func(b *testing.B) {
			for b.Loop() {
				switch i % 3 {
				case 0:
					v.end()
				case 1:
					v.home()
				default:
					v.down(20)
				}
				v.view(21)
				v.position()
				i++
			}
		})
	}
}

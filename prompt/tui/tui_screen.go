package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
)

// Below these sizes the prompt is not drawn at all: a partial prompt could
// hide what is being approved.
const (
	tuiMinWidth  = 40
	tuiMinHeight = 12
	tuiMinPane   = 3 // request lines always visible
	tuiMinForm   = 4 // a field's title and some options
)

const tuiTitle = "askperm — an agent asks for permission"

// The keys, in full when the width allows.
const (
	tuiLegend      = "enter: confirm · shift+tab: back · pgup/pgdn: scroll · esc: cancel"
	tuiShortLegend = "enter ok · esc cancel · pgup/pgdn scroll"
)

// screenConfig is what a screen needs from outside: the deadline it counts
// down to, the arming delay, a clock, how to flush typeahead, its styles,
// and the terminal's size when known.
type screenConfig struct {
	styles        tuiStyles
	deadline      time.Time // zero: no countdown
	armDelay      time.Duration
	now           func() time.Time
	flush         func()
	width, height int
}

// tuiEnd says how a screen finished.
type tuiEnd int

const (
	tuiRunning tuiEnd = iota
	tuiDone
	tuiCancelled
	tuiHungUp
)

type (
	tuiTickMsg   struct{}
	tuiArmedMsg  struct{}
	tuiHangupMsg struct{}
)

// tuiScreen is the tea.Model of one stage: askperm's frame (header with the
// countdown, the hidden-characters warning, the request in a scrollable
// pane, the stage's note, the status line) around the stage's huh form.
// It owns the keys that must not reach the form.
type tuiScreen struct {
	req    *form.Form
	st     tuiStage
	cfg    screenConfig
	hidden bool // the request holds hidden or reordering characters

	pane          viewport.Model
	paneWidth     int // width the pane's content was wrapped for
	width, height int
	formW, formH  int // size last given to the form
	small         bool
	needRows      int // rows the prompt needs at this width

	initCmd tea.Cmd
	end     tuiEnd
}

func newTUIScreen(f *form.Form, st tuiStage, cfg screenConfig) *tuiScreen {
	s := &tuiScreen{req: f, st: st, cfg: cfg, hidden: f.HasHidden(), width: cfg.width, height: cfg.height}
	st.form.WithTheme(cfg.styles.theme)
	st.gate.armed = cfg.armDelay <= 0
	// Init the form now, so that the very first frame is complete.
	s.initCmd = tea.Batch(st.form.Init(), s.layout())
	return s
}

func (s *tuiScreen) Init() tea.Cmd {
	cmds := []tea.Cmd{s.initCmd, s.tick()}
	if !s.st.gate.armed {
		cmds = append(cmds, tea.Tick(s.cfg.armDelay, func(time.Time) tea.Msg { return tuiArmedMsg{} }))
	}
	return tea.Batch(cmds...)
}

func (s *tuiScreen) tick() tea.Cmd {
	if s.cfg.deadline.IsZero() {
		return nil
	}
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tuiTickMsg{} })
}

func (s *tuiScreen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if s.end != tuiRunning {
		return s, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.width, s.height = msg.Width, msg.Height
		return s, s.layout()
	case tuiTickMsg:
		return s, tea.Batch(s.tick(), s.layout())
	case tuiArmedMsg:
		s.st.gate.armed = true
		s.cfg.flush() // what was typed while unarmed never counts
		return s, s.layout()
	case tuiHangupMsg:
		return s, s.finish(tuiHungUp)
	case tea.KeyMsg:
		if cmd, handled := s.key(msg); handled {
			return s, tea.Batch(cmd, s.layout())
		}
	}
	m, cmd := s.st.form.Update(msg)
	s.st.form = m.(*huh.Form)
	switch s.st.form.State {
	case huh.StateCompleted:
		return s, s.finish(tuiDone)
	case huh.StateAborted:
		return s, s.finish(tuiCancelled)
	}
	return s, tea.Batch(cmd, s.layout())
}

// key handles the keys the form must not see, and reports whether it did.
// Before the arming delay ends only Enter reaches the form: it may confirm
// a deny, the validators refuse an allow. A form too small to be drawn
// gets no keys at all: nobody confirms what they cannot see.
func (s *tuiScreen) key(k tea.KeyMsg) (tea.Cmd, bool) {
	switch k.String() {
	case "ctrl+c", "esc":
		return s.finish(tuiCancelled), true
	case "ctrl+z":
		return nil, true
	case "pgup":
		s.pane.PageUp()
		return nil, true
	case "pgdown":
		s.pane.PageDown()
		return nil, true
	}
	if s.small || !s.st.gate.armed && k.Type != tea.KeyEnter {
		return nil, true
	}
	return nil, false
}

func (s *tuiScreen) finish(e tuiEnd) tea.Cmd {
	s.end = e
	return tea.Quit
}

// layout fits the frame to the terminal: fixed parts first, the form as
// much as it needs of the rest (at most what leaves the pane its minimum),
// the pane whatever remains. It runs after every update because the
// header, note and status change height as their text changes.
func (s *tuiScreen) layout() tea.Cmd {
	if s.width < 1 || s.height < 1 {
		s.small, s.needRows = true, tuiMinHeight
		return nil
	}
	if s.paneWidth != s.width {
		s.pane.SetContent(tuiRequestText(s.cfg.styles, s.req, s.width))
		s.paneWidth = s.width
	}
	fixed := lipgloss.Height(s.header()) + 1 /* the pane's rule */ + lipgloss.Height(s.status())
	if note := s.note(); note != "" {
		fixed += lipgloss.Height(note)
	}
	s.needRows = max(tuiMinHeight, fixed+tuiMinPane+tuiMinForm)
	s.small = s.width < tuiMinWidth || s.height < s.needRows
	if s.small {
		return nil
	}
	var cmd tea.Cmd
	if avail := s.height - fixed - tuiMinPane; s.formW != s.width || s.formH != avail {
		s.formW, s.formH = s.width, avail
		_, cmd = s.st.form.Update(tea.WindowSizeMsg{Width: s.width, Height: avail})
	}
	s.pane.Width = s.width
	s.pane.Height = max(1, s.height-fixed-lipgloss.Height(s.st.form.View()))
	return cmd
}

func (s *tuiScreen) View() string {
	if s.end != tuiRunning {
		return ""
	}
	if s.small {
		return s.smallView()
	}
	parts := []string{s.header(), s.pane.View(), s.paneRule()}
	if note := s.note(); note != "" {
		parts = append(parts, note)
	}
	parts = append(parts, s.st.form.View(), s.status())
	return fitView(strings.Join(parts, "\n"), s.width, s.height)
}

// header is the title with the countdown, then the hidden-characters
// warning when the request needs it.
func (s *tuiScreen) header() string {
	h := s.cfg.styles.bold.Render(tuiTitle)
	if left := s.timeLeft(); left != "" {
		if gap := s.width - ansi.StringWidth(tuiTitle) - ansi.StringWidth(left); gap >= 1 {
			h += strings.Repeat(" ", gap) + left
		} else {
			h += "\n" + left
		}
	}
	if s.hidden {
		h += "\n" + s.cfg.styles.warn.Render(wrapCells("WARNING: "+form.HiddenWarning, s.width))
	}
	return h
}

func (s *tuiScreen) timeLeft() string {
	if s.cfg.deadline.IsZero() {
		return ""
	}
	left := max(0, s.cfg.deadline.Sub(s.cfg.now()))
	secs := int((left + time.Second - 1) / time.Second)
	if secs >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d left", secs/3600, secs/60%60, secs%60)
	}
	return fmt.Sprintf("%d:%02d left", secs/60, secs%60)
}

// paneRule closes the pane, saying which request lines are shown when not
// all of them fit.
func (s *tuiScreen) paneRule() string {
	label := ""
	if total, h := s.pane.TotalLineCount(), s.pane.Height; total > h {
		top := s.pane.YOffset
		label = fmt.Sprintf(" request lines %d–%d of %d · pgup/pgdn ", top+1, min(top+h, total), total)
	}
	rule := "──" + label + strings.Repeat("─", max(0, s.width-2-ansi.StringWidth(label)))
	return s.cfg.styles.faint.Render(ansi.Truncate(rule, s.width, ""))
}

func (s *tuiScreen) note() string {
	if s.st.note == nil {
		return ""
	}
	var ls []string
	for _, l := range s.st.note() {
		ls = append(ls, hangingLines(l, s.width)...)
	}
	return strings.Join(ls, "\n")
}

// status shows the form's errors, or the keys.
func (s *tuiScreen) status() string {
	var msgs []string
	for _, err := range s.st.form.Errors() {
		if s.st.gate.armed && errors.Is(err, errNotArmed) {
			continue // stale: allowing is possible now
		}
		msgs = append(msgs, "! "+form.Line(err.Error()))
	}
	if len(msgs) == 0 {
		legend := tuiLegend
		if ansi.StringWidth(legend) > s.width {
			legend = tuiShortLegend
		}
		return s.cfg.styles.faint.Render(wrapCells(legend, s.width))
	}
	return s.cfg.styles.warn.Render(wrapCells(strings.Join(msgs, "\n"), s.width))
}

func (s *tuiScreen) smallView() string {
	msg := fmt.Sprintf("terminal too small: resize to at least %d×%d", tuiMinWidth, s.needRows)
	if left := s.timeLeft(); left != "" {
		msg += "\n" + left
	}
	return fitView(wrapCells(msg, max(1, s.width)), s.width, s.height)
}

// fitView cuts a view to the window as a last resort: bubbletea would
// drop the top lines (askperm's header) of a view taller than the window.
func fitView(view string, width, height int) string {
	lines := strings.Split(view, "\n")
	if len(lines) > height {
		lines = lines[:max(0, height)]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "")
		}
	}
	return strings.Join(lines, "\n")
}

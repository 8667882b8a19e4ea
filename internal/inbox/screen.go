package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/tty"
	"github.com/askperm/askperm/prompt"
	"github.com/askperm/askperm/prompt/tui"
)

// Screen is the approver's full-screen inbox: the pending requests, live,
// on the terminal Prompt names (never stdin or stdout); the one chosen is
// asked in the terminal UI's form (prompt/tui), and the answer signed
// with Key and written.
type Screen struct {
	Team   *Team
	Key    nkeys.KeyPair
	Prompt prompt.Options
}

// Why a form open on a request closed before its answer.
var (
	errEnded   = errors.New("the request ended on its host (another approver answered first, or it closed)")
	errExpired = errors.New("the request expired")
)

// Run shows the list until the person quits or ctx ends; each request
// opened is asked in the form, under a context that ends when the
// request leaves the list, and then the list comes back saying what
// became of it.
func (s Screen) Run(ctx context.Context) error {
	if t := s.Prompt.Env("TERM"); t == "" || t == "dumb" {
		return errors.New("TERM is empty or dumb: the inbox needs a full-screen terminal (askperm inbox list and answer need none)")
	}
	// The status line says what became of a request opened: the terminal
	// UI's closing line would call a form closed unanswered a deny.
	s.Prompt.NoClosingLine = true
	m := &listModel{list: s.Team.List, now: s.Team.now, warning: s.Team.LastWarning}
	for {
		e, err := s.pick(ctx, m)
		if err != nil || e == nil {
			return err
		}
		m.status = s.open(ctx, e)
	}
}

// pick shows the list until a request is chosen (nil when the person
// quit or ctx ended).
func (s Screen) pick(ctx context.Context, m *listModel) (*Entry, error) {
	term, err := tty.Open(s.Prompt.TTY)
	if err != nil {
		return nil, err
	}
	defer term.Close()
	m.chosen, m.quit = nil, false
	m.refresh()
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(term),
		tea.WithOutput(term),
		tea.WithAltScreen(),
		tea.WithoutSignalHandler(), // signals arrive as ctx's cancellation
		tea.WithoutCatchPanics(),   // its report would go to stdout
	)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-s.Team.List.Changed():
				p.Send(changedMsg{})
			case <-stop:
				return
			}
		}
	}()
	_, err = p.Run()
	close(stop)
	switch {
	case ctx.Err() != nil:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("the list: %w", err)
	}
	return m.chosen, nil
}

// open asks e's request in the terminal UI's form, and writes the answer
// given. It returns what became of it, for the list's status line.
func (s Screen) open(ctx context.Context, e *Entry) string {
	what := form.Line(e.Host) + " " + e.Ask[:12]
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fctx, cancelDeadline := context.WithDeadlineCause(fctx, e.Deadline, errExpired)
	defer cancelDeadline()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			switch _, why := s.Team.List.Get(e.Host, e.Ask); why {
			case Ended:
				cancel(errEnded)
				return
			case Expired:
				cancel(errExpired)
				return
			}
			select {
			case <-s.Team.List.Changed():
			case <-stop:
				return
			}
		}
	}()
	f := Form(e)
	a, err := tui.New(s.Prompt).Ask(fctx, f)
	switch {
	case ctx.Err() != nil:
		return ""
	case errors.Is(context.Cause(fctx), errEnded), errors.Is(context.Cause(fctx), errExpired):
		return what + ": not answered: " + context.Cause(fctx).Error()
	case errors.Is(err, prompt.ErrCancelled):
		return what + ": closed without answering"
	case err != nil:
		return what + ": not answered: " + form.Line(err.Error())
	}
	if err := s.Team.Answer(ctx, s.Key, e, f, a); err != nil {
		return what + ": not answered: " + form.Line(err.Error())
	}
	return what + ": answered " + form.ChoiceLabel(a.Choice)
}

// changedMsg is the list changing.
type changedMsg struct{}

// tickMsg redraws the ages and times left.
type tickMsg struct{}

func tick() tea.Cmd { return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} }) }

// listModel is the list screen: the pending requests, newest last, one
// of them under the cursor.
type listModel struct {
	list    *List
	now     func() time.Time
	warning func() string // the watch's last warning
	rows    []*Entry
	cursor  int
	key     string // the done key under the cursor, kept across changes
	width   int
	height  int
	top     int // the first row shown
	status  string
	chosen  *Entry
	quit    bool
}

func (m *listModel) Init() tea.Cmd { return tick() }

// refresh reads the list again, keeping the cursor on its request, or
// where it was when that one left; a list that was empty starts on the
// newest.
func (m *listModel) refresh() {
	m.list.Expire(m.now())
	m.rows = m.list.Pending()
	if len(m.rows) == 0 {
		m.cursor, m.key = 0, ""
		return
	}
	for i, e := range m.rows {
		if e.ID() == m.key {
			m.cursor = i
			return
		}
	}
	if m.key == "" {
		m.cursor = len(m.rows) - 1
	}
	m.cursor = min(m.cursor, len(m.rows)-1)
	m.key = m.rows[m.cursor].ID()
}

func (m *listModel) move(by int) {
	if len(m.rows) == 0 {
		return
	}
	m.cursor = max(0, min(len(m.rows)-1, m.cursor+by))
	m.key = m.rows[m.cursor].ID()
}

func (m *listModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case changedMsg:
		m.refresh()
	case tickMsg:
		m.refresh()
		return m, tick()
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "esc", "ctrl+c":
			m.quit = true
			return m, tea.Quit
		case "up", "k":
			m.move(-1)
		case "down", "j":
			m.move(1)
		case "home":
			m.move(-len(m.rows))
		case "end":
			m.move(len(m.rows))
		case "enter":
			m.refresh()
			if len(m.rows) > 0 {
				m.chosen = m.rows[m.cursor]
				return m, tea.Quit
			}
		}
	}
	return m, nil
}

// Column widths of the screen; the question takes the rest.
var screenColumns = []int{12, 10, 6, 6}

func (m *listModel) View() string {
	w, h := max(m.width, 40), max(m.height, 5)
	var b strings.Builder
	line := func(s string) { b.WriteString(ansi.Truncate(s, w, "…") + "\n") }
	line(fmt.Sprintf("askperm inbox: %d pending · ↑/↓ choose · Enter open · q quit", len(m.rows)))
	line(cells([]string{"HOST", "SESSION", "AGE", "LEFT", "QUESTION"}))
	shown := h - 4 // the heading, the columns, the warning and the status
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+shown {
		m.top = m.cursor - shown + 1
	}
	m.top = max(0, min(m.top, len(m.rows)-shown))
	now := m.now()
	for i := m.top; i < len(m.rows) && i < m.top+shown; i++ {
		r := Row(m.rows[i], now)
		text := ansi.Truncate(cells([]string{r[0], r[2], r[3], r[4], r[5]}), w, "…")
		if i == m.cursor {
			text = ansi.SGR(ansi.ReverseAttr) + text + strings.Repeat(" ", max(0, w-ansi.StringWidth(text))) + ansi.SGR(ansi.ResetAttr)
		}
		b.WriteString(text + "\n")
	}
	if len(m.rows) == 0 {
		line("No request is pending; new ones appear here.")
	}
	for n := strings.Count(b.String(), "\n"); n < h-2; n++ {
		b.WriteString("\n")
	}
	if warning := m.warning(); warning != "" {
		// A warning may quote what a host sent: rendered as untrusted text.
		b.WriteString(ansi.Truncate("warning: "+form.Line(warning), w, "…"))
	}
	b.WriteString("\n" + ansi.Truncate(m.status, w, "…"))
	return b.String()
}

// cells lays out one row in screenColumns, each cell cut to its width.
func cells(c []string) string {
	var b strings.Builder
	for i, s := range c {
		if i < len(screenColumns) {
			s = ansi.Truncate(s, screenColumns[i], "…")
			s += strings.Repeat(" ", screenColumns[i]-ansi.StringWidth(s)+1)
		}
		b.WriteString(s)
	}
	return b.String()
}

package tui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
)

// Below these sizes the prompt is not drawn at all: a partial prompt could
// hide what is being approved.
const (
	tuiMinWidth  = 40
	tuiMinHeight = 12
	tuiMinPane   = 3 // lines of the agent's words always visible
)

const tuiTitle = "askperm — an agent asks for permission"

// tuiWaitHint stands in for the keys while input does not count yet.
const tuiWaitHint = "wait: keys count once you have paused for a moment"

// screenConfig is what a screen needs from outside: the deadline it counts
// down to, a clock, the gate that judges its input, its styles, and the
// terminal's size when known.
type screenConfig struct {
	styles        tuiStyles
	deadline      time.Time // zero: no countdown
	now           func() time.Time
	gate          *armGate
	input         *stageInput // what the chunk marks stand for; nil in tests
	width, height int
}

// tuiEnd says how a screen finished.
type tuiEnd int

const (
	tuiRunning tuiEnd = iota
	tuiDone
	tuiCancelled
)

type (
	tuiTickMsg     struct{}
	tuiArmCheckMsg struct{ gen int }
)

// tuiScreen is the tea.Model of one stage: askperm's frame around the
// stage's questions. From the top: the title with the countdown, the
// hidden-characters warning, the request's facts, the stage's note (the
// rule to save), the agent's words in a pane that scrolls, the question,
// and the status line. Everything but the pane is fixed: when it does not
// fit with the question and a few lines of the pane, nothing of the prompt
// is drawn but how large the terminal must be.
type tuiScreen struct {
	req    *form.Form
	st     stage
	cfg    screenConfig
	hidden bool // the request holds hidden or reordering characters

	textWidth    int      // width the words were wrapped for
	words        []string // the agent's words at textWidth
	factCommands int      // commands of a command line the facts list
	factsFor     [2]int   // width and factCommands the facts were laid out for
	facts        []string // the facts at factsFor
	fitFor       [2]int   // the window size factCommands was chosen for
	paneTop      int      // first line of the words shown
	paneRows     int      // lines of the words the last frame showed

	width, height int
	small         bool
	needRows      int // rows the prompt needs, when small
	armGen        int // the arming check that counts
	end           tuiEnd

	view    *viewer // the commands and the agent's words in full; nil until first opened
	viewing bool    // the viewer is on screen

	chunk   chunk // what is known of the chunk the next key came in
	inChunk int   // keys of it handled so far
	marked  bool  // a chunk mark was met
}

func newTUIScreen(f *form.Form, st stage, cfg screenConfig) *tuiScreen {
	return &tuiScreen{req: f, st: st, cfg: cfg, hidden: f.HasHidden(), width: cfg.width, height: cfg.height, factCommands: form.MaxFactCommands}
}

func (s *tuiScreen) Init() tea.Cmd { return tea.Batch(s.tick(), s.checkArming()) }

func (s *tuiScreen) tick() tea.Cmd {
	if s.cfg.deadline.IsZero() {
		return nil
	}
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tuiTickMsg{} })
}

// checkArming schedules a redraw for when input will count, so that the
// status line stops asking to wait. Discarded input moves that time: the
// check then schedules itself again.
func (s *tuiScreen) checkArming() tea.Cmd {
	s.armGen++
	wait := s.cfg.gate.delay
	if at, ok := s.cfg.gate.armedAt(); ok {
		if wait = at.Sub(s.cfg.now()); wait <= 0 {
			return nil
		}
	}
	gen := s.armGen
	return tea.Tick(wait, func(time.Time) tea.Msg { return tuiArmCheckMsg{gen} })
}

func (s *tuiScreen) armed() bool {
	at, ok := s.cfg.gate.armedAt()
	return ok && !s.cfg.now().Before(at)
}

func (s *tuiScreen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if s.end != tuiRunning {
		return s, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.width, s.height = msg.Width, msg.Height
		return s, s.checkArming()
	case tuiTickMsg:
		return s, s.tick()
	case tuiArmCheckMsg:
		if msg.gen == s.armGen {
			return s, s.checkArming()
		}
	case chunkMsg:
		s.newChunk(chunk(msg))
	case tea.KeyMsg:
		return s, s.key(msg)
	}
	return s, nil
}

// stageKeys are the keys a stage may act on.
var stageKeys = map[tea.KeyType]bool{
	tea.KeyUp: true, tea.KeyDown: true, tea.KeyEnter: true, tea.KeyTab: true, tea.KeyShiftTab: true,
	tea.KeySpace: true, tea.KeyBackspace: true, tea.KeyRunes: true,
	tea.KeyLeft: true, tea.KeyRight: true, // the cursor in the denial reason
	tea.KeyHome: true, tea.KeyEnd: true,
}

// paneKeys scroll the agent's words in either stage; in stage choice
// PgUp and PgDn do too, while in stage rule they page through its lists.
var paneKeys = map[tea.KeyType]bool{
	tea.KeyCtrlPgUp: true, tea.KeyCtrlPgDown: true, tea.KeyCtrlHome: true, tea.KeyCtrlEnd: true,
}

// viewerKeys scroll the viewer.
var viewerKeys = map[tea.KeyType]bool{
	tea.KeyUp: true, tea.KeyDown: true, tea.KeyPgUp: true, tea.KeyPgDown: true, tea.KeyHome: true, tea.KeyEnd: true,
}

// viewKey opens the viewer.
const viewKey = 'v'

// scrolls reports whether k scrolls the viewer or the agent's words,
// which changes no answer.
func (s *tuiScreen) scrolls(k tea.KeyMsg) bool {
	switch {
	case k.Alt:
		return false
	case s.viewing:
		return viewerKeys[k.Type]
	}
	return paneKeys[k.Type] || s.pageKeysScrollPane() && (k.Type == tea.KeyPgUp || k.Type == tea.KeyPgDown)
}

// key acts on askperm's keys and drops every other: Ctrl-C and Esc cancel
// (Esc closes the viewer), chunk marks say where the next keys came from,
// keys of typing are discarded, a key of a burst is typing (one that
// scrolls still scrolls), the viewer and the pane scroll, the stage gets
// its own keys while it is drawn. No key with Alt acts, but in a burst
// it is typing too.
func (s *tuiScreen) key(k tea.KeyMsg) tea.Cmd {
	if mark, alt := markKey(k); mark {
		s.takeMarks(1)
		if alt { // an Esc right before the mark
			return s.key(tea.KeyMsg{Type: tea.KeyEsc})
		}
		return nil
	}
	if n := strings.Count(string(k.Runes), string(rune(chunkMark))); k.Paste && n > 0 {
		// Marks of chunks that came while a bracketed paste went on.
		if s.cfg.input != nil {
			s.takeMarks(n)
		}
		k.Runes = []rune(strings.ReplaceAll(string(k.Runes), string(rune(chunkMark)), ""))
	}
	p := s.pressOf(k)
	// A key of a burst is typing unless it types into the denial reason;
	// Enter is the stage's to judge (tui_keys.go).
	burst := !p.calm && k.Type != tea.KeyEnter && !s.st.typing()
	switch {
	case k.Alt && !burst:
	case k.Type == tea.KeyCtrlC:
		return s.finish(tuiCancelled)
	case k.Type == tea.KeyEsc && s.viewing:
		return s.showViewer(false)
	case k.Type == tea.KeyEsc:
		return s.finish(tuiCancelled)
	case s.small || s.typing(p.at):
		if burst { // discarded, and still typing
			s.st.typed(burstIgnored)
		}
	case burst && !s.scrolls(k):
		return s.typed(p, burstIgnored)
	case burst:
		// Scrolling changes no answer, and a person holds PgDn to read:
		// a burst of it scrolls, but is typing all the same, without
		// discarding the scrolling that follows.
		s.st.typed(scrollBurst)
		if s.viewing {
			return s.viewerKey(p)
		}
		s.scrollPane(k.Type)
	case s.viewing:
		return s.viewerKey(p)
	case s.scrolls(k):
		s.scrollPane(k.Type)
	case letter(k) == viewKey && (len(s.words) > 0 || s.req.MostCommands() > s.factCommands) && !s.st.typing():
		return s.showViewer(true)
	case stageKeys[k.Type] || k.Type == tea.KeyPgUp || k.Type == tea.KeyPgDown:
		switch s.st.key(p) {
		case keyDone:
			return s.finish(tuiDone)
		case keyIgnored:
			s.cfg.gate.drop(p.at)
			return s.checkArming()
		}
	}
	return nil
}

// typed puts the stage back on its safe answer, saying why, and
// discards input until typing has paused.
func (s *tuiScreen) typed(p press, why string) tea.Cmd {
	s.st.typed(why)
	s.cfg.gate.drop(p.at)
	return s.checkArming()
}

// pageKeysScrollPane reports whether PgUp and PgDn scroll the pane: in
// stage choice, whose list is short, they do; stage rule's lists take
// them.
func (s *tuiScreen) pageKeysScrollPane() bool {
	_, rule := s.st.(*ruleStage)
	return !rule
}

// scrollPane moves the agent's words a page, or to either end.
func (s *tuiScreen) scrollPane(t tea.KeyType) {
	switch t {
	case tea.KeyPgUp, tea.KeyCtrlPgUp:
		s.paneTop -= s.paneRows
	case tea.KeyPgDown, tea.KeyCtrlPgDown:
		s.paneTop += s.paneRows
	case tea.KeyCtrlHome:
		s.paneTop = 0
	case tea.KeyCtrlEnd:
		s.paneTop = len(s.words)
	}
}

// viewerKey scrolls the viewer, or closes it. A printable key that is
// none of the viewer's is typing: the stage goes back to its safe answer.
func (s *tuiScreen) viewerKey(p press) tea.Cmd {
	v := s.view
	switch {
	case p.Type == tea.KeyUp:
		v.down(-1)
	case p.Type == tea.KeyDown:
		v.down(1)
	case p.Type == tea.KeyPgUp:
		v.down(-max(1, v.shown-1))
	case p.Type == tea.KeyPgDown:
		v.down(max(1, v.shown-1))
	case p.Type == tea.KeyHome:
		v.home()
	case p.Type == tea.KeyEnd:
		v.end()
	case letter(p.KeyMsg) == 'q':
		return s.showViewer(false)
	case printable(p.KeyMsg):
		return s.typed(p, typingIgnored)
	}
	return nil
}

// showViewer opens or closes the viewer. Either way the screen now shows
// something else: input counts again only once it has been on the
// terminal for the arming delay, and keys that arrived before are
// discarded.
func (s *tuiScreen) showViewer(on bool) tea.Cmd {
	if on && s.view == nil {
		s.view = newViewer(s.cfg.styles, s.req)
	}
	s.viewing = on
	s.cfg.gate.rearm()
	return s.checkArming()
}

func (s *tuiScreen) finish(e tuiEnd) tea.Cmd {
	s.end = e
	return tea.Quit
}

// View draws the frame and tells the gate whether it holds the whole
// question.
func (s *tuiScreen) View() string {
	if s.end != tuiRunning {
		s.cfg.gate.rendered(false)
		return ""
	}
	view, complete := s.frame()
	s.cfg.gate.rendered(complete)
	return view
}

func (s *tuiScreen) frame() (string, bool) {
	if s.width < 1 || s.height < 1 {
		s.small, s.needRows = true, tuiMinHeight
		return "", false
	}
	s.fitCommands()
	if s.small = s.width < tuiMinWidth || s.height < s.rowsAt(s.width); s.small {
		s.needRows = s.rowsAt(max(s.width, tuiMinWidth))
		return s.smallView(), false
	}
	if s.viewing {
		return s.viewerFrame(), true
	}
	top, status := s.fixed(s.width)
	paneMin := s.paneMin()
	question := s.st.view(s.width, s.height-len(top)-paneMin-len(status))
	pane := s.pane(s.height - len(top) - len(question) - len(status))
	lines := append(append(append(top, pane...), question...), status...)
	return fitView(strings.Join(lines, "\n"), s.width, s.height), true
}

// fixed is what never scrolls at width: the header, the facts and the
// stage's note above the rest, the status line below it.
func (s *tuiScreen) fixed(width int) (top, status []string) {
	if s.textWidth != width {
		s.words = wordsLines(s.cfg.styles, s.req, width)
		s.textWidth = width
	}
	if key := [2]int{width, s.factCommands}; s.factsFor != key {
		s.facts = factLines(s.cfg.styles, s.req, width, s.factCommands)
		s.factsFor = key
	}
	top = append(s.header(width), s.facts...)
	return append(top, s.st.note(width)...), s.status(width)
}

// viewerFrame is the viewer under the header, between a rule that says
// which lines it shows and the keys.
func (s *tuiScreen) viewerFrame() string {
	top := s.header(s.width)
	status := s.statusLines(s.width, "", "up/down pgup/pgdn home/end: scroll · esc or q: back to the question · ctrl+c: deny")
	rows := max(1, s.height-len(top)-len(status)-1)
	s.view.resize(s.width)
	text := s.view.view(rows)
	lines := append(top, s.rule(s.view.title()+" · "+s.view.position()))
	lines = append(append(lines, text...), make([]string, rows-len(text))...)
	return fitView(strings.Join(append(lines, status...), "\n"), s.width, s.height)
}

// minFactCommands is the fewest commands of a command line the facts
// list before the window counts as too small.
const minFactCommands = 3

// fitCommands chooses, once per window size, how many commands of a
// command line the facts list: form.MaxFactCommands, fewer when the
// prompt would not fit the window, down to minFactCommands. The facts
// count the others, and v lists them all.
func (s *tuiScreen) fitCommands() {
	if size := [2]int{s.width, s.height}; s.fitFor != size {
		s.fitFor = size
		width := max(s.width, tuiMinWidth)
		s.factCommands = form.MaxFactCommands
		for s.factCommands > minFactCommands && s.req.MostCommands() > minFactCommands && s.height < s.rowsAt(width) {
			s.factCommands--
		}
	}
}

// rowsAt is how many rows the prompt needs at width.
func (s *tuiScreen) rowsAt(width int) int {
	top, status := s.fixed(width)
	return max(tuiMinHeight, len(top)+s.paneMin()+s.st.minRows(width)+len(status))
}

// paneMin is the fewest lines the pane takes: its two rules and a few
// lines of the agent's words; nothing without words.
func (s *tuiScreen) paneMin() int {
	if len(s.words) == 0 {
		return 0
	}
	return 2 + min(tuiMinPane, len(s.words))
}

// header is the title with the countdown, then the hidden-characters
// warning when the request needs it.
func (s *tuiScreen) header(width int) []string {
	st := s.cfg.styles
	h := []string{st.bold.Render(tuiTitle)}
	if left := s.timeLeft(); left != "" {
		if gap := width - ansi.StringWidth(tuiTitle) - len(left); gap >= 1 {
			h[0] += strings.Repeat(" ", gap) + left
		} else {
			h = append(h, left)
		}
	}
	if s.hidden {
		for _, l := range hanging("WARNING: "+form.HiddenWarning, width) {
			h = append(h, st.warn.Render(l))
		}
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

// pane shows as much of the agent's words as rows lines hold, between two
// rules; the first says what the pane holds and which lines are shown.
func (s *tuiScreen) pane(rows int) []string {
	if len(s.words) == 0 {
		return nil
	}
	n := len(s.words)
	s.paneRows = min(max(0, rows-2), n)
	s.paneTop = min(max(0, s.paneTop), n-s.paneRows)
	label := "the agent's words, unverified"
	if s.paneRows < n {
		keys := "pgup/pgdn"
		if !s.pageKeysScrollPane() {
			keys = "ctrl+pgup/pgdn"
		}
		label += fmt.Sprintf(" · lines %d-%d of %d · %s", s.paneTop+1, s.paneTop+s.paneRows, n, keys)
	}
	if !s.st.typing() {
		label += " · v: in full"
	}
	lines := []string{s.rule(label)}
	lines = append(lines, s.words[s.paneTop:s.paneTop+s.paneRows]...)
	return append(lines, s.rule(""))
}

// rule is a horizontal line across the width, with label in it.
func (s *tuiScreen) rule(label string) string {
	if label != "" {
		label = " " + label + " "
	}
	rule := "──" + label + strings.Repeat("─", max(0, s.width-2-ansi.StringWidth(label)))
	return s.cfg.styles.faint.Render(ansi.Truncate(rule, s.width, ""))
}

// status shows why an answer was refused, or that input does not count
// yet, or the keys.
func (s *tuiScreen) status(width int) []string {
	return s.statusLines(width, s.st.problem(), s.st.legend())
}

func (s *tuiScreen) statusLines(width int, problem, legend string) []string {
	st := s.cfg.styles
	style, text := st.faint, legend
	switch p := problem; {
	case p != "":
		style, text = st.warn, "! "+form.Line(p)
	case !s.armed():
		text = tuiWaitHint
	}
	lines := hanging(text, width)
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

func (s *tuiScreen) smallView() string {
	msg := fmt.Sprintf("terminal too small for this request: resize to at least %dx%d; ctrl+c cancels",
		max(s.width, tuiMinWidth), s.needRows)
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

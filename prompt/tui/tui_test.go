package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/tty"
	"github.com/askperm/askperm/prompt"
)

// tuiWriteFile is testdata/requests/write-file.json, without the session.
func tuiWriteFile() *decision.Request {
	destructive, readOnly := true, false
	return &decision.Request{
		Server: "fs-default", Tool: "write_file", Source: "engine:1",
		Action: "write", ActionDescription: "Write a file",
		Reason: "Save the generated report.\nThe user asked for it in the last message.",
		Dimensions: []decision.Dimension{{
			Name: "path", Label: "File", Value: "/home/a/p/report.md",
			Scopes: []decision.Scope{
				{Label: "this file", Match: "/home/a/p/report.md", Kind: decision.KindExact},
				{Label: "files under /home/a/p/", Match: "/home/a/p/", Kind: decision.KindPrefix},
				{Label: "any file", Match: "*", Kind: decision.KindAny},
			},
		}},
		Workdir: &decision.Workdir{Value: "/home/a/p", Label: "project p"},
		Grants: []decision.Grant{
			{Name: "fs.write", Description: "write files in the workdir"},
			{Name: "fs.create", Description: "create new files", Implies: []string{"fs.write"}},
		},
		Details:     []decision.Detail{{Label: "content", Text: "# Report\n\n\tAll green.\n"}},
		Arguments:   []byte(`{"path":"/home/a/p/report.md","content":"# Report\n\n\tAll green.\n"}`),
		Annotations: &decision.Annotations{Title: "Write file", DestructiveHint: &destructive, ReadOnlyHint: &readOnly},
	}
}

// tuiHostile puts terminal controls, C1, CR and bidi characters in every
// string a person sees.
func tuiHostile() *decision.Request {
	const evil = "\x1b]0;pwned\a\x1b[2J\r\x1b[1A\u009b31m\u202eexe.txt\u200b\x1b]8;;https://evil.example/\adocs\x1b]8;;\a"
	return &decision.Request{
		Server: "fs" + evil, Alias: evil, Tool: "write_file" + evil, Source: evil,
		Action: "write" + evil, ActionDescription: evil, Reason: "line one\n" + evil + "\n\tend",
		Dimensions: []decision.Dimension{{
			Name: "path" + evil, Label: evil, Value: "/tmp/x" + evil,
			Scopes: []decision.Scope{
				{Label: "this" + evil, Match: "/tmp/x" + evil},
				{Label: "tmp" + evil, Match: "/tmp/", Kind: decision.KindPrefix},
			},
		}},
		Workdir:     &decision.Workdir{Value: "/w" + evil, Label: evil},
		Grants:      []decision.Grant{{Name: "fs.write\x1b]52;c;cm0gLXJmIH4=\a", Description: evil}},
		Details:     []decision.Detail{{Label: "diff\x1b[6n", Text: "+ good\n- bad\r+ \x1b[32mhidden\x1b[0m\ttab\n" + evil}},
		Arguments:   []byte(`{"cmd":"rm -rf ~/\r\u001b[1Als -la"}`),
		Annotations: &decision.Annotations{Title: evil},
	}
}

// tuiDriver runs a screen without a terminal, as bubbletea would: it feeds
// the screen messages and then what the commands it returns produce.
type tuiDriver struct {
	t       *testing.T
	s       *tuiScreen
	flushes int
	clock   time.Time
}

func newTUIDriver(t *testing.T, f *form.Form, st tuiStage, width, height int) *tuiDriver {
	t.Helper()
	t.Setenv("TERM", "xterm-256color") // huh forces a fixed width under TERM=dumb
	d := &tuiDriver{t: t, clock: time.Unix(1_700_000_000, 0)}
	d.s = newTUIScreen(f, st, screenConfig{
		styles:   newStyles(io.Discard, func(string) string { return "" }),
		deadline: d.clock.Add(20 * time.Second),
		armDelay: prompt.DefaultArmDelay,
		now:      func() time.Time { return d.clock },
		flush:    func() { d.flushes++ },
		width:    width,
		height:   height,
	})
	// Init's own commands are timers: the test sends their messages.
	d.run(d.s.initCmd)
	return d
}

func (d *tuiDriver) send(msgs ...tea.Msg) {
	for _, m := range msgs {
		_, cmd := d.s.Update(m)
		d.run(cmd)
	}
}

func (d *tuiDriver) arm() { d.send(tuiArmedMsg{}) }

// run runs cmd and the commands that follow from it. A command that does
// not answer at once is a timer (a cursor blink): its time never comes.
func (d *tuiDriver) run(cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msgs := make(chan tea.Msg, 1)
		go func() { msgs <- c() }()
		var msg tea.Msg
		select {
		case msg = <-msgs:
		case <-time.After(100 * time.Millisecond):
			continue
		}
		if cmds, ok := commands(msg); ok { // tea.Batch and tea.Sequence
			queue = append(queue, cmds...)
			continue
		}
		if _, ok := msg.(tea.QuitMsg); ok {
			continue
		}
		_, next := d.s.Update(msg)
		queue = append(queue, next)
	}
}

func commands(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return nil, false
	}
	cmds := make([]tea.Cmd, v.Len())
	for i := range cmds {
		cmds[i] = v.Index(i).Interface().(tea.Cmd)
	}
	return cmds, true
}

func (d *tuiDriver) screen() string { return ansi.Strip(d.s.View()) }

func (d *tuiDriver) wantScreen(texts ...string) {
	d.t.Helper()
	for _, text := range texts {
		if !strings.Contains(d.screen(), text) {
			d.t.Fatalf("screen lacks %q:\n%s", text, d.screen())
		}
	}
}

// wantFocus asserts the option under the select's cursor.
func (d *tuiDriver) wantFocus(label string) {
	d.t.Helper()
	d.wantScreen("> " + label)
}

func (d *tuiDriver) wantEnd(e tuiEnd) {
	d.t.Helper()
	if d.s.end != e {
		d.t.Fatalf("screen ended %d, want %d; screen:\n%s", d.s.end, e, d.screen())
	}
}

var (
	keyEnter = tea.KeyMsg{Type: tea.KeyEnter}
	keyUp    = tea.KeyMsg{Type: tea.KeyUp}
	keyDown  = tea.KeyMsg{Type: tea.KeyDown}
	keySpace = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
)

func keyRunes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestTUIChoiceAllowOnce(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.wantScreen("askperm — an agent asks for permission", "0:20 left", "Tool: write_file (from engine:1)",
		"Stated reason (unverified):", "│ Save the generated report.", "Allow once", "Allow always…", "Deny always…")
	d.wantFocus("Deny once")
	d.arm()
	d.send(keyUp, keyUp, keyUp)
	d.wantFocus("Allow once")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.AllowOnce {
		t.Fatalf("choice %q, want allow-once", a.Choice)
	}
}

func TestTUIArmingDelay(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowOnce // focused, as after a Back
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)

	d.send(keyEnter, keyEnter)
	d.wantEnd(tuiRunning)
	d.wantScreen("wait… allowing is possible in a moment")
	d.send(keyDown)
	d.wantFocus("Allow once") // unarmed: keys other than Enter are dropped
	if d.flushes != 0 {
		t.Fatalf("flushed %d times before the delay ended", d.flushes)
	}

	d.arm()
	if d.flushes != 1 {
		t.Fatalf("flushed %d times when the delay ended, want 1", d.flushes)
	}
	if strings.Contains(d.screen(), "wait…") {
		t.Fatalf("stale wait message after arming:\n%s", d.screen())
	}
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.AllowOnce {
		t.Fatalf("choice %q, want allow-once", a.Choice)
	}
}

func TestTUIDenyAtOnce(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.send(keyEnter) // unarmed: a deny may be confirmed
	d.wantScreen("Denial reason (optional)")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.DenyOnce || a.Message != "" {
		t.Fatalf("answer %+v, want deny once without message", a)
	}
}

func TestTUIDenyReason(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.arm()
	d.send(keyEnter, keyRunes("not now"), keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.DenyOnce || a.Message != "not now" {
		t.Fatalf("answer %+v, want deny once with message", a)
	}
}

// After a Back, stage choice starts from what was answered.
func TestTUIChoiceKeepsAnswer(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	a.Choice, a.Message = form.DenyAlways, "typed before"
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.wantFocus("Deny always…")
	d.send(keyEnter)
	d.wantScreen("typed before")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.DenyAlways || a.Message != "typed before" {
		t.Fatalf("answer %+v", a)
	}
}

func TestTUICancelKeys(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	for _, k := range []tea.KeyMsg{{Type: tea.KeyEsc}, {Type: tea.KeyCtrlC}} {
		a := f.Defaults()
		d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
		d.send(tea.KeyMsg{Type: tea.KeyCtrlZ})
		d.wantEnd(tuiRunning)
		d.send(k)
		d.wantEnd(tuiCancelled)
		if d.s.View() != "" {
			t.Fatalf("%s: the prompt stays on screen:\n%s", k, d.screen())
		}
	}
}

func TestTUIHangup(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.send(tuiHangupMsg{})
	d.wantEnd(tuiHungUp)
}

func TestTUIRuleStage(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowAlways
	r := newTUIRule(f, &a)
	d := newTUIDriver(t, f, r.tuiStage, 200, 50)
	d.wantScreen(`Rule to save: allow write_file, with File [path] exactly "/home/a/p/report.md", in workdir "/home/a/p", granting fs.write, fs.create, until removed`)
	d.arm()

	d.send(keySpace) // fs.write off
	d.wantScreen("granting fs.create,")
	d.send(keyEnter, keyDown)
	d.wantFocus(`files under /home/a/p/: anything under "/home/a/p/"`)
	d.send(keyEnter, keyDown)
	d.wantFocus("in any workdir (every configured workdir, including future ones)")
	d.send(keyEnter, keyDown)
	d.wantFocus("for 15 minutes")
	d.send(keyEnter)
	d.wantFocus("Save rule")
	d.wantScreen(`Rule to save: allow write_file, with File [path] anything under "/home/a/p/", in any workdir, granting fs.create, for 15 minutes`)
	d.send(keyEnter)
	d.wantEnd(tuiDone)

	r.store()
	if r.back() {
		t.Fatal("back after Save rule")
	}
	want := form.Answer{Choice: form.AllowAlways, Grants: []string{"fs.create"}, Scopes: map[string]string{"path": "/home/a/p/"},
		WorkdirScope: decision.WorkdirAll, Lifetime: "900"}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("answer %+v, want %+v", a, want)
	}
}

func TestTUIRuleNeedsAGrant(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowAlways
	r := newTUIRule(f, &a)
	d := newTUIDriver(t, f, r.tuiStage, 100, 40)
	d.arm()
	d.send(keySpace, keyDown, keySpace, keyEnter)
	d.wantScreen("! grants: choose at least one of the requested grants")
	d.send(keyEnter)
	d.wantFocus("[ ] fs.create") // still on the grants
}

func TestTUIRuleSaveWaitsForArming(t *testing.T) {
	for _, c := range []form.Choice{form.AllowAlways, form.DenyAlways} {
		f := form.New(tuiWriteFile(), form.Options{})
		a := f.Defaults()
		a.Choice = c
		r := newTUIRule(f, &a)
		d := newTUIDriver(t, f, r.tuiStage, 100, 40)
		for range 6 {
			d.send(keyEnter) // through every field, onto Save rule
		}
		if c.IsAllow() {
			d.wantEnd(tuiRunning)
			d.wantScreen("wait…")
			d.arm()
			d.send(keyEnter)
		}
		d.wantEnd(tuiDone)
		if r.back() {
			t.Fatalf("%s: back", c)
		}
	}
}

func TestTUIRuleBack(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	a.Choice = form.DenyAlways
	r := newTUIRule(f, &a)
	d := newTUIDriver(t, f, r.tuiStage, 100, 40)
	d.arm()
	if strings.Contains(d.screen(), "Grants the rule gives") {
		t.Fatalf("deny always asks for grants:\n%s", d.screen())
	}
	d.send(keyDown, keyEnter, keyEnter, keyEnter, keyDown)
	d.wantFocus("« Back")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	r.store()
	if !r.back() || a.Scopes["path"] != "/home/a/p/" {
		t.Fatalf("back %v, scopes %v", r.back(), a.Scopes)
	}
}

// A dimension with one scope is stated, not asked.
func TestTUIRuleSoleScope(t *testing.T) {
	req := tuiWriteFile()
	req.Dimensions = append(req.Dimensions, decision.Dimension{Name: "host", Value: "localhost",
		Scopes: []decision.Scope{{Label: "this host", Match: "localhost"}}})
	f := form.New(req, form.Options{})
	a := f.Defaults()
	a.Choice = form.DenyAlways
	d := newTUIDriver(t, f, newTUIRule(f, &a).tuiStage, 200, 50)
	d.wantScreen(`host: this host: exactly "localhost" (the only scope offered)`)
	if strings.Contains(d.screen(), "Which host") {
		t.Fatalf("the sole scope is asked:\n%s", d.screen())
	}
}

func TestTUICountdown(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.wantScreen("0:20 left")
	d.clock = d.clock.Add(5500 * time.Millisecond)
	d.send(tuiTickMsg{})
	d.wantScreen("0:15 left")
	d.clock = d.clock.Add(time.Minute)
	d.send(tuiTickMsg{})
	d.wantScreen("0:00 left")
}

func TestTUITooSmall(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 30, 10)
	d.arm()
	d.wantScreen("terminal too small", "at least 40×12", "0:20 left")
	if strings.Contains(d.screen(), "Deny once") {
		t.Fatalf("a partial prompt is drawn:\n%s", d.screen())
	}
	d.send(keyEnter, keyEnter) // nobody confirms what they cannot see
	d.wantEnd(tuiRunning)

	// A warning and a long rule need more rows than the minimum.
	d.send(tea.WindowSizeMsg{Width: 40, Height: 12})
	d.wantScreen("Deny once")
	hf := form.New(tuiHostile(), form.Options{})
	ha := hf.Defaults()
	h := newTUIDriver(t, hf, tuiChoice(hf, &ha), 40, 12)
	m := regexp.MustCompile(`at least\s+40×(\d+)`).FindStringSubmatch(h.screen())
	if m == nil {
		t.Fatalf("no minimum size:\n%s", h.screen())
	}
	if rows, _ := strconv.Atoi(m[1]); rows <= 12 {
		t.Fatalf("want a larger minimum for the warning:\n%s", h.screen())
	}

	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.send(keyEnter, keyEnter)
	d.wantEnd(tuiDone)
}

// The view never holds more than fits: bubbletea would cut wide lines and
// drop the top of tall views without a trace.
func TestTUIViewFits(t *testing.T) {
	long := tuiWriteFile()
	long.Details[0].Text = strings.Repeat("a long line of content that must wrap, ", 40) + "\n" + strings.Repeat("line\n", 100)
	long.Dimensions[0].Value = "/home/a/p/" + strings.Repeat("very-long-directory-name/", 12) + "report.md"
	for _, size := range [][2]int{{40, 12}, {80, 24}, {132, 43}, {300, 100}} {
		f := form.New(long, form.Options{})
		a := f.Defaults()
		a.Choice = form.AllowAlways
		for _, st := range []tuiStage{tuiChoice(f, &a), newTUIRule(f, &a).tuiStage} {
			d := newTUIDriver(t, f, st, size[0], size[1])
			for range 3 {
				view := d.s.View()
				lines := strings.Split(view, "\n")
				if len(lines) > size[1] {
					t.Fatalf("%v: %d lines:\n%s", size, len(lines), ansi.Strip(view))
				}
				for _, l := range lines {
					if w := ansi.StringWidth(l); w > size[0] {
						t.Fatalf("%v: line of %d cells: %q", size, w, ansi.Strip(l))
					}
				}
				d.send(tea.KeyMsg{Type: tea.KeyPgDown})
			}
		}
	}
}

func TestTUIPaneScrolls(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = strings.Repeat("line\n", 60) + "the last line\n"
	f := form.New(req, form.Options{})
	a := f.Defaults()
	d := newTUIDriver(t, f, tuiChoice(f, &a), 80, 24)
	d.wantScreen("request lines 1–")
	for range 10 {
		d.send(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	d.wantScreen("│ the last line", "Deny once")
	d.wantFocus("Deny once") // scrolling leaves the form alone
}

// sgr matches askperm's own styling, the only escape sequences it may send.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestTUIHostileText(t *testing.T) {
	f := form.New(tuiHostile(), form.Options{})
	if !f.HasHidden() {
		t.Fatal("the hostile request has no hidden characters")
	}
	a := f.Defaults()
	a.Choice = form.AllowAlways
	for _, st := range []tuiStage{tuiChoice(f, &a), newTUIRule(f, &a).tuiStage} {
		d := newTUIDriver(t, f, st, 80, 40)
		d.wantScreen("WARNING: This request contains hidden or reordering characters")
		for range 8 {
			view := d.s.View()
			for _, v := range []string{sgr.ReplaceAllString(view, ""), ansi.Strip(view)} {
				for _, bad := range []string{"\x1b", "\r", "\u009b", "\u202e", "\a", "\u200b"} {
					if strings.Contains(v, bad) {
						t.Fatalf("view holds %q:\n%q", bad, v)
					}
				}
			}
			d.send(tea.KeyMsg{Type: tea.KeyPgDown})
		}
	}
}

func TestTUIUnavailable(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	for _, env := range []map[string]string{{}, {"TERM": "dumb"}, {"TERM": "xterm"}} {
		fe := New(prompt.Options{TTY: "/nonexistent/tty", Getenv: func(k string) string { return env[k] }})
		start := time.Now()
		if _, err := fe.Ask(context.Background(), f); !errors.Is(err, prompt.ErrUnavailable) {
			t.Fatalf("env %v: %v, want unavailable", env, err)
		}
		if time.Since(start) > time.Second {
			t.Fatalf("env %v: unavailable only after %v", env, time.Since(start))
		}
	}
}

// tuiPTY is a fresh pseudo-terminal that is not the test's controlling
// terminal, for running the frontend on.
type tuiPTY struct {
	t        *testing.T
	ptm, pts *os.File
	before   *unix.Termios
	mu       sync.Mutex
	out      bytes.Buffer
}

func newTUIPTY(t *testing.T) *tuiPTY {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	ptm = nonblockingPTM(t, ptm)
	t.Cleanup(func() { ptm.Close(); pts.Close() })
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	p := &tuiPTY{t: t, ptm: ptm, pts: pts, before: before}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p
}

// nonblockingPTM returns ptm in non-blocking mode, so that closing it ends
// a pending Read and hangs the terminal up at once (a blocking Read would
// keep the descriptor open until something is written).
func nonblockingPTM(t *testing.T, ptm *os.File) *os.File {
	t.Helper()
	fd, err := unix.Dup(int(ptm.Fd()))
	ptm.Close()
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), "ptmx")
}

type tuiResult struct {
	a   form.Answer
	err error
}

// ask runs the frontend on the pty, with env as its environment.
func (p *tuiPTY) ask(ctx context.Context, f *form.Form, env map[string]string) <-chan tuiResult {
	fe := New(prompt.Options{TTY: p.pts.Name(), ArmDelay: 50 * time.Millisecond, Getenv: func(k string) string { return env[k] }})
	done := make(chan tuiResult, 1)
	go func() {
		a, err := fe.Ask(ctx, f)
		done <- tuiResult{a, err}
	}()
	return done
}

func (p *tuiPTY) waitFor(text string) {
	p.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		screen := ansi.Strip(p.out.String())
		p.mu.Unlock()
		if strings.Contains(screen, text) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q on the terminal:\n%s", text, screen)
		}
	}
}

func (p *tuiPTY) result(done <-chan tuiResult) tuiResult {
	p.t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		p.t.Fatal("Ask hung")
		return tuiResult{}
	}
}

// restored asserts that the terminal's settings are as they were.
func (p *tuiPTY) restored() {
	p.t.Helper()
	after, err := unix.IoctlGetTermios(int(p.pts.Fd()), unix.TCGETS)
	if err != nil {
		p.t.Fatal(err)
	}
	if !reflect.DeepEqual(p.before, after) {
		p.t.Fatalf("terminal settings changed:\n%+v\n%+v", p.before, after)
	}
}

func TestTUIOnPTY(t *testing.T) {
	env := map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}
	f := form.New(tuiWriteFile(), form.Options{})

	t.Run("allow always", func(t *testing.T) {
		p := newTUIPTY(t)
		done := p.ask(context.Background(), f, env)
		p.waitFor("Deny once")
		time.Sleep(100 * time.Millisecond) // the arming delay
		p.ptm.WriteString("\x1b[A\x1b[A")
		p.waitFor("> Allow always…")
		p.ptm.WriteString("\r")
		p.waitFor("Rule to save")
		time.Sleep(100 * time.Millisecond)
		for range 5 {
			p.ptm.WriteString("\r")
			time.Sleep(20 * time.Millisecond)
		}
		r := p.result(done)
		if r.err != nil || r.a.Choice != form.AllowAlways || !slices.Equal(r.a.Grants, []string{"fs.write", "fs.create"}) {
			t.Fatalf("answer %+v, %v", r.a, r.err)
		}
		p.restored()
		p.mu.Lock()
		defer p.mu.Unlock()
		if sgr.MatchString(p.out.String()) {
			t.Fatal("colours despite NO_COLOR")
		}
	})

	t.Run("hang-up", func(t *testing.T) {
		p := newTUIPTY(t)
		done := p.ask(context.Background(), f, env)
		p.waitFor("Deny once")
		p.ptm.Close()
		if r := p.result(done); !errors.Is(r.err, prompt.ErrCancelled) {
			t.Fatalf("%v, want cancelled", r.err)
		}
	})

	t.Run("context ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		p := newTUIPTY(t)
		done := p.ask(ctx, f, env)
		p.waitFor("0:03 left")
		if r := p.result(done); !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("%v, want the context's error", r.err)
		}
		p.restored()
	})
}

// A panic inside the UI is an internal error, not a dismissal, and the
// terminal is restored all the same.
func TestTUIPanicIsAnError(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	st := tuiStage{gate: &armGate{}, form: newHuhForm(huh.NewGroup(huh.NewSelect[string]().
		Options(huh.NewOption("boom", "boom")).
		Validate(func(string) error { panic("validator") })))}
	p := newTUIPTY(t)
	term, err := tty.Open(p.pts.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	done := make(chan tuiResult, 1)
	go func() { done <- tuiResult{err: (&tuiSession{term: term}).run(context.Background(), f, st)} }()
	p.waitFor("boom")
	p.ptm.WriteString("\r")
	if r := p.result(done); r.err == nil || errors.Is(r.err, prompt.ErrCancelled) || !strings.Contains(r.err.Error(), "panic") {
		t.Fatalf("%v, want an internal error", r.err)
	}
	p.restored()
}

func TestTUIRequestTextTruncated(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = strings.Repeat("x", form.PreviewChars+10)
	f := form.New(req, form.Options{})
	text := ansi.Strip(tuiRequestText(newStyles(io.Discard, nil), f, 200))
	for _, want := range []string{"showing 65536 of 65546 characters", "WARNING: only the first 65536 of 65546 characters are shown."} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the pane", want)
		}
	}
	for _, l := range strings.Split(ansi.Strip(tuiRequestText(newStyles(io.Discard, nil), f, 80)), "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
}

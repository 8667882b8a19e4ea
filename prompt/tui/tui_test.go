package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	xterm "golang.org/x/term"
	"golang.org/x/text/unicode/rangetable"

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

func testStyles() tuiStyles { return newStyles(io.Discard, nil) }

// tuiDriver runs a screen without a terminal, as bubbletea would: it feeds
// the screen messages and then what the commands it returns produce, on a
// clock of its own.
type tuiDriver struct {
	t     *testing.T
	s     *tuiScreen
	gate  *armGate
	clock time.Time
}

func newTUIDriver(t *testing.T, f *form.Form, st stage, width, height int) *tuiDriver {
	t.Helper()
	d := &tuiDriver{t: t, clock: time.Unix(1_700_000_000, 0)}
	now := func() time.Time { return d.clock }
	d.gate = newArmGate(prompt.DefaultArmDelay, now)
	d.s = newTUIScreen(f, st, screenConfig{
		styles:   testStyles(),
		deadline: d.clock.Add(20 * time.Second),
		now:      now,
		gate:     d.gate,
		width:    width,
		height:   height,
	})
	return d
}

func (d *tuiDriver) send(msgs ...tea.Msg) {
	for _, m := range msgs {
		_, cmd := d.s.Update(m)
		d.run(cmd)
	}
}

// arm puts the frame on the "terminal" and lets the arming delay pass.
func (d *tuiDriver) arm() {
	d.s.View()
	d.gate.wrote(d.clock)
	d.clock = d.clock.Add(d.gate.delay)
	d.send(tuiArmCheckMsg{d.s.armGen})
}

// run runs cmd and the commands that follow from it. A command that does
// not answer at once is a timer: its time never comes.
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
		case <-time.After(20 * time.Millisecond):
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

// wantFocus asserts the option under the list's cursor.
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
	keyEnter    = tea.KeyMsg{Type: tea.KeyEnter}
	keyUp       = tea.KeyMsg{Type: tea.KeyUp}
	keyDown     = tea.KeyMsg{Type: tea.KeyDown}
	keySpace    = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	keyShiftTab = tea.KeyMsg{Type: tea.KeyShiftTab}
	keyTab      = tea.KeyMsg{Type: tea.KeyTab}
	keyPgDown   = tea.KeyMsg{Type: tea.KeyPgDown}
	// keyPanePgDown pages the agent's words in either stage.
	keyPanePgDown = tea.KeyMsg{Type: tea.KeyCtrlPgDown}
)

// pause lets the arming delay pass on the driver's clock, as a person
// does between choosing an allow and confirming it.
func (d *tuiDriver) pause() { d.clock = d.clock.Add(d.gate.delay) }

func keyRunes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// choiceDriver shows stage choice of req at width×height.
func choiceDriver(t *testing.T, req *decision.Request, a *form.Answer, width, height int) *tuiDriver {
	f := form.New(req, form.Options{})
	if a.Choice == "" {
		*a = f.Defaults()
	}
	return newTUIDriver(t, f, newChoiceStage(testStyles(), f, a), width, height)
}

// ruleDriver shows stage rule of req for choice c.
func ruleDriver(t *testing.T, req *decision.Request, c form.Choice, width, height int) (*tuiDriver, *ruleStage, *form.Answer) {
	f := form.New(req, form.Options{})
	a := f.Defaults()
	a.Choice = c
	r := newRuleStage(testStyles(), f, &a)
	return newTUIDriver(t, f, r, width, height), r, &a
}

func TestTUIChoiceAllowOnce(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	d.wantScreen("askperm — an agent asks for permission", "0:20 left", "Tool: write_file (from engine:1)",
		"Value of File [path]: /home/a/p/report.md", "Grant: fs.create (implies fs.write)",
		"Stated reason (agent's words, unverified):", "│ Save the generated report.", "Allow once", "Allow always…", "Deny always…")
	d.wantFocus("Deny once")
	d.arm()
	d.send(keyUp, keyUp, keyUp)
	d.wantFocus("Allow once")
	d.send(keyEnter) // too soon after the move onto an allow
	d.wantEnd(tuiRunning)
	d.wantScreen(enterTooSoon)
	d.pause()
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.AllowOnce {
		t.Fatalf("choice %q, want allow-once", a.Choice)
	}
}

// The status line asks to wait until input counts, and says so again
// while input keeps arriving too early.
func TestTUIWaitHint(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	d.wantScreen(tuiWaitHint)
	d.arm()
	if strings.Contains(d.screen(), tuiWaitHint) {
		t.Fatalf("still waiting once armed:\n%s", d.screen())
	}
	d.wantScreen("up/down or the letter, one key at a time: choose · enter: confirm")
}

func TestTUIDenyReason(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	d.send(keyEnter)
	d.wantScreen("Chosen: Deny once", "Denial reason (optional)")
	d.send(keyRunes("not"), keySpace, keyRunes("nowx"), tea.KeyMsg{Type: tea.KeyBackspace})
	d.wantScreen("> not now")
	d.send(keyShiftTab) // back to the choice, the reason kept
	d.wantFocus("Deny once")
	d.send(keyTab)
	d.wantScreen("> not now")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Choice != form.DenyOnce || a.Message != "not now" {
		t.Fatalf("answer %+v, want deny once with message", a)
	}
}

// A reason longer than the field shows its end. The field takes no more
// characters than the protocol allows bytes; a reason within that many
// characters but longer in bytes is refused with the reason why, and
// taken once short enough.
func TestTUIDenyReasonTooLong(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	ys := strings.Repeat("y", form.MaxMessageBytes)
	d.send(keyEnter, keyRunes(ys+"the end"))
	d.wantScreen("> yyy")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Message != ys {
		t.Fatalf("message of %d bytes, want the first %d characters typed", len(a.Message), form.MaxMessageBytes)
	}

	a = form.Answer{}
	d = choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	const end = "the end"
	wide := strings.Repeat("é", form.MaxMessageBytes/len("é"))
	d.send(keyEnter, keyRunes(wide+end))
	d.wantScreen("éé" + end)
	d.send(keyEnter)
	d.wantEnd(tuiRunning)
	d.wantScreen("! message: longer than 4096 bytes")
	for range end {
		d.send(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if a.Message != wide {
		t.Fatalf("message of %d bytes, want %d", len(a.Message), len(wide))
	}
}

// After a Back, stage choice starts from what was answered.
func TestTUIChoiceKeepsAnswer(t *testing.T) {
	a := form.Answer{Choice: form.DenyAlways, Message: "typed before"}
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
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
	for _, k := range []tea.KeyMsg{{Type: tea.KeyEsc}, {Type: tea.KeyCtrlC}} {
		var a form.Answer
		d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
		d.send(tea.KeyMsg{Type: tea.KeyCtrlZ})
		d.wantEnd(tuiRunning)
		d.send(k)
		d.wantEnd(tuiCancelled)
		if d.s.View() != "" {
			t.Fatalf("%s: the prompt stays on screen:\n%s", k, d.screen())
		}
	}
}

// The focus moves between the ends of a list and never wraps around: Down
// from Deny once, the last choice, never reaches an allow.
func TestTUINoWrap(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	for range 7 {
		d.send(keyDown)
		d.wantFocus("Deny once")
	}
	for range 7 {
		d.send(keyUp)
	}
	d.wantFocus("Allow once")
	d.send(keyUp)
	d.wantFocus("Allow once")

	rd, _, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	rd.send(keyEnter) // to the scopes
	rd.send(keyUp)
	rd.wantFocus("this file")
	for range 5 {
		rd.send(keyDown)
	}
	rd.wantFocus("any file")
}

// keyTypes lists every key bubbletea knows.
func keyTypes() []tea.KeyType {
	var ts []tea.KeyType
	for t := tea.KeyType(-200); t < 200; t++ {
		if t.String() != "" {
			ts = append(ts, t)
		}
	}
	return ts
}

// strayKeys are keys askperm does not document for a list: every other
// key bubbletea knows, with and without Alt, every printable ASCII
// character and a letter of many scripts as text, pasted text, and the
// documented keys with Alt; under go test -short, every fifth of them.
func strayKeys() []tea.KeyMsg {
	documented := []tea.KeyType{tea.KeyUp, tea.KeyDown, tea.KeyEnter, tea.KeyTab, tea.KeyShiftTab,
		tea.KeyPgUp, tea.KeyPgDown, tea.KeyEsc, tea.KeyCtrlC, tea.KeyHome, tea.KeyEnd,
		tea.KeyCtrlPgUp, tea.KeyCtrlPgDown, tea.KeyCtrlHome, tea.KeyCtrlEnd}
	var ks []tea.KeyMsg
	for _, t := range keyTypes() {
		if t == tea.KeyCtrlBackslash {
			continue // askperm's chunk mark, removed from what is typed (TestStageInputMarks)
		}
		ks = append(ks, tea.KeyMsg{Type: t, Alt: true})
		if !slices.Contains(documented, t) && t != tea.KeyRunes && t != tea.KeySpace {
			ks = append(ks, tea.KeyMsg{Type: t})
		}
	}
	for r := rune(0x21); r < 0x7f; r++ {
		ks = append(ks, keyRunes(string(r)), tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: true})
	}
	for _, s := range []string{"é", "ж", "λ", "א", "ع", "ह", "漢", "ｇ", "😀", "git status", "/allow o", "allow", "y"} {
		ks = append(ks, keyRunes(s), tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true})
	}
	ks = append(ks, keySpace)
	if testing.Short() {
		var some []tea.KeyMsg
		for i := 0; i < len(ks); i += 5 {
			some = append(some, ks[i])
		}
		return some
	}
	return ks
}

// generated is how many generated cases a property test tries: n in the
// full suite, a fifth of them under go test -short.
func generated(n int) int {
	if testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// Only askperm's documented keys act. No other key answers or moves a
// list anywhere but to the stage's safe answer, in either stage, whatever
// is focused: a key that types nothing changes nothing; one that types
// (a letter that is no key of the question, pasted text, a space) is
// typing, which puts stage choice back on Deny once and stage rule on
// « Back, and says so.
func TestTUIOnlyDocumentedKeys(t *testing.T) {
	for _, focus := range []int{0, 2, 3} {
		var a form.Answer
		d := choiceDriver(t, tuiWriteFile(), &a, 80, 30)
		c := d.s.st.(*choiceStage)
		d.arm()
		for _, k := range strayKeys() {
			if r := letter(k); r != 0 && strings.ContainsRune("yandv", r) {
				continue // the choice list's letters
			}
			c.moveTo(focus, press{})
			before := d.screen()
			d.send(k)
			switch {
			case d.s.end != tuiRunning:
				t.Fatalf("key %q (%d, alt %v) answered", k.String(), k.Type, k.Alt)
			case printable(k) && !k.Alt:
				if c.choice != form.DenyOnce || !strings.Contains(d.screen(), typingIgnored) {
					t.Fatalf("typed %q left the focus on %s:\n%s", k.String(), c.choice, d.screen())
				}
			case d.screen() != before:
				t.Fatalf("key %q (%d, alt %v) acted on the choice list:\n%s", k.String(), k.Type, k.Alt, d.screen())
			}
			d.pause()
		}
	}
	rd, r, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	rd.arm()
	last := len(r.qs)
	for q := range r.lists {
		for _, k := range strayKeys() {
			if r.lists[q].multi && k.Type == tea.KeySpace && !k.Alt {
				continue // Space toggles a grant
			}
			if l := letter(k); l != 0 && strings.ContainsRune("sbv", l) {
				continue // stage rule's letters
			}
			r.lists[last].cursor = 0
			before, cur := rd.screen(), r.cur
			rd.send(k)
			switch {
			case rd.s.end != tuiRunning || !reflect.DeepEqual(r.cur, cur) || r.focus != q:
				t.Fatalf("question %d: key %q (alt %v) acted:\n%s", q, k.String(), k.Alt, rd.screen())
			case printable(k) && !k.Alt:
				if !r.back() || !strings.Contains(rd.screen(), typingIgnored) {
					t.Fatalf("question %d: typed %q, and Save rule is still chosen:\n%s", q, k.String(), rd.screen())
				}
			case rd.screen() != before:
				t.Fatalf("question %d: key %q (alt %v) acted:\n%s", q, k.String(), k.Alt, rd.screen())
			}
			rd.pause()
		}
		rd.send(keyTab)
	}
}

// fieldRecorder stands between the choice stage and one of its huh
// fields and records the keys the stage gives the field.
type fieldRecorder struct {
	huh.Field
	keys []tea.KeyMsg
}

func (r *fieldRecorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		r.keys = append(r.keys, k)
	}
	return r.Field.Update(msg)
}

// recordFields puts recorders between c and its fields.
func recordFields(c *choiceStage) (pick, text *fieldRecorder) {
	pick, text = &fieldRecorder{Field: c.pick}, &fieldRecorder{Field: c.text}
	c.pick, c.text = pick, text
	return pick, text
}

// The huh Select gets Up and Down alone (askperm's moves: the arrows,
// Home, End, the letters, typing's return to Deny once), and neither
// where it would wrap around: from every option, no other key of any
// kind, with or without Alt, typed or pasted (letters, "/", "g", Enter,
// Tab), reaches it, and Down from the last option or Up from the first
// leaves the choice. The
// Select has huh's own key map here, under which those keys would jump,
// filter, confirm or wrap.
func TestTUIChoiceSelectGetsOnlyArrows(t *testing.T) {
	choices := form.New(tuiWriteFile(), form.Options{}).Choices()
	for i, want := range choices {
		for _, end := range []tea.KeyMsg{keyTab, keyEnter} {
			a := form.Answer{Choice: want}
			d := choiceDriver(t, tuiWriteFile(), &a, 80, 30)
			c := d.s.st.(*choiceStage)
			c.pick.WithKeyMap(huh.NewDefaultKeyMap())
			pick, _ := recordFields(c)
			d.arm()
			there, back := keyUp, keyDown
			switch i {
			case 0:
				d.send(keyUp)
				there, back = keyDown, keyUp
			case len(choices) - 1:
				d.send(keyDown)
			}
			if c.choice != want {
				t.Fatalf("from %s: an arrow wrapped around to %s", want, c.choice)
			}
			d.send(there, back)
			for _, k := range append(strayKeys(), keyRunes("/"), keyRunes("g"), keyRunes("G"), end) {
				d.send(k)
			}
			if !reflect.DeepEqual(pick.keys[:2], []tea.KeyMsg{there, back}) || d.s.end == tuiDone && c.choice.IsAllow() {
				t.Fatalf("from %s, ending with %s: the Select got %q and chose %s", want, end, pick.keys, c.choice)
			}
			for _, k := range pick.keys {
				if k.Type != tea.KeyUp && k.Type != tea.KeyDown || k.Alt || len(k.Runes) > 0 {
					t.Fatalf("from %s: the Select got %q", want, k.String())
				}
			}
		}
	}
}

// The Select's own key map binds only the arrows: were the stage to pass
// it any other key (Enter, Tab, Esc, letters, "/", "g", Home, Ctrl-N ...),
// from any option, it would neither move, filter nor confirm.
func TestTUIChoiceSelectKeyMap(t *testing.T) {
	f := form.New(tuiWriteFile(), form.Options{})
	var keys []tea.KeyMsg
	for _, kt := range keyTypes() {
		if kt != tea.KeyUp && kt != tea.KeyDown {
			keys = append(keys, tea.KeyMsg{Type: kt})
		}
	}
	keys = append(keys, strayKeys()...)
	for _, want := range f.Choices() {
		a := form.Answer{Choice: want}
		c := newChoiceStage(testStyles(), f, &a)
		before := c.view(80, 30)
		for _, k := range keys {
			_, cmd := c.pick.Update(k)
			c.drawn = nil // the Select got the key behind the stage's back: draw it anew
			if cmd != nil || c.choice != want || !slices.Equal(c.view(80, 30), before) {
				t.Fatalf("from %s: key %q (%d) acted on the Select: %s", want, k.String(), k.Type, c.choice)
			}
		}
	}
}

// The huh Input gets only text, marked as pasted, Backspace and the
// cursor keys: never Enter, Tab, Shift+Tab, Up or Down. Text that names a
// key is typed as it is.
func TestTUIReasonGetsOnlyText(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 30)
	d.arm()
	d.send(keyEnter)
	c := d.s.st.(*choiceStage)
	_, text := recordFields(c)
	var want strings.Builder
	for _, s := range []string{"home", "end", "ctrl+a", "ctrl+e", "ctrl+v", "ctrl+u", "ctrl+w", "ctrl+k",
		"left", "backspace", "enter", "tab", "shift+tab", "up", "esc", "/", "g", "G"} {
		d.send(keyRunes(s), keyTab, keyUp, keyDown, keySpace)
		want.WriteString(s + " ")
	}
	for _, k := range []tea.KeyType{tea.KeyLeft, tea.KeyLeft, tea.KeyBackspace, tea.KeyRight} {
		c.key(press{KeyMsg: tea.KeyMsg{Type: k}}) // to the stage directly
	}
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	typed := want.String()
	if wantMsg := typed[:len(typed)-3] + typed[len(typed)-2:]; a.Message != wantMsg {
		t.Fatalf("reason %q, want %q", a.Message, wantMsg)
	}
	for _, k := range text.keys {
		if k.Type == tea.KeyRunes && !k.Paste || !slices.Contains([]tea.KeyType{tea.KeyRunes, tea.KeyBackspace, tea.KeyLeft, tea.KeyRight}, k.Type) {
			t.Fatalf("the Input got %q (type %d, paste %v)", k.String(), k.Type, k.Paste)
		}
	}
}

// unicodeClasses are whole categories of characters, as text to type.
var unicodeClasses = map[string]*unicode.RangeTable{
	"Cc": unicode.Cc, "Cf": unicode.Cf, "Zs": unicode.Zs, "Zl": unicode.Zl, "Zp": unicode.Zp,
	"Co": unicode.Co, "Mn": unicode.Mn, "Me": unicode.Me, "Sk": unicode.Sk, "Lo": unicode.Lo, "So": unicode.So,
}

// The reason takes only what askperm draws as it is: characters askperm
// escapes as hidden never reach the Input, which drops controls and
// U+FFFD and turns tabs and line breaks into spaces; every other
// character is kept. No frame holds a control character but line breaks.
func TestTUIReasonDropsHidden(t *testing.T) {
	for name, class := range unicodeClasses {
		var runes []rune
		rangetable.Visit(class, func(r rune) { runes = append(runes, 'x', r) })
		for len(runes) > 0 {
			chunk := runes[:min(len(runes), 2*(form.MaxMessageBytes/(1+utf8.UTFMax)))] // never too long
			runes = runes[len(chunk):]
			var a form.Answer
			d := choiceDriver(t, tuiWriteFile(), &a, 80, 30)
			d.send(keyEnter, tea.KeyMsg{Type: tea.KeyRunes, Runes: chunk, Paste: true})
			frame := sgr.ReplaceAllString(d.s.View(), "")
			if i := strings.IndexFunc(frame, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
				t.Fatalf("%s: the frame holds %q", name, frame[i:])
			}
			d.send(keyEnter)
			if want := keptText(chunk); a.Message != want {
				t.Fatalf("%s: reason %+q, want %+q", name, a.Message, want)
			}
		}
	}
}

// keptText is what the reason keeps of typed text.
func keptText(typed []rune) string {
	var b strings.Builder
	for _, r := range typed {
		switch {
		case form.Hidden(string(r)) || r == utf8.RuneError:
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case !unicode.IsControl(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The huh fields draw with the prompt's own renderer: the colours its
// terminal and environment allow (here forced), where lipgloss's default
// renderer, on the test's output, would draw none.
func TestTUIHuhThemeOnPromptRenderer(t *testing.T) {
	env := map[string]string{"TERM": "xterm", "CLICOLOR_FORCE": "1"}
	st := newStyles(io.Discard, func(k string) string { return env[k] })
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	c := newChoiceStage(st, f, &a)
	view := strings.Join(c.view(80, 30), "\n")
	c.key(press{KeyMsg: keyEnter})
	view += strings.Join(c.view(80, 30), "\n")
	for _, want := range []string{st.border, st.theme.Focused.SelectSelector.String(), st.theme.Focused.TextInput.Prompt.Render("> ")} {
		if !sgr.MatchString(want) || !strings.Contains(view, want) {
			t.Fatalf("no %q in the view:\n%q", want, view)
		}
	}
}

// parseKeys is how bubbletea reads typed text: its own parser, through a
// program that records the keys.
func parseKeys(t *testing.T, typed string) []tea.KeyMsg {
	t.Helper()
	rec := &keyRecorder{}
	const end = "\x1b[24~" // F12 ends the recording
	p := tea.NewProgram(rec, tea.WithInput(strings.NewReader(typed+end)), tea.WithOutput(io.Discard),
		tea.WithoutRenderer(), tea.WithoutSignalHandler())
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
	return rec.keys
}

type keyRecorder struct{ keys []tea.KeyMsg }

func (r *keyRecorder) Init() tea.Cmd { return nil }
func (r *keyRecorder) View() string  { return "" }
func (r *keyRecorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		if k.Type == tea.KeyF12 {
			return r, tea.Quit
		}
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// typedLines are commands typed for another program, each ending in
// Enter: named ones and generated lines of every printable ASCII
// character.
func typedLines(rng *rand.Rand) []string {
	lines := []string{"git status\r", "/allow o\r", "/allow\r", "y\r", "yes\r", "a\r", "\t\r", " \r", "ggg\r", "GG\r", "jjjj\r", "kk\r", "\x0e\x10\r"}
	for range 40 {
		b := make([]byte, 1+rng.IntN(30))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5f))
		}
		lines = append(lines, string(b)+"\r")
	}
	return lines
}

// Typing meant for another program never approves: from Deny once, a
// typed line and Enter at most open the denial reason and confirm a deny.
func TestTUITypedLinesNeverAllow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, line := range typedLines(rng) {
		var a form.Answer
		d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
		d.arm()
		for _, k := range append(parseKeys(t, line), parseKeys(t, line)...) {
			d.send(k)
		}
		if a.Choice.IsAllow() || d.s.end == tuiDone && a.Choice != form.DenyOnce {
			t.Fatalf("typing %q answered %+v", line, a)
		}
	}
}

func TestTUIRuleStage(t *testing.T) {
	d, r, a := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 200, 50)
	d.wantScreen("Rule to save: " + r.f.RuleSummary(*a))
	d.arm()

	d.send(keySpace) // fs.write off
	d.wantScreen("> [ ] fs.write")
	d.send(keyEnter, keyDown)
	d.wantFocus(`files under /home/a/p/: anything under "/home/a/p/"`)
	d.send(keyEnter, keyDown)
	d.wantFocus("in any workdir (every configured workdir, including future ones)")
	d.send(keyEnter, keyDown)
	d.wantFocus("for 15 minutes")
	d.send(keyEnter)
	d.wantFocus("Save rule")
	want := form.Answer{Choice: form.AllowAlways, Grants: []string{"fs.create"}, Scopes: map[string]string{"path": "/home/a/p/"},
		WorkdirScope: decision.WorkdirAll, Lifetime: "900"}
	d.wantScreen("Rule to save: " + r.f.RuleSummary(want)) // the rule as it stands
	d.send(keyTab)                                         // Tab never confirms
	d.wantEnd(tuiRunning)
	d.send(keyEnter) // too soon after the focus came to Save rule
	d.wantEnd(tuiRunning)
	d.pause()
	d.send(keyEnter)
	d.wantEnd(tuiDone)

	if r.back() {
		t.Fatal("back after Save rule")
	}
	if !reflect.DeepEqual(*a, want) {
		t.Fatalf("answer %+v, want %+v", *a, want)
	}
}

func TestTUIRuleNeedsAGrant(t *testing.T) {
	d, _, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	d.arm()
	d.send(keySpace, keyDown, keySpace, keyEnter)
	d.wantScreen("! grants: choose at least one of the requested grants")
	d.send(keyTab)
	d.wantFocus("[ ] fs.create") // still on the grants
	d.send(keySpace)
	if strings.Contains(d.screen(), "! grants") {
		t.Fatalf("stale error:\n%s", d.screen())
	}
	d.send(keyTab)
	d.wantScreen("┃ Which File [path] the rule covers")
	d.send(keyShiftTab)
	d.wantFocus("[x] fs.create")
}

func TestTUIRuleBack(t *testing.T) {
	d, r, a := ruleDriver(t, tuiWriteFile(), form.DenyAlways, 100, 40)
	d.arm()
	if strings.Contains(d.screen(), "Grants the rule gives") {
		t.Fatalf("deny always asks for grants:\n%s", d.screen())
	}
	d.send(keyDown, keyEnter, keyEnter, keyEnter, keyDown)
	d.wantFocus("« Back")
	d.send(keyEnter)
	d.wantEnd(tuiDone)
	if !r.back() || a.Scopes["path"] != "/home/a/p/" {
		t.Fatalf("back %v, scopes %v", r.back(), a.Scopes)
	}
}

// A dimension with one scope is stated, not asked.
func TestTUIRuleSoleScope(t *testing.T) {
	req := tuiWriteFile()
	req.Dimensions = append(req.Dimensions, decision.Dimension{Name: "host", Value: "localhost",
		Scopes: []decision.Scope{{Label: "this host", Match: "localhost"}}})
	d, _, _ := ruleDriver(t, req, form.DenyAlways, 200, 50)
	d.wantScreen(`Not asked: host: this host: exactly "localhost" (the only scope offered)`)
	if strings.Contains(d.screen(), "Which host") {
		t.Fatalf("the sole scope is asked:\n%s", d.screen())
	}
}

func TestTUICountdown(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 24)
	d.wantScreen("0:20 left")
	d.clock = d.clock.Add(5500 * time.Millisecond)
	d.send(tuiTickMsg{})
	d.wantScreen("0:15 left")
	d.clock = d.clock.Add(time.Minute)
	d.send(tuiTickMsg{})
	d.wantScreen("0:00 left")
}

// A terminal too small for the facts, the question and a few lines of the
// agent's words shows only how large it must be, and nothing of the
// request; its keys are dropped.
func TestTUITooSmall(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 30, 10)
	d.arm()
	d.wantScreen("terminal too small", "0:20 left")
	m := regexp.MustCompile(`at least\s+40x(\d+)`).FindStringSubmatch(d.screen())
	if m == nil {
		t.Fatalf("no size:\n%s", d.screen())
	}
	d.send(keyUp, keyEnter, keyEnter) // nobody confirms what they cannot see
	d.wantEnd(tuiRunning)
	d.send(tea.WindowSizeMsg{Width: 40, Height: atoi(t, m[1]) - 1})
	d.wantScreen("terminal too small")
	d.send(tea.WindowSizeMsg{Width: 40, Height: atoi(t, m[1])})
	d.wantScreen("Server: fs-default")
	d.wantFocus("Deny once")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// requestTexts lists the request's own strings that a person sees.
func requestTexts(r *decision.Request) []string {
	texts := []string{r.Server, r.Tool, r.Action, r.ActionDescription}
	for _, d := range r.Dimensions {
		texts = append(texts, d.Value)
	}
	for _, g := range r.Grants {
		texts = append(texts, g.Name)
	}
	return texts
}

// Facts that do not fit at any size a terminal has (a thousand grants)
// leave only the size message, in both stages: never a partial prompt.
func TestTUIFactsTooLarge(t *testing.T) {
	req := tuiWriteFile()
	for i := range 300 {
		req.Grants = append(req.Grants, decision.Grant{Name: fmt.Sprintf("grant.%03d", i)})
	}
	f := form.New(req, form.Options{})
	a := f.Defaults()
	a.Choice = form.AllowAlways
	for _, st := range []stage{newChoiceStage(testStyles(), f, &a), newRuleStage(testStyles(), f, &a)} {
		d := newTUIDriver(t, f, st, 200, 60)
		d.arm()
		d.wantScreen("terminal too small")
		for _, text := range append(requestTexts(req), "Deny once", "Grants the rule gives") {
			if strings.Contains(d.screen(), text) {
				t.Fatalf("the size message shows %q:\n%s", text, d.screen())
			}
		}
	}
}

// The view never holds more than fits: bubbletea would cut wide lines and
// drop the top of tall views without a trace.
func TestTUIViewFits(t *testing.T) {
	long := tuiWriteFile()
	long.Details[0].Text = strings.Repeat("a long line of content that must wrap, ", 40) + "\n" + strings.Repeat("line\n", 100)
	long.Dimensions[0].Value = "/home/a/p/" + strings.Repeat("very-long-directory-name/", 12) + "report.md"
	for _, size := range [][2]int{{40, 30}, {80, 24}, {132, 43}, {300, 100}} {
		f := form.New(long, form.Options{})
		a := f.Defaults()
		a.Choice = form.AllowAlways
		for _, st := range []stage{newChoiceStage(testStyles(), f, &a), newRuleStage(testStyles(), f, &a)} {
			d := newTUIDriver(t, f, st, size[0], size[1])
			for range 3 {
				wantFits(t, d.s.View(), size[0], size[1])
				d.send(keyPgDown)
			}
		}
	}
}

func wantFits(t *testing.T, view string, width, height int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > height {
		t.Fatalf("%dx%d: %d lines:\n%s", width, height, len(lines), ansi.Strip(view))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Fatalf("%dx%d: line of %d cells: %q", width, height, w, ansi.Strip(l))
		}
	}
}

func TestTUIPaneScrolls(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = strings.Repeat("line\n", 60) + "the last line\n"
	var a form.Answer
	d := choiceDriver(t, req, &a, 80, 24)
	d.wantScreen("the agent's words, unverified · lines 1-")
	for range 20 {
		d.send(keyPgDown)
	}
	d.wantScreen("│ the last line", "Deny once")
	d.wantFocus("Deny once") // scrolling leaves the question alone
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
	for _, st := range []stage{newChoiceStage(testStyles(), f, &a), newRuleStage(testStyles(), f, &a)} {
		d := newTUIDriver(t, f, st, 80, 60)
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
			d.send(keyPgDown)
		}
	}
}

// Layout classes. Every word of a generated request is made of the
// letters of requestAlphabet, which askperm's own lines never start with;
// fake labels ("Tool: ZQX…") are planted in the free text, padded so that
// wrapping at one of the widths tried would start them at column 0.
const requestAlphabet = "ZQX漢字⟨\\"

var plantedLabels = []string{"Server", "Tool", "Action", "Value of Command [command]", "Workdir", "Grant",
	"Rule to save", "Title (agent's words)", "Stated reason (agent's words, unverified)"}

// planted follows every planted label.
const planted = "ZQXplanted"

// plantedAtColumn0 matches a planted fake label at the start of a line.
// A line that starts with the headline's mark is askperm's question.
var plantedAtColumn0 = regexp.MustCompile(`^[^│┃» ][^:]*: ` + planted)

var layoutWidths = []int{40, 57, 80, 81, 120}

// hostileText is free text of up to pieces pieces: words, wide
// characters, runs of spaces, tabs and line breaks (when multi), planted
// labels.
func hostileText(rng *rand.Rand, multi bool, pieces int) string {
	var b strings.Builder
	for range 1 + rng.IntN(pieces) {
		switch rng.IntN(6) {
		case 0: // a run that fills a wrapped line to the end
			w := layoutWidths[rng.IntN(len(layoutWidths))] - gutterWidth - rng.IntN(3)
			if rng.IntN(2) == 0 {
				b.WriteString(strings.Repeat("ZQX", w/3) + strings.Repeat("Z", w%3))
			} else {
				b.WriteString(strings.Repeat("漢", w/2))
			}
			b.WriteString(" ")
		case 1:
			b.WriteString(plantedLabels[rng.IntN(len(plantedLabels))] + ": " + planted + " go test ./... ")
		case 2:
			b.WriteString(strings.Repeat(" ", 1+rng.IntN(12)))
		case 3:
			if multi {
				b.WriteString([]string{"\n", "\t", "\n\n  "}[rng.IntN(3)])
			}
		default:
			b.WriteString(strings.Repeat("ZQX", 1+rng.IntN(5)) + "字 ")
		}
	}
	return b.String()
}

// hostileRequest is a request whose every string is of the alphabet,
// its free text long and planted, its facts and options shorter.
func hostileRequest(rng *rand.Rand) *decision.Request {
	short := func() string { return hostileText(rng, false, 2) }
	long := func(multi bool) string { return hostileText(rng, multi, 12) }
	req := &decision.Request{
		Server: "ZQXsrv", Tool: "ZQXtool", Source: "ZQXsrc", Action: "ZQXexec",
		ActionDescription: long(false),
		Reason:            long(true),
		Dimensions: []decision.Dimension{{Name: "ZQXcommand", Label: "ZQXCommand", Value: short(),
			Scopes: []decision.Scope{{Label: "ZQXexact", Match: "ZQXa"}, {Label: short(), Match: "ZQXb", Kind: decision.KindPrefix}}}},
		Grants:      []decision.Grant{{Name: "ZQXgrant", Description: long(false)}},
		Arguments:   []byte(fmt.Sprintf(`{"ZQXcmd":%q}`, long(true))),
		Annotations: &decision.Annotations{Title: long(false)},
		Workdir:     &decision.Workdir{Value: "ZQXwd", Label: long(false)},
	}
	for range rng.IntN(6) {
		req.Details = append(req.Details, decision.Detail{Label: "ZQX" + short(), Text: long(true)})
	}
	return req
}

// Request text never starts at column 0 and the facts are always on the
// first screen, above the pane, where scrolling never moves them: for
// generated requests, in both stages, at many sizes, on every page.
func TestTUIRequestTextNeverAtColumn0(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 30 {
		req := hostileRequest(rng)
		f := form.New(req, form.Options{})
		a := f.Defaults()
		a.Choice = form.AllowAlways
		for _, width := range layoutWidths {
			for _, st := range []stage{newChoiceStage(testStyles(), f, &a), newRuleStage(testStyles(), f, &a)} {
				d := newTUIDriver(t, f, st, width, 80)
				facts := factLines(testStyles(), f, width, form.MaxFactCommands)
				for page := 0; ; page++ {
					lines := strings.Split(d.screen(), "\n")
					wantNoRequestAtColumn0(t, lines)
					if d.s.small {
						t.Fatalf("%d: too small for short facts:\n%s", width, d.screen())
					}
					header := len(d.s.header(width))
					if !slices.Equal(lines[header:header+len(facts)], facts) {
						t.Fatalf("%d: page %d: facts not at the top:\n%s", width, page, d.screen())
					}
					if d.s.paneTop+d.s.paneRows >= len(d.s.words) {
						break
					}
					d.send(keyPanePgDown)
				}
			}
		}
	}
}

func wantNoRequestAtColumn0(t *testing.T, lines []string) {
	t.Helper()
	for _, l := range lines {
		if r, _ := utf8.DecodeRuneInString(l); strings.ContainsRune(requestAlphabet, r) || plantedAtColumn0.MatchString(l) {
			t.Fatalf("request text at column 0: %q\n%s", l, strings.Join(lines, "\n"))
		}
	}
}

// The facts' own long values wrap behind the gutter too.
func TestTUILongFactsWrapBehindTheGutter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		req := hostileRequest(rng)
		req.Server = hostileText(rng, false, 12)
		req.Tool = hostileText(rng, false, 12)
		req.Dimensions[0].Label = "ZQX" + strings.ReplaceAll(hostileText(rng, false, 12), ":", "")
		req.Dimensions[0].Value = hostileText(rng, false, 12)
		for _, width := range layoutWidths {
			wantNoRequestAtColumn0(t, factLines(testStyles(), form.New(req, form.Options{}), width, form.MaxFactCommands))
		}
	}
}

// optionLine is a line of a list below its title: an option's first line
// (the cursor or its room, a grant's mark, the option's start), a further
// line of it behind the gutter, or how many more there are.
var optionLine = regexp.MustCompile(`^┃ ((> |  )(\[[ x]\] )?ZQX|  (    )?│ |\(\d+ more (above|below)\)$|$)`)

// A long option wraps behind the gutter: no line of one option can pass
// for another option, whatever its label plants.
func TestTUIOptionTailsBehindTheGutter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 10 {
		req := hostileRequest(rng)
		req.Dimensions[0].Scopes = nil
		req.Grants = nil
		for i := range 30 {
			label := "ZQX" + hostileText(rng, false, 6)
			req.Dimensions[0].Scopes = append(req.Dimensions[0].Scopes, decision.Scope{Label: label, Match: fmt.Sprintf("ZQX%d", i)})
			req.Grants = append(req.Grants, decision.Grant{Name: fmt.Sprintf("ZQX%d", i), Description: label})
		}
		for _, width := range layoutWidths {
			d, r, _ := ruleDriver(t, req, form.AllowAlways, width, 200)
			for q := range r.qs[:2] { // the grants and the scopes: request text
				if d.s.small {
					t.Fatalf("%d: too small:\n%s", width, d.screen())
				}
				lines := strings.Split(ansi.Strip(strings.Join(r.view(width, 100), "\n")), "\n")
				for _, l := range lines[len(r.lists[q].titleLines(width)):] {
					if !optionLine.MatchString(l) {
						t.Fatalf("%d: question %d: line %q is no option's:\n%s", width, q, l, strings.Join(lines, "\n"))
					}
				}
				d.send(keyTab)
			}
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

// A terminal that reports no rows or no columns is not used: the
// frontend is unavailable, saying why, and draws nothing.
func TestTUIZeroSize(t *testing.T) {
	for _, size := range []pty.Winsize{{Rows: 0, Cols: 0}, {Rows: 0, Cols: 80}, {Rows: 24, Cols: 0}} {
		p := newTUIPTY(t)
		if err := pty.Setsize(p.ptm, &size); err != nil {
			t.Fatal(err)
		}
		r := p.result(p.ask(context.Background(), form.New(tuiWriteFile(), form.Options{}), map[string]string{"TERM": "xterm"}))
		if !errors.Is(r.err, prompt.ErrUnavailable) || !strings.Contains(r.err.Error(), fmt.Sprintf("size as %dx%d", size.Cols, size.Rows)) {
			t.Fatalf("%dx%d: %v, want unavailable naming the size", size.Cols, size.Rows, r.err)
		}
		p.restored()
		if out := p.output(); out != "" {
			t.Fatalf("%dx%d: drew %q", size.Cols, size.Rows, out)
		}
	}
}

func TestArmGate(t *testing.T) {
	clock := time.Unix(0, 0)
	at := func(ms int) time.Time { return clock.Add(time.Duration(ms) * time.Millisecond) }
	now := clock
	g := newArmGate(500*time.Millisecond, func() time.Time { return now })
	step := func(ms int, f func()) { now = at(ms); f() }

	if g.admit(at(0)) {
		t.Fatal("input counts before anything was drawn")
	}
	step(10, func() { g.rendered(true) })
	if g.admit(at(20)) {
		t.Fatal("input counts before the frame was written")
	}
	step(5, func() { g.wrote(at(5)) }) // a write begun before the frame
	if _, ok := g.armedAt(); ok {
		t.Fatal("an older frame's write showed the question")
	}
	step(100, func() { g.wrote(at(90)) })
	for _, ms := range []int{100, 400, 599} {
		if g.admit(at(ms)) {
			t.Fatalf("input at %d ms counts within the delay", ms)
		}
	}
	if armed, _ := g.armedAt(); !armed.Equal(at(1099)) {
		t.Fatalf("armed at %v, want 1099 ms: each early input restarts the delay", armed.Sub(clock))
	}
	if g.admit(at(1098)) || !g.admit(at(1700)) || !g.admit(at(1701)) {
		t.Fatal("input after a pause does not count, or stops counting")
	}
	// Too small: the question leaves the screen once that frame is written.
	step(2000, func() { g.rendered(false) })
	if !g.admit(at(2001)) {
		t.Fatal("input stops counting before the smaller frame is written")
	}
	step(2010, func() { g.wrote(at(2005)) })
	if g.admit(at(3000)) {
		t.Fatal("input counts while the question is not on the terminal")
	}
	step(3100, func() { g.rendered(true) })
	step(3110, func() { g.wrote(at(3105)) })
	if g.admit(at(3500)) || !g.admit(at(4000)) {
		t.Fatal("the delay does not start again when the question is back")
	}
}

// Input is judged when it arrives, whatever the reader is doing: keys
// typed within the delay are lost even when nothing reads them until
// long after it (a burst leaves its mark alone), later keys count, Ctrl-C always passes, a stage's input
// ends when it detaches, and a hang-up ends it with errHungUp.
func TestKeySource(t *testing.T) {
	p := newTUIPTY(t)
	keys := p.rawKeys().keys
	gate := newArmGate(time.Second, time.Now)
	in := keys.attach(gate)
	p.ptm.WriteString("early\r") // nothing drawn yet
	time.Sleep(50 * time.Millisecond)
	gate.rendered(true)
	gate.wrote(time.Now())
	p.ptm.WriteString("\r\r\r")
	time.Sleep(50 * time.Millisecond)
	p.ptm.WriteString("y\r\x03")
	time.Sleep(1500 * time.Millisecond) // the reader is slow: it reads after the delay
	p.ptm.WriteString("late")
	got := readAtLeast(t, in, 9)
	if got != "\x1c\x1c\x1c\x03\x1clate" { // each chunk behind its mark, a discarded burst's mark alone
		t.Fatalf("read %q, want the marks of the bursts, Ctrl-C and the keys after the pause", got)
	}
	keys.detach(in)
	if n, err := in.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("detached input read %d, %v", n, err)
	}
	next := keys.attach(newArmGate(0, time.Now))
	p.ptm.Close()
	if _, err := io.ReadAll(next); !errors.Is(err, errHungUp) {
		t.Fatalf("after a hang-up: %v, want errHungUp", err)
	}
}

func readAtLeast(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 64)
		for b.Len() < n {
			k, err := r.Read(buf)
			b.Write(buf[:k])
			if err != nil {
				break
			}
		}
		done <- b.String()
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no input")
		return ""
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
	if testing.Short() {
		t.Skip("slow: needs a pty/Xvfb; runs in the full suite")
	}
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
	return p.askArmed(ctx, f, env, 50*time.Millisecond)
}

func (p *tuiPTY) askArmed(ctx context.Context, f *form.Form, env map[string]string, delay time.Duration) <-chan tuiResult {
	fe := New(prompt.Options{TTY: p.pts.Name(), ArmDelay: delay, Getenv: func(k string) string { return env[k] }})
	done := make(chan tuiResult, 1)
	go func() {
		a, err := fe.Ask(ctx, f)
		done <- tuiResult{a, err}
	}()
	return done
}

func (p *tuiPTY) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *tuiPTY) waitFor(text string) {
	p.t.Helper()
	p.waitForCount(text, 1)
}

func (p *tuiPTY) waitForCount(text string, n int) {
	p.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		screen := ansi.Strip(p.output())
		if strings.Count(screen, text) >= n {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q ×%d on the terminal:\n%s", text, n, screen)
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

// rawKeys opens the pty in raw mode, as the frontend does, and reads its
// keys, until the test ends.
func (p *tuiPTY) rawKeys() *tuiSession {
	p.t.Helper()
	term, err := tty.Open(p.pts.Name())
	if err != nil {
		p.t.Fatal(err)
	}
	saved, err := xterm.MakeRaw(int(term.Fd()))
	if err != nil {
		p.t.Fatal(err)
	}
	keys, err := readKeys(term, time.Now)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() {
		keys.stop()
		xterm.Restore(int(term.Fd()), saved)
		term.Close()
	})
	return &tuiSession{term: term, keys: keys, styles: testStyles()}
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
		p.ptm.WriteString("\x1b[A")
		p.waitFor("> Deny always…")
		time.Sleep(100 * time.Millisecond) // an arrow of a burst is typing
		p.ptm.WriteString("\x1b[A")
		p.waitFor("> Allow always…")
		time.Sleep(100 * time.Millisecond) // Enter confirms an allow only after a pause
		p.ptm.WriteString("\r")
		p.waitFor("Rule to save")
		for _, next := range []string{"┃ Which File", "┃ Workdir", "┃ Lifetime", "┃ Allow always… with the rule above?"} {
			time.Sleep(100 * time.Millisecond)
			p.ptm.WriteString("\r")
			p.waitFor(next)
		}
		time.Sleep(100 * time.Millisecond)
		p.ptm.WriteString("\r")
		r := p.result(done)
		if r.err != nil || r.a.Choice != form.AllowAlways || !slices.Equal(r.a.Grants, []string{"fs.write", "fs.create"}) {
			t.Fatalf("answer %+v, %v", r.a, r.err)
		}
		p.restored()
		if sgr.MatchString(p.output()) {
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

// Keys written to the terminal within the arming delay of each stage are
// discarded however long the screen takes over them: here the request's
// thousand long scopes, written with the prompt's first frame and with the
// Enter that opens the rule stage. Only Ctrl-C ends the prompt.
func TestTUIEarlyKeysOnPTY(t *testing.T) {
	req := largestRequest(1000, 100)
	req.Grants = req.Grants[:2]
	f := form.New(req, form.Options{})
	p := newTUIPTY(t)
	if err := pty.Setsize(p.ptm, &pty.Winsize{Rows: 60, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	done := p.askArmed(context.Background(), f, map[string]string{"TERM": "xterm"}, 500*time.Millisecond)
	p.waitFor("Deny once")
	p.ptm.WriteString("\x1b[A\x1b[A\r\r\r\r\r")
	time.Sleep(700 * time.Millisecond)
	p.ptm.WriteString("\x1b[A")
	p.waitFor("> Deny always…")
	time.Sleep(700 * time.Millisecond) // an arrow of a burst is typing
	p.ptm.WriteString("\x1b[A")
	p.waitFor("> Allow always…")
	time.Sleep(700 * time.Millisecond) // Enter confirms an allow only after a pause
	p.ptm.WriteString("\r\r\r\r\r\r\r\r")
	p.waitFor("Rule to save")
	p.ptm.WriteString("\r\r\r\r\r\r\r\r")
	time.Sleep(300 * time.Millisecond)
	p.ptm.WriteString("\x03")
	r := p.result(done)
	if !errors.Is(r.err, prompt.ErrCancelled) {
		t.Fatalf("answer %+v, %v: keys within the delay acted", r.a, r.err)
	}
	p.restored()
}

// panicStage panics on its first key.
type panicStage struct{ *choiceStage }

func (panicStage) key(press) verdict { panic("stage") }

// A panic inside the UI is an internal error, not a dismissal, the
// terminal is restored all the same, and nothing reaches stdout, the
// decision channel.
func TestTUIPanicIsAnError(t *testing.T) {
	stdout := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = w
	defer func() { os.Stdout = stdout }()
	f := form.New(tuiWriteFile(), form.Options{})
	a := f.Defaults()
	p := newTUIPTY(t)
	s := p.rawKeys()
	done := make(chan tuiResult, 1)
	go func() {
		done <- tuiResult{err: s.run(context.Background(), f, panicStage{newChoiceStage(testStyles(), f, &a)})}
	}()
	p.waitFor("Deny once")
	time.Sleep(50 * time.Millisecond)
	p.ptm.WriteString("\r")
	if r := p.result(done); r.err == nil || errors.Is(r.err, prompt.ErrCancelled) || !strings.Contains(r.err.Error(), "panic") {
		t.Fatalf("%v, want an internal error", r.err)
	}
	w.Close()
	if out, _ := io.ReadAll(r); len(out) > 0 {
		t.Fatalf("stdout got %q", out)
	}
}

func TestTUIRequestTextTruncated(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = strings.Repeat("x", form.PreviewChars+10)
	f := form.New(req, form.Options{})
	text := ansi.Strip(strings.Join(wordsLines(testStyles(), f, 200), "\n"))
	for _, want := range []string{"showing 65536 of 65546 characters", "WARNING: only the first 65536 of 65546 characters are shown."} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the pane", want)
		}
	}
	for _, l := range wordsLines(testStyles(), f, 80) {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("line of %d cells: %q", ansi.StringWidth(l), ansi.Strip(l))
		}
	}
}

// largestRequest is as large as the protocol allows where it costs a
// person's screen most: scopes in one dimension and grants, each label
// labelBytes long.
func largestRequest(n, labelBytes int) *decision.Request {
	long := func(i int, what string) string {
		s := fmt.Sprintf("%s %04d ", what, i)
		return s + strings.Repeat(string(rune('a'+i%26))+" ", (labelBytes-len(s))/2)
	}
	req := &decision.Request{Server: "big", Tool: "write_file", Action: "write"}
	dim := decision.Dimension{Name: "path", Label: "File", Value: "/p/0000"}
	for i := range n {
		dim.Scopes = append(dim.Scopes, decision.Scope{Label: long(i, "scope"), Match: fmt.Sprintf("/p/%04d", i), Kind: decision.KindPrefix})
		req.Grants = append(req.Grants, decision.Grant{Name: fmt.Sprintf("g%04d", i), Description: long(i, "grant")})
	}
	req.Dimensions = []decision.Dimension{dim}
	return req
}

// BenchmarkTUIRuleKey measures one key in the rule stage of the largest
// request (a thousand scopes and a thousand grants, labels of 4096
// bytes): the key's update and the frame drawn after it, on a terminal
// the prompt fits.
func BenchmarkTUIRuleKey(b *testing.B) {
	req := largestRequest(decision.MaxListEntries, decision.MaxLineBytes)
	for _, bc := range []struct {
		name  string
		focus int // question
		key   tea.KeyMsg
	}{
		{"grants space", 0, keySpace},
		{"grants down", 0, keyDown},
		{"scopes down", 1, keyDown},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := form.New(req, form.Options{})
			a := f.Defaults()
			a.Choice = form.AllowAlways
			r := newRuleStage(testStyles(), f, &a)
			r.focus = bc.focus
			clock := time.Now()
			s := newTUIScreen(f, r, screenConfig{styles: testStyles(), now: func() time.Time { return clock },
				gate: newArmGate(0, time.Now), width: 200, height: 50})
			s.height = s.rowsAt(200)
			s.View()
			if s.small {
				b.Fatalf("too small at 200x%d", s.height)
			}
			b.ResetTimer()
			for i := range b.N {
				k := bc.key
				if k.Type == tea.KeyDown && i/(decision.MaxListEntries-1)%2 == 1 {
					k = keyUp // back up the list, never a key that does nothing
				}
				s.Update(k)
				s.View()
			}
		})
	}
}

// BenchmarkTUIChoiceKey measures one key in stage choice, drawn by huh's
// fields: an arrow in the Select (back and forth between two options) and
// a character typed into a long reason, each with the frame drawn after
// it.
func BenchmarkTUIChoiceKey(b *testing.B) {
	for _, bc := range []struct {
		name   string
		typing bool
		key    tea.KeyMsg
	}{
		{"select up down", false, keyUp},
		{"reason type", true, keyRunes("y")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := form.New(tuiWriteFile(), form.Options{})
			a := f.Defaults()
			c := newChoiceStage(testStyles(), f, &a)
			if bc.typing {
				c.key(press{KeyMsg: keyEnter})
				c.key(press{KeyMsg: keyRunes(strings.Repeat("a reason ", 400))})
			}
			s := newTUIScreen(f, c, screenConfig{styles: testStyles(), now: time.Now,
				gate: newArmGate(0, time.Now), width: 80, height: 40})
			s.View()
			b.ResetTimer()
			for i := range b.N {
				k := bc.key
				if !bc.typing && i%2 == 1 {
					k = keyDown
				}
				s.Update(k)
				s.View()
			}
		})
	}
}

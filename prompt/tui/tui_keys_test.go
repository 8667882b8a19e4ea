package tui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

func TestKeyCount(t *testing.T) {
	for b, want := range map[string]int{
		"y": 1, "é": 1, "\r": 1, "\x1b": 1, "\x1b[A": 1, "\x1b[6~": 1, "\x1b[1;5H": 1, "\x1bOA": 1, "\x1bx": 1,
		"yes": 3, "y\r": 2, "\x1b[A\r": 2, "\x1b[200~ab\x1b[201~": 4, "": 0,
	} {
		if got := keyCount([]byte(b)); got != want {
			t.Errorf("keyCount(%q) = %d, want %d", b, got, want)
		}
	}
}

// Each chunk that counts reaches the program behind a mark, and the
// screen learns at the mark when it arrived and whether it came alone
// after a pause; a burst discarded leaves its mark alone, a calm key
// discarded nothing; a Ctrl-\ typed is removed, so that only askperm
// marks.
func TestStageInputMarks(t *testing.T) {
	now := time.Unix(0, 0)
	g := newArmGate(500*time.Millisecond, func() time.Time { return now })
	g.rendered(true)
	g.wrote(now)
	in := newStageInput(g)
	ms := func(n int) time.Time { return now.Add(time.Duration(n) * time.Millisecond) }
	in.offer([]byte("a"), ms(600))             // alone, after the delay: calm
	in.offer([]byte("b\x1c"), ms(700))         // too soon after a: a burst
	in.offer([]byte("\x1b[A"), ms(1300))       // an arrow alone: calm
	in.offer([]byte("yes"), ms(2000))          // three keys: a burst
	g.drop(ms(2000))                           // the screen found typing
	in.offer([]byte("\x1b[A\x1b[A"), ms(2200)) // a burst, discarded: its mark alone
	g.drop(ms(2900))
	in.offer([]byte("\x1b[A"), ms(3000)) // calm, discarded: nothing
	want := []chunk{{ms(600), true, false}, {ms(700), false, false}, {ms(1300), true, false}, {ms(2000), false, false},
		{ms(2200), false, true}}
	for i, w := range want {
		if c, ok := in.take(); !ok || c != w {
			t.Fatalf("chunk %d: %+v, want %+v", i, c, w)
		}
	}
	if _, ok := in.take(); ok {
		t.Fatal("a chunk more than was offered")
	}
	if got := string(in.buf); got != "\x1ca\x1cb\x1c\x1b[A\x1cyes\x1c" {
		t.Fatalf("the program reads %q", got)
	}
}

// keyRig types on a screen through askperm's input path without the
// terminal: each chunk is judged by a stageInput as it arrives on the
// rig's clock, read back with its mark, parsed by bubbletea's own parser
// and handed to the screen, after each chunk (a quick screen) or after
// all (a slow one).
type keyRig struct {
	*tuiDriver
	in   *stageInput
	slow bool
}

func newKeyRig(t *testing.T, d *tuiDriver) *keyRig {
	r := &keyRig{tuiDriver: d, in: newStageInput(d.gate)}
	d.s.cfg.input = r.in
	d.arm()
	return r
}

// typ offers chunks, the first after wait, each next gap after the one
// before.
func (r *keyRig) typ(wait, gap time.Duration, chunks ...string) {
	r.clock = r.clock.Add(wait - gap)
	for _, c := range chunks {
		r.clock = r.clock.Add(gap)
		r.in.offer([]byte(c), r.clock)
		if !r.slow {
			r.deliver()
		}
	}
	r.deliver()
}

func (r *keyRig) deliver() {
	r.in.mu.Lock()
	b := string(r.in.buf)
	r.in.buf = nil
	r.in.mu.Unlock()
	if b != "" {
		for _, k := range parseKeys(r.t, b) {
			r.send(k)
		}
	}
	r.s.View() // the frame, on the terminal at once
	r.gate.wrote(r.clock)
}

func scopeN(i int) decision.Scope {
	return decision.Scope{Label: fmt.Sprintf("scope %d", i), Match: fmt.Sprintf("/home/a/p/%d/", i), Kind: decision.KindPrefix}
}

// keys splits text into the chunks a person's keystrokes make.
func keys(text string) []string {
	var ks []string
	for _, r := range text {
		ks = append(ks, string(r))
	}
	return ks
}

const (
	calmWait = 700 * time.Millisecond // a pause longer than the arming delay
	typeGap  = 80 * time.Millisecond  // a key while typing
)

// A letter only chooses: Enter right after it (or after any move onto an
// allow) is discarded and the screen says why; after a pause it confirms.
func TestShortcutSelectsOnly(t *testing.T) {
	var a form.Answer
	r := newKeyRig(t, choiceDriver(t, tuiWriteFile(), &a, 80, 30))
	c := r.s.st.(*choiceStage)
	r.typ(calmWait, 0, "y")
	r.wantFocus("Allow once")
	r.typ(typeGap, 0, "\r")
	r.wantEnd(tuiRunning)
	r.wantScreen(enterTooSoon)
	r.typ(calmWait, 0, "n") // Deny once
	r.typ(calmWait, 0, "a")
	r.wantFocus("Allow always…")
	r.typ(calmWait, calmWait, "\x1b[A", "\x1b[B") // Up, Down, each calm: onto the allow again
	r.typ(300*time.Millisecond, 0, "\r")
	r.wantEnd(tuiRunning)
	r.typ(calmWait, 0, "\r")
	r.wantEnd(tuiDone)
	if a.Choice != form.AllowAlways || c.choice != form.AllowAlways {
		t.Fatalf("answer %+v", a)
	}

	// A letter in one chunk with Enter, or in a burst, never chooses.
	for _, typed := range [][]string{{"y\r"}, {"x", "y"}, {"\x1b[200~y\x1b[201~"}} {
		a = form.Answer{}
		r = newKeyRig(t, choiceDriver(t, tuiWriteFile(), &a, 80, 30))
		r.typ(calmWait, typeGap, typed...)
		r.wantFocus("Deny once")
		r.typ(calmWait, 0, "\r")
		r.wantScreen("Denial reason")
	}
}

// Typing puts the choice back on Deny once, and discards every key until
// typing pauses, the Enter that ends the line included.
func TestTypingDiscarded(t *testing.T) {
	for _, slow := range []bool{false, true} {
		var a form.Answer
		r := newKeyRig(t, choiceDriver(t, tuiWriteFile(), &a, 80, 30))
		r.slow = slow
		r.typ(calmWait, calmWait, "\x1b[A", "\x1b[A") // Allow always…
		r.typ(calmWait, typeGap, keys("ls -la\r")...)
		r.wantFocus("Deny once")
		r.wantScreen(" ignored: ")
		if r.s.st.typing() {
			t.Fatalf("slow %v: the Enter typed with the line acted", slow)
		}
		r.typ(calmWait, 0, "\r")
		r.wantScreen("Denial reason")
	}
}

// Stage rule: s and b move the focus to Save rule and « Back; Enter on
// Save rule of an allow counts only after a pause; typing chooses Back.
func TestRuleShortcuts(t *testing.T) {
	d, rs, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	r := newKeyRig(t, d)
	r.typ(calmWait, 0, "s")
	r.wantFocus("Save rule")
	r.typ(typeGap, 0, "\r")
	r.wantEnd(tuiRunning)
	r.typ(calmWait, 0, "b")
	r.wantFocus("« Back")
	r.typ(calmWait, 0, "s\r") // a letter with more keys: typing
	if !rs.back() {
		t.Fatal("s in a chunk of keys chose Save rule")
	}
	r.typ(calmWait, 0, "s")
	r.typ(calmWait, typeGap, keys("git add .")...)
	if !rs.back() {
		t.Fatal("typing left Save rule chosen")
	}
	r.typ(calmWait, 0, "s")
	r.typ(calmWait, 0, "\r")
	r.wantEnd(tuiDone)
	if rs.back() {
		t.Fatal("s, pause, Enter went back")
	}
}

// Home and End move the lists to either end, but a jump never chooses an
// allow: Home in stage choice, whose allows come first, is typing; End
// goes to Deny once. PgUp and PgDn page stage rule's lists and the pane
// of stage choice.
func TestHomeEndPage(t *testing.T) {
	var a form.Answer
	d := choiceDriver(t, tuiWriteFile(), &a, 80, 30)
	d.arm()
	d.send(keyUp)
	d.wantFocus("Deny always…")
	d.send(tea.KeyMsg{Type: tea.KeyHome})
	d.wantFocus("Deny once")
	d.wantScreen("a jump never chooses an allow")
	d.pause()
	d.send(keyUp, keyUp)
	d.wantFocus("Allow always…")
	d.send(tea.KeyMsg{Type: tea.KeyEnd})
	d.wantFocus("Deny once")

	req := tuiWriteFile()
	req.Dimensions[0].Scopes = nil
	for i := range 200 {
		req.Dimensions[0].Scopes = append(req.Dimensions[0].Scopes, scopeN(i))
	}
	rd, r, _ := ruleDriver(t, req, form.AllowAlways, 80, 30)
	rd.arm()
	rd.send(keyEnter) // to the scopes
	rd.screen()
	rd.send(tea.KeyMsg{Type: tea.KeyEnd})
	rd.wantFocus("scope 199")
	rd.send(tea.KeyMsg{Type: tea.KeyHome})
	rd.wantFocus("scope 0:")
	rd.screen()
	rd.send(keyPgDown)
	if l := r.lists[r.focus]; l.cursor < 2 || l.cursor != l.shown {
		t.Fatalf("PgDn moved to %d, a page is %d", l.cursor, l.shown)
	}
	rd.send(tea.KeyMsg{Type: tea.KeyPgUp})
	rd.wantFocus("scope 0:")
}

// Typing meant for a shell never allows: generated command lines of
// words, flags, paths, the letters y, s, a, n, d, "yes" and digits, each
// of at least two keys and ending in Enter, typed key by key at 30-120 ms
// or in one chunk, with and without a pause before the Enter, after a
// pause (so that the first key counts as a key), handled at once or late.
// From stage choice they end on Deny once or in its denial reason; in
// stage rule, Save rule is never confirmed.
func TestShellTypingNeverAllows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	lines := shellLines(rng, generated(240))
	newChoice := func() (*keyRig, *form.Answer) {
		a := &form.Answer{}
		return newKeyRig(t, choiceDriver(t, tuiWriteFile(), a, 80, 30)), a
	}
	r, a := newChoice()
	rules := 0
	for i, line := range lines {
		r.slow = i%3 == 0
		typeBurst(r, rng, keys(line), 30, 120, i%4)
		c := r.s.st.(*choiceStage)
		switch {
		case r.s.end == tuiDone && a.Choice != form.DenyOnce:
			t.Fatalf("typing %q answered %+v", line, *a)
		case r.s.end == tuiDone:
			r, a = newChoice()
		case !c.reasonFocused && c.choice != form.DenyOnce:
			t.Fatalf("typing %q left the focus on %s", line, c.choice)
		}
	}
	rd, rs, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	rr := newKeyRig(t, rd)
	for i, line := range lines {
		rr.slow = i%3 == 0
		typeBurst(rr, rng, keys(line), 30, 120, i%4)
		if rr.s.end == tuiDone {
			if !rs.back() {
				t.Fatalf("typing %q saved the rule", line)
			}
			rules++
			rd, rs, _ = ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
			rr = newKeyRig(t, rd)
		}
	}
	t.Logf("%d lines; stage rule went back %d times", len(lines), rules)
}

// shellLines are n command lines of at least two keys.
func shellLines(rng *rand.Rand, n int) []string {
	words := []string{"ls", "-la", "cd", "..", "git", "status", "add", "-A", "commit", "-m", "yes", "y", "s", "a", "n", "d",
		"v", "q", "b", "/tmp/x", "./src/main.go", "~/p", "42", "0", "2>&1", "|", "grep", "-rn", "TODO", "make", "test",
		"sudo", "rm", "-rf", "echo", "\"hi\"", "cat", "vim", "go", "run", ".", "--force", "&&", "ya", "ys", "sn"}
	var lines []string
	for len(lines) < n {
		var ws []string
		for range 1 + rng.IntN(4) {
			ws = append(ws, words[rng.IntN(len(words))])
		}
		if l := strings.Join(ws, " "); len(l) >= 2 {
			lines = append(lines, l)
		}
	}
	return lines
}

// sessionRig types on stage choice of write-file.json with session
// memory: Allow for this session is the first choice, where Home and a
// run of Ups land.
func sessionRig(t *testing.T) (*keyRig, *form.Answer) {
	req := tuiWriteFile()
	req.SessionID = "s-1"
	f := form.New(req, form.Options{SessionMemory: true})
	a := f.Defaults()
	return newKeyRig(t, newTUIDriver(t, f, newChoiceStage(testStyles(), f, &a), 80, 30)), &a
}

// Keys of Home as terminals send it.
var homeKeys = []string{"\x1b[H", "\x1b[1~", "\x1bOH", "\x1b[7~"}

// recallHabits are the shell habits of issue 19: Up several times to
// recall an older command, in one read or key by key, and Home; each is
// followed by a pause and Enter.
func recallHabits() map[string][]string {
	up := "\x1b[A"
	h := map[string][]string{
		"Up×4 in one read": {strings.Repeat(up, 4)},
		"Up×4 key by key":  {up, up, up, up},
		"Up×2 key by key":  {up, up},
	}
	for _, k := range homeKeys {
		h[fmt.Sprintf("Home %q", k)] = []string{k}
	}
	return h
}

// Regression (issue 19): a burst of Ups, a pause and Enter, or Home, a
// pause and Enter, gave Allow for this session. A burst of moves is
// typing, and Home jumps: neither arms an allow; the choice is back on
// Deny once, so the Enter opens the denial reason.
func TestRecallHabitNeverAllows(t *testing.T) {
	for name, chunks := range recallHabits() {
		r, a := sessionRig(t)
		r.wantScreen("Allow for this session (s)")
		r.typ(calmWait, 40*time.Millisecond, chunks...)
		r.typ(calmWait, 0, "\r")
		c := r.s.st.(*choiceStage)
		if r.s.end == tuiDone || c.choice != form.DenyOnce || !c.reasonFocused {
			t.Errorf("%s, pause, Enter: ended %d on %s, answer %+v", name, r.s.end, c.choice, *a)
		}
	}
}

// Regression (issue 19), stage rule: on « Back, a burst of Ups or Home,
// a pause and Enter saved the rule; they choose « Back.
func TestRuleRecallHabitNeverSaves(t *testing.T) {
	habits := recallHabits()
	habits["PgUp"] = []string{"\x1b[5~"}
	for name, chunks := range habits {
		d, rs, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
		rs.focus = len(rs.qs)
		rs.lists[rs.focus].cursor = 1 // « Back
		r := newKeyRig(t, d)
		r.wantFocus("« Back")
		r.typ(calmWait, 40*time.Millisecond, chunks...)
		r.typ(calmWait, 0, "\r")
		if r.s.end != tuiDone || !rs.back() {
			t.Errorf("%s, pause, Enter: ended %d, back %v", name, r.s.end, rs.back())
		}
	}
}

// Stage rule: Enters of a burst that bring Save rule of an allow under
// the focus (the defaults taken in a rush) choose « Back; after a pause,
// Enter goes back rather than saving.
func TestRuleEnterBurstNeverSaves(t *testing.T) {
	d, rs, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	r := newKeyRig(t, d)
	r.typ(calmWait, 0, strings.Repeat("\r", len(rs.qs)+1))
	r.wantFocus("« Back")
	r.typ(calmWait, 0, "\r")
	if r.s.end != tuiDone || !rs.back() {
		t.Fatalf("a burst of Enters, a pause and Enter: ended %d, back %v", r.s.end, rs.back())
	}
}

// navKeys move a list or scroll, as terminals send them: the arrows (CSI
// and SS3), Home and End in their spellings (one of which bubbletea
// reads as two keys), PgUp, PgDn, Tab, Shift+Tab, and with Ctrl the keys
// that scroll the agent's words.
var navKeys = []string{"\x1b[A", "\x1b[B", "\x1bOA", "\x1bOB", "\x1b[C", "\x1b[D",
	"\x1b[H", "\x1b[1~", "\x1b[7~", "\x1bOH", "\x1b[F", "\x1b[4~", "\x1b[8~", "\x1bOF",
	"\x1b[5~", "\x1b[6~", "\t", "\x1b[Z", "\x1b[5;5~", "\x1b[6;5~", "\x1b[1;5H", "\x1b[1;5F"}

// navBurst is two to eight keys: navigation keys, and with letters when
// letters is true (the choices', Save's, Back's, the viewer's, others).
func navBurst(rng *rand.Rand, letters bool) []string {
	var ks []string
	for range 2 + rng.IntN(7) {
		if letters && rng.IntN(3) == 0 {
			ks = append(ks, string("ysandbvqx "[rng.IntN(10)]))
			continue
		}
		ks = append(ks, navKeys[rng.IntN(len(navKeys))])
	}
	return ks
}

// typeBurst types ks and Enter, after a pause: key by key minGap to
// maxGap ms apart with Enter as one more key (way 0) or after a pause
// (1), in one chunk with Enter (2), in one chunk and Enter after a pause
// (3).
func typeBurst(r *keyRig, rng *rand.Rand, ks []string, minGap, maxGap, way int) {
	gap := func() time.Duration { return time.Duration(minGap+rng.IntN(maxGap-minGap+1)) * time.Millisecond }
	r.clock = r.clock.Add(calmWait + time.Duration(rng.IntN(1000))*time.Millisecond)
	switch way {
	case 0, 1:
		for _, k := range ks {
			r.typ(0, 0, k)
			r.clock = r.clock.Add(gap())
		}
		if way == 1 {
			r.clock = r.clock.Add(calmWait)
		}
		r.typ(0, 0, "\r")
	case 2:
		r.typ(0, 0, strings.Join(ks, "")+"\r")
	case 3:
		r.typ(0, 0, strings.Join(ks, ""))
		r.typ(calmWait, 0, "\r")
	}
}

// Bursts of navigation keys never allow: generated runs of arrows, Home,
// End, PgUp, PgDn, Tab, Shift+Tab and the pane's Ctrl keys, with and
// without letters, in one chunk or key by key at 10-60 ms, with and
// without a pause before the Enter, handled at once or late, from Deny
// once or from an allow chosen calmly and left for a pause. Each leaves
// stage choice on Deny once (or in its denial reason), and its Enter at
// most opens the reason or confirms a deny; each leaves stage rule on
// « Back, and Save rule is never confirmed.
func TestNavigationBurstsNeverAllow(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	n := generated(200)
	r, a := sessionRig(t)
	denies := 0
	for i := range n {
		r.slow = i%3 == 0
		c := r.s.st.(*choiceStage)
		if i%3 == 1 && !c.reasonFocused && !r.s.viewing { // an allow chosen calmly, and a pause
			r.typ(calmWait, 0, string("ysa"[rng.IntN(3)]))
		}
		ks := navBurst(rng, i%2 == 0)
		typeBurst(r, rng, ks, 10, 60, i%4)
		switch {
		case r.s.end == tuiDone && a.Choice.IsAllow():
			t.Fatalf("burst %q (way %d) answered %+v", ks, i%4, *a)
		case r.s.end != tuiRunning:
			denies++
			r, a = sessionRig(t)
		case !c.reasonFocused && c.choice != form.DenyOnce:
			t.Fatalf("burst %q (way %d) left the focus on %s:\n%s", ks, i%4, c.choice, r.screen())
		}
	}
	rd, rs, _ := ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
	rr := newKeyRig(t, rd)
	backs := 0
	for i := range n {
		rr.slow = i%3 == 0
		if i%3 == 1 && !rr.s.viewing { // Save rule chosen calmly, and a pause
			rr.typ(calmWait, 0, "s")
		}
		ks := navBurst(rng, i%2 == 0)
		typeBurst(rr, rng, ks, 10, 60, i%4)
		switch {
		case !rs.back():
			t.Fatalf("burst %q (way %d) left Save rule chosen:\n%s", ks, i%4, rr.screen())
		case rr.s.end == tuiDone:
			backs++
			rd, rs, _ = ruleDriver(t, tuiWriteFile(), form.AllowAlways, 100, 40)
			rr = newKeyRig(t, rd)
		}
	}
	t.Logf("%d bursts a stage: stage choice denied %d times, stage rule went back %d times", n, denies, backs)
}

// Scrolling changes no answer, so PgDn held down (a burst) still pages
// through the agent's words and the viewer; but it is typing all the
// same: an allow chosen before goes back to Deny once, and the Enter that
// follows, in the burst or after a pause, confirms no allow.
func TestScrollBurst(t *testing.T) {
	req := tuiWriteFile()
	req.Details[0].Text = strings.Repeat("line\n", 60) + "the last line\n"
	for _, pause := range []bool{false, true} {
		var a form.Answer
		r := newKeyRig(t, choiceDriver(t, req, &a, 80, 24))
		r.typ(calmWait, 0, "y")
		r.wantFocus("Allow once")
		r.typ(calmWait, 30*time.Millisecond, slices.Repeat([]string{"\x1b[6~"}, 20)...) // PgDn
		r.wantScreen("│ the last line", "scrolling in a burst counts as typing")
		r.wantFocus("Deny once")
		wait := 30 * time.Millisecond
		if pause {
			wait = calmWait
		}
		r.typ(wait, 0, "\r")
		if c := r.s.st.(*choiceStage); r.s.end != tuiRunning || !c.reasonFocused {
			t.Fatalf("pause %v: PgDn held, then Enter: ended %d, answer %+v", pause, r.s.end, a)
		}
	}

	req.Details[0].Text = mebibyteDetail()[0]
	var a form.Answer
	r := newKeyRig(t, choiceDriver(t, req, &a, 80, 30))
	r.typ(calmWait, 0, "y")
	r.typ(calmWait, 0, "v")
	r.typ(calmWait, 30*time.Millisecond, slices.Repeat([]string{"\x1b[6~"}, 5)...)
	if r.s.view.top == 0 {
		t.Fatal("PgDn held did not scroll the viewer")
	}
	r.typ(calmWait, 0, "q")
	r.wantFocus("Deny once")
}

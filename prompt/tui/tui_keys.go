package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Keys are judged as typing or as answers. A person answering presses a
// key, looks, and presses the next; someone typing for another program
// sends keys in bursts, and the keys that move in a shell (Up to recall
// an older command, Home, PgUp) type as much as letters do. So while no
// text field has the focus, a key counts only from a calm chunk, one key
// that arrived the arming delay after the input before it: every other
// key but Enter (arrows, Home, End, PgUp, PgDn, Tab, Space, the stage's
// letters) is typing. So is a printable key that is no key of the
// focused question, and a jump (Home, End, PgUp, PgDn) that would land on
// an allow: only a single move, or the allow's own letter, chooses one.
// Typing puts the stage back on its safe answer (Deny once, « Back), and
// every key arriving before typing has paused for the arming delay is
// discarded. A key that scrolls the agent's words or the viewer changes
// no answer: in a burst it still scrolls, but puts the stage back on its
// safe answer all the same, so that no Enter after it confirms an allow.
// Enter is judged by what it confirms: whatever moved the focus onto an
// allow, an Enter confirms it only if it arrived the arming delay after
// that move; sooner it is discarded too, and the screen says why; an
// Enter of a burst that would bring Save rule of an allow under the focus
// is typing.

// press is one key as the screen passes it to a stage.
type press struct {
	tea.KeyMsg
	at    time.Time     // when it arrived
	calm  bool          // it came alone, after a pause
	delay time.Duration // the arming delay
}

// verdict is what a stage made of a key.
type verdict int

const (
	keyActed   verdict = iota // the key acted, or did nothing
	keyDone                   // the stage is answered
	keyIgnored                // typing, or too soon: discarded, and input waits for a pause
)

// letter is the single character k types as a key of its own (not pasted,
// not with Alt); 0 when it is none.
func letter(k tea.KeyMsg) rune {
	if k.Type != tea.KeyRunes || k.Alt || k.Paste || len(k.Runes) != 1 {
		return 0
	}
	return k.Runes[0]
}

// printable reports whether k types text.
func printable(k tea.KeyMsg) bool { return k.Type == tea.KeyRunes || k.Type == tea.KeySpace }

// soon reports whether a key that arrived at at came within the arming
// delay of since, a change of the focus onto an allow.
func (p press) soon(since time.Time) bool { return p.at.Sub(since) < p.delay }

// Why a key was discarded, in askperm's words.
const (
	typingIgnored = "typing ignored: that is no key of this question"
	burstIgnored  = "keys ignored: they came in a burst, as typing does; press one key at a time"
	scrollBurst   = "scrolling in a burst counts as typing"
	jumpIgnored   = "a jump never chooses an allow: move onto it one step at a time, or press its letter"
	enterTooSoon  = "Enter ignored: wait a moment after choosing an allow"
)

// jump reports whether k moves a list by more than one option.
func jump(k tea.KeyMsg) bool {
	switch k.Type {
	case tea.KeyHome, tea.KeyEnd, tea.KeyPgUp, tea.KeyPgDown:
		return true
	}
	return false
}

// markKey reports whether k is a chunk mark; alt is true when an Esc
// came right before it (bubbletea reads the two as Alt with the mark).
func markKey(k tea.KeyMsg) (mark, alt bool) {
	return k.Type == tea.KeyCtrlBackslash, k.Alt
}

// chunkMsg tells the screen of the chunk the next keys came in, as a mark
// does.
type chunkMsg chunk

// pressOf is k with what is known of its chunk: the first key of a calm
// chunk is calm, every further key of a chunk is not. Keys before any
// mark (only in tests, which send keys directly) each count as a calm
// chunk of their own, arriving as they are handled.
func (s *tuiScreen) pressOf(k tea.KeyMsg) press {
	p := press{KeyMsg: k, at: s.chunk.at, calm: s.chunk.calm && s.inChunk == 0, delay: s.cfg.gate.delay}
	if !s.marked {
		p.at, p.calm = s.cfg.now(), true
	}
	s.inChunk++
	return p
}

// newChunk starts the keys of chunk c. A burst the input discarded is
// typing all the same.
func (s *tuiScreen) newChunk(c chunk) {
	s.chunk, s.inChunk, s.marked = c, 0, true
	if c.dropped && !s.st.typing() {
		s.st.typed(burstIgnored)
	}
}

// takeMarks takes the chunks of n marks from the input, the last one's
// keys next.
func (s *tuiScreen) takeMarks(n int) {
	for range n {
		c, ok := chunk{at: s.cfg.now()}, false
		if s.cfg.input != nil {
			c, ok = s.cfg.input.take()
		}
		if !ok {
			c.at = s.cfg.now()
		}
		s.newChunk(c)
	}
}

// typing reports whether a key that arrived at at is part of typing
// already judged so, or came before what the screen shows had been on
// the terminal for the arming delay (the gate judged that as the key
// arrived; the screen judges it again, as what it shows may have changed
// since; keys sent to the screen without marks, as tests do, count as
// admitted); such a key is discarded, and restarts the pause.
func (s *tuiScreen) typing(at time.Time) bool {
	if armed, ok := s.cfg.gate.armedAt(); s.marked && (!ok || at.Before(armed)) {
		s.cfg.gate.drop(at)
		return true
	}
	return false
}

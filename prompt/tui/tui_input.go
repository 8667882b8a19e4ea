package tui

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/muesli/cancelreader"
)

// Input counts only when the person could have read the question. One
// goroutine reads the terminal for the whole prompt and stamps each chunk
// with the time it arrived, however long the screen takes over what came
// before. The stage on screen judges each chunk by that stamp as it
// arrives: a chunk that came before the stage's question had been on the
// terminal for the arming delay, or less than the delay after the last
// discarded chunk, is discarded and never reaches the stage's program. So
// keys typed while the person could not yet have read the question are
// lost whatever the program is doing, and input counts only once the
// person has paused. Ctrl-C alone passes: it cancels, which denies.
//
// Every chunk that counts reaches the stage's program behind a mark
// (chunkMark), and the screen takes the chunk's arrival time and whether
// it came alone (calm) from the input as it meets each mark: the screen
// judges every key by when it arrived, not when it is handled. A chunk is
// calm when it holds one key and arrived the arming delay after the chunk
// before it; anything else is a burst, as typing is. A burst discarded
// here still reaches the program as a mark alone, so that the screen puts
// the stage back on its safe answer as it does for a burst it discards.

// ctrlC is the byte Ctrl-C sends in raw mode.
const ctrlC = 0x03

// chunkMark starts every chunk a stage's program reads. It is Ctrl-\,
// which bubbletea reads as a key of its own; the same byte typed is
// removed from the input, so that only askperm's marks are marks.
const chunkMark = 0x1c

// chunk is what the screen learns of the input behind one mark.
type chunk struct {
	at      time.Time // when it arrived
	calm    bool      // one key, the arming delay after the chunk before
	dropped bool      // a burst, discarded: no keys follow its mark
}

// errHungUp means the terminal went away (its other side closed).
var errHungUp = errors.New("the terminal hung up")

// keySource reads the terminal and hands each chunk, stamped, to the
// stage that is on screen.
type keySource struct {
	r    cancelreader.CancelReader
	now  func() time.Time
	done chan struct{}

	mu   sync.Mutex
	sink *stageInput // nil between stages: input then is discarded
	err  error       // why reading ended; nil while it goes on
}

// readKeys starts reading term.
func readKeys(term *os.File, now func() time.Time) (*keySource, error) {
	r, err := cancelreader.NewReader(term)
	if err != nil {
		return nil, fmt.Errorf("reading the terminal: %w", err)
	}
	k := &keySource{r: r, now: now, done: make(chan struct{})}
	go k.pump()
	return k, nil
}

func (k *keySource) pump() {
	defer close(k.done)
	buf := make([]byte, 4096)
	for {
		n, err := k.r.Read(buf)
		at := k.now()
		if n > 0 {
			k.mu.Lock()
			sink := k.sink
			k.mu.Unlock()
			if sink != nil {
				sink.offer(bytes.Clone(buf[:n]), at)
			}
		}
		if err != nil {
			k.fail(err)
			return
		}
	}
}

// fail ends reading. Anything but a cancellation is a hang-up: in raw
// mode a terminal reads nothing (EOF) or fails (EIO) only when its other
// side is gone. The error never wraps io.EOF, which bubbletea would take
// for a quiet end of input.
func (k *keySource) fail(err error) {
	if !errors.Is(err, cancelreader.ErrCanceled) {
		err = fmt.Errorf("%w: %v", errHungUp, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.err = err
	if k.sink != nil {
		k.sink.close(err)
	}
}

// attach makes a new stage's input the one chunks go to, judged by gate.
func (k *keySource) attach(gate *armGate) *stageInput {
	in := newStageInput(gate)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		in.close(k.err)
		return in
	}
	k.sink = in
	return in
}

// detach ends a stage's input: its reader sees EOF and later chunks go
// nowhere until the next stage attaches.
func (k *keySource) detach(in *stageInput) {
	k.mu.Lock()
	if k.sink == in {
		k.sink = nil
	}
	k.mu.Unlock()
	in.close(io.EOF)
}

// stop ends reading and waits for the reading goroutine.
func (k *keySource) stop() {
	k.r.Cancel()
	<-k.done
	k.r.Close()
}

// stageInput is what one stage's program reads: the chunks its gate
// admitted, in order, each behind a mark, and what the screen learns of
// each at its mark.
type stageInput struct {
	gate   *armGate
	mu     sync.Mutex
	more   *sync.Cond
	buf    []byte
	chunks []chunk   // of the marks not yet taken, in order
	prevAt time.Time // arrival of the last chunk offered
	err    error
}

func newStageInput(gate *armGate) *stageInput {
	in := &stageInput{gate: gate}
	in.more = sync.NewCond(&in.mu)
	return in
}

// offer judges a chunk that arrived at at.
func (in *stageInput) offer(b []byte, at time.Time) {
	b = bytes.ReplaceAll(b, []byte{chunkMark}, nil)
	in.mu.Lock()
	defer in.mu.Unlock()
	calm := keyCount(b) == 1 && (in.prevAt.IsZero() || at.Sub(in.prevAt) >= in.gate.delay)
	in.prevAt = at
	dropped := false
	if !in.gate.admit(at) {
		switch {
		case bytes.IndexByte(b, ctrlC) >= 0:
			b, calm = []byte{ctrlC}, false
		case calm || len(b) == 0:
			return
		default:
			b, dropped = nil, true
		}
	}
	if in.err == nil && (len(b) > 0 || dropped) {
		in.chunks = append(in.chunks, chunk{at: at, calm: calm, dropped: dropped})
		in.buf = append(append(in.buf, chunkMark), b...)
		in.more.Signal()
	}
}

// take returns what is known of the chunk behind the next mark; ok is
// false when no mark is left.
func (in *stageInput) take() (c chunk, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.chunks) == 0 {
		return chunk{}, false
	}
	c, in.chunks = in.chunks[0], in.chunks[1:]
	return c, true
}

// keyCount is how many keys b holds, as a terminal sends them: an escape
// sequence (CSI, SS3) or Alt with a character is one key, every other
// character one; a bracketed paste is many.
func keyCount(b []byte) int {
	n := 0
	for i := 0; i < len(b); n++ {
		if b[i] != 0x1b || i+1 == len(b) {
			_, w := utf8.DecodeRune(b[i:])
			i += w
			continue
		}
		switch b[i+1] {
		case '[':
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j + 1
		case 'O':
			i += 3
		default:
			_, w := utf8.DecodeRune(b[i+1:])
			i += 1 + w
		}
	}
	return n
}

func (in *stageInput) close(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err == nil {
		in.err = err
		in.more.Broadcast()
	}
}

// Read blocks until admitted input is there or the input ends.
func (in *stageInput) Read(p []byte) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.buf) == 0 && in.err == nil {
		in.more.Wait()
	}
	if len(in.buf) == 0 {
		return 0, in.err
	}
	n := copy(p, in.buf)
	in.buf = in.buf[n:]
	return n, nil
}

// armGate decides, for one stage, whether input that arrived at a given
// time counts. It learns what is on the terminal from two sides: the
// screen says whether each frame it renders holds the whole question, and
// the terminal's writer says when each frame was written.
type armGate struct {
	delay time.Duration
	now   func() time.Time

	mu        sync.Mutex
	want      bool      // the last frame rendered holds the whole question
	wantSince time.Time // when want last changed
	shown     time.Time // since when the question is on the terminal; zero: it is not
	lastDrop  time.Time // arrival of the last discarded input
}

func newArmGate(delay time.Duration, now func() time.Time) *armGate {
	return &armGate{delay: max(0, delay), now: now}
}

// rendered records whether the frame just rendered holds the whole
// question.
func (g *armGate) rendered(complete bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if complete != g.want {
		g.want, g.wantSince = complete, g.now()
	}
}

// wrote records that a write to the terminal, begun at start, is done. A
// write begun before the last change of frame carries an older frame.
func (g *armGate) wrote(start time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case start.Before(g.wantSince):
	case !g.want:
		g.shown = time.Time{}
	case g.shown.IsZero():
		g.shown = g.now()
	}
}

// torn records that a write to the terminal failed: what the terminal
// shows is not known, so the question is not on it as far as the gate
// knows, until a frame is written whole.
func (g *armGate) torn() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shown = time.Time{}
}

// admit reports whether input that arrived at at counts. Input that does
// not restarts the delay.
func (g *armGate) admit(at time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shown.IsZero() || at.Before(g.shown.Add(g.delay)) || at.Before(g.lastDrop.Add(g.delay)) {
		if at.After(g.lastDrop) {
			g.lastDrop = at
		}
		return false
	}
	return true
}

// drop records input that arrived at at and was judged typing, not an
// answer, after the gate admitted it: input counts again only once typing
// has paused for the delay.
func (g *armGate) drop(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if at.After(g.lastDrop) {
		g.lastDrop = at
	}
}

// rearm takes the question off the terminal, as far as the gate knows:
// the screen has changed what it shows (the viewer opened or closed), and
// input counts only once the next frame has been on the terminal for the
// delay.
func (g *armGate) rearm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.want, g.wantSince, g.shown = false, g.now(), time.Time{}
}

// armedAt is when input will count if none arrives before; ok is false
// while the question is not on the terminal.
func (g *armGate) armedAt() (at time.Time, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shown.IsZero() {
		return time.Time{}, false
	}
	at = g.shown.Add(g.delay)
	if quiet := g.lastDrop.Add(g.delay); quiet.After(at) {
		at = quiet
	}
	return at, true
}

// frameOutput is the terminal as a stage's frames are written to it,
// telling the gate when each write is done.
type frameOutput struct {
	w    io.Writer
	gate *armGate
}

func (o frameOutput) Write(p []byte) (int, error) {
	start := o.gate.now()
	n, err := o.w.Write(p)
	if err != nil {
		o.gate.torn()
	} else {
		o.gate.wrote(start)
	}
	return n, err
}

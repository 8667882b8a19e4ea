package line

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/askperm/askperm/prompt"
)

// maxLineBytes bounds a line being assembled; a canonical-mode terminal
// delivers at most 4096 bytes a line anyway.
const maxLineBytes = 1 << 16

// chunk is what one read of the terminal returned.
type chunk struct {
	data []byte
	err  error
	at   time.Time // when the read returned: in canonical mode, when Enter was pressed
	more bool      // further complete lines were already waiting
}

// lineInput reads the terminal one read at a time, and only when asked,
// so that typeahead stays in the terminal's queue for flushInput. Each read
// runs in a goroutine so that waiting for it can end with ctx.
type lineInput struct {
	r       io.Reader
	pending func() bool // further complete lines wait; nil: never known
	res     chan chunk  // the read in flight, if any
}

// next returns the channel of the read in flight, starting one if none is.
func (in *lineInput) next() <-chan chunk {
	if in.res == nil {
		res := make(chan chunk, 1)
		in.res = res
		go func() {
			buf := make([]byte, 4096)
			n, err := in.r.Read(buf)
			c := chunk{data: buf[:n], err: err, at: time.Now()}
			c.more = err == nil && in.pending != nil && in.pending()
			res <- c
		}()
	}
	return in.res
}

// asking is one question being asked. Shown again after a line it did
// not take, it stays the same question: ready it stays ready.
type asking struct {
	q question
	// ready is when a line may count: the question fully written plus the
	// arming delay, and the delay after the last line discarded (the burst
	// it belongs to). Zero until the question is first written.
	ready time.Time
}

// ask starts asking q: a new question, armed when first written.
func (p *linePrompt) ask(q question) *asking { return &asking{q: q} }

// readLine shows the question and returns the next line that arrives once
// it is ready, trimmed. Each showing flushes typeahead; the first starts
// the arming delay. EOF, a read error or a hang-up is prompt.ErrCancelled,
// never an answer.
func (p *linePrompt) readLine(ctx context.Context, a *asking) (string, error) {
	for {
		pg := p.page()
		a.q(pg, timeLeft(ctx))
		p.write(pg)
		if p.err != nil {
			return "", fmt.Errorf("terminal: %w: %w", p.err, prompt.ErrCancelled)
		}
		if err := p.flushInput(); err != nil {
			return "", err
		}
		if a.ready.IsZero() {
			a.ready = time.Now().Add(p.arm)
		}
		line, ok, err := p.armedLine(ctx, a)
		if ok || err != nil {
			return line, err
		}
	}
}

// armedLine waits for one line. A line counts only when it arrived once
// the question was ready: each line that arrives sooner is discarded and
// makes the question ready only after a whole pause of the arming delay.
// The notice that such lines were ignored comes once input has paused for
// the delay, and the question is then shown again (!ok), ready; or, when a
// line that counts arrived first, right before it counts. Lines that
// arrive together (pasted, typed ahead) are discarded too, and belong to a
// burst that the delay after them must end.
//
// In canonical mode the kernel hands over only complete lines, so keys
// typed before Enter cannot be timed. They are never flushed when the
// delay ends: a line begun during the delay and ended after it is judged
// whole, and "git apply" is no key, while a flush would have cut it to "y".
func (p *linePrompt) armedLine(ctx context.Context, a *asking) (line string, ok bool, err error) {
	timer := time.NewTimer(time.Until(a.ready))
	defer timer.Stop()
	var buf []byte
	early := false
	for {
		select {
		case <-ctx.Done():
			return "", false, ctx.Err()
		case <-timer.C:
			if early {
				p.say(earlyNotice)
				return "", false, nil
			}
		case c := <-p.in.next():
			p.in.res = nil
			if c.err != nil {
				return "", false, fmt.Errorf("reading the terminal: %w: %w", c.err, prompt.ErrCancelled)
			}
			if c.at.Before(a.ready) {
				early, buf, a.ready = true, nil, c.at.Add(p.arm)
				timer.Reset(time.Until(a.ready))
				continue
			}
			buf = append(buf, c.data...)
			i := bytes.IndexByte(buf, '\n')
			if i < 0 && len(buf) <= maxLineBytes {
				continue // the rest of a line ended early by Ctrl-D
			}
			if c.more || i != len(buf)-1 {
				a.ready = c.at.Add(p.arm)
				if err := p.flushInput(); err != nil {
					return "", false, err
				}
				p.say("askperm: ignored input that arrived all at once (pasted?); type one answer, then Enter.\n")
				return "", false, nil
			}
			if early {
				p.say(earlyNotice)
			}
			return strings.TrimSpace(string(buf[:i])), true, nil
		}
	}
}

// earlyNotice says that lines were discarded because they arrived before
// the question was ready.
const earlyNotice = "askperm: ignored what was typed before the question was ready.\n"

// timeLeft is " (4m52s left)" while ctx has a deadline, "" without one:
// whole seconds rounded up under an hour, whole minutes rounded up from
// one, so that it never reads 0 before the end.
func timeLeft(ctx context.Context) string {
	dl, ok := ctx.Deadline()
	if !ok {
		return ""
	}
	return " (" + formatLeft(time.Until(dl)) + " left)"
}

func formatLeft(d time.Duration) string {
	secs := int64((max(d, 0) + time.Second - 1) / time.Second)
	switch {
	case secs < 60:
		return fmt.Sprintf("%ds", secs)
	case secs < 3600 && secs%60 == 0:
		return fmt.Sprintf("%dm", secs/60)
	case secs < 3600:
		return fmt.Sprintf("%dm%02ds", secs/60, secs%60)
	}
	mins := (secs + 59) / 60
	if mins%60 == 0 {
		return fmt.Sprintf("%dh", mins/60)
	}
	return fmt.Sprintf("%dh%02dm", mins/60, mins%60)
}

func (p *linePrompt) flushInput() error {
	if p.flush == nil {
		return nil
	}
	if err := p.flush(); err != nil {
		return fmt.Errorf("discarding typeahead: %w: %w", err, prompt.ErrCancelled)
	}
	return nil
}

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

// readLine shows q and returns the next line typed after the arming delay,
// trimmed. Each showing flushes typeahead and starts the delay afresh.
// EOF, a read error or a hang-up is prompt.ErrCancelled, never an answer.
func (p *linePrompt) readLine(ctx context.Context, q question) (string, error) {
	for {
		pg := p.page()
		q(pg)
		p.write(pg)
		if p.err != nil {
			return "", fmt.Errorf("terminal: %w: %w", p.err, prompt.ErrCancelled)
		}
		if err := p.flushInput(); err != nil {
			return "", err
		}
		line, ok, err := p.armedLine(ctx)
		if ok || err != nil {
			return line, err
		}
	}
}

// armedLine waits for one line. A line counts only when the person paused
// for the whole delay before it: each line that arrives sooner is
// discarded and starts the delay again, and once input has paused for the
// delay the question is shown again with a notice (!ok). Lines that arrive
// together (pasted, typed ahead) are discarded too.
//
// In canonical mode the kernel hands over only complete lines, so keys
// typed before Enter cannot be timed. They are never flushed when the
// delay ends: a line begun during the delay and ended after it is judged
// whole, and "git apply" is no key, while a flush would have cut it to "y".
func (p *linePrompt) armedLine(ctx context.Context) (line string, ok bool, err error) {
	armed := time.Now().Add(p.arm)
	timer := time.NewTimer(p.arm)
	defer timer.Stop()
	var buf []byte
	early := false
	for {
		select {
		case <-ctx.Done():
			return "", false, ctx.Err()
		case <-timer.C:
			if early {
				p.say("askperm: ignored what was typed before the question was ready.\n")
				return "", false, nil
			}
		case c := <-p.in.next():
			p.in.res = nil
			if c.err != nil {
				return "", false, fmt.Errorf("reading the terminal: %w: %w", c.err, prompt.ErrCancelled)
			}
			if c.at.Before(armed) {
				early, buf, armed = true, nil, c.at.Add(p.arm)
				timer.Reset(time.Until(armed))
				continue
			}
			buf = append(buf, c.data...)
			i := bytes.IndexByte(buf, '\n')
			if i < 0 && len(buf) <= maxLineBytes {
				continue // the rest of a line ended early by Ctrl-D
			}
			if c.more || i != len(buf)-1 {
				if err := p.flushInput(); err != nil {
					return "", false, err
				}
				p.say("askperm: ignored input that arrived all at once (pasted?); type one answer, then Enter.\n")
				return "", false, nil
			}
			return strings.TrimSpace(string(buf[:i])), true, nil
		}
	}
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

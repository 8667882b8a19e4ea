package ask

import (
	"context"
	"fmt"
	"io"
)

// ReadRequest reads a whole request from r: everything up to EOF, at most
// max bytes, before ctx ends. A caller that never closes its end gets an
// error at the deadline, never an answer to a half-read request.
func ReadRequest(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, max+1))
		done <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		// The reader goroutine stays blocked on r; the process exits soon.
		return nil, fmt.Errorf("request not fully read: %w", context.Cause(ctx))
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("reading the request: %w", res.err)
		}
		if int64(len(res.b)) > max {
			return nil, fmt.Errorf("request larger than %d bytes", max)
		}
		return res.b, nil
	}
}

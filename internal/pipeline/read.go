package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Read reads a whole request (or an agent's hook payload) from r: everything up to EOF, at most
// max bytes, before ctx ends. A caller that never closes its end gets an
// error when ctx ends, never an answer to a half-read request. With an
// error come the bytes read so far, where there are any: a hook must still
// tell the event of a payload it cannot take, to fail closed in that
// event's terms.
//
// A pipe, socket or terminal is read through the runtime poller, so that
// the read ends with ctx and nothing is left behind; other readers are read
// in a goroutine that ends when their read does.
func Read(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if pf, release, ok := pollable(f); ok {
			defer release()
			stop := context.AfterFunc(ctx, func() { _ = pf.SetReadDeadline(time.Unix(1, 0)) })
			defer stop()
			b, err := readAll(pf, max, sizeHint(f))
			if ctx.Err() != nil {
				return b, fmt.Errorf("request not fully read: %w", context.Cause(ctx))
			}
			return checkRead(b, err, max)
		}
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	hint := int64(-1)
	if f, ok := r.(*os.File); ok {
		hint = sizeHint(f)
	}
	go func() {
		b, err := readAll(r, max, hint)
		done <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("request not fully read: %w", context.Cause(ctx))
	case res := <-done:
		return checkRead(res.b, res.err, max)
	}
}

// firstRead is the buffer a read of unknown size starts with. Pages of it
// that are never read into are never touched, so a small request costs
// little more than its size; a request of up to about a MiB is read into
// it with no copy.
const firstRead = 1 << 20

// readAll reads r up to EOF, but no more than max+1 bytes (one past the
// cap, to tell a request that is too large), into one buffer: size bytes
// where the size is known (hint >= 0), else firstRead and doubling.
func readAll(r io.Reader, max, hint int64) ([]byte, error) {
	limit := max + 1
	size := min(limit, firstRead)
	if hint >= 0 {
		size = min(limit, hint+1) // +1: room to see the EOF
	}
	b := make([]byte, 0, size)
	var probe []byte
	for int64(len(b)) < limit {
		into := b[len(b):cap(b)]
		if len(b) == cap(b) {
			// Full: grow only if there is more than the EOF.
			if probe == nil {
				probe = make([]byte, 4096)
			}
			into = probe[:min(int64(len(probe)), limit-int64(len(b)))]
		}
		n, err := r.Read(into)
		if len(b) == cap(b) && n > 0 {
			grown := make([]byte, len(b), min(limit, 2*int64(cap(b))))
			copy(grown, b)
			b = append(grown, into[:n]...)
		} else {
			b = b[:len(b)+n]
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// sizeHint is how much is left to read of f when it is a regular file,
// else -1.
func sizeHint(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil || off > fi.Size() {
		return -1
	}
	return fi.Size() - off
}

func checkRead(b []byte, err error, max int64) ([]byte, error) {
	if err != nil {
		return b, fmt.Errorf("reading the request: %w", err)
	}
	if int64(len(b)) > max {
		return b, tooLarge(max)
	}
	return b, nil
}

// ReadRequest is Read of a request: nothing but blanks is said as no
// request, as when askperm runs with nothing piped in, not as JSON that
// ended early.
func ReadRequest(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	b, err := Read(ctx, r, max)
	if err == nil && len(bytes.TrimSpace(b)) == 0 {
		err = errors.New("no request on stdin (pipe one JSON request in)")
	}
	return b, err
}

// tooLarge is the error of a request beyond the size cap: it names the
// flag that raises the cap.
func tooLarge(max int64) error {
	size := fmt.Sprintf("%d bytes", max)
	switch {
	case max%(1<<20) == 0:
		size = fmt.Sprintf("%d MiB", max>>20)
	case max%(1<<10) == 0:
		size = fmt.Sprintf("%d KiB", max>>10)
	}
	return fmt.Errorf("request larger than %s (raise --max-request)", size)
}

// pollable returns a copy of f that the runtime poller serves, and how to
// release it, or false when f cannot be polled (a regular file, whose
// reads never wait). The copy shares f's open file description, so the
// non-blocking mode it needs is taken off again on release unless f had
// it already: the caller's end of a shared pipe is left as it was.
func pollable(f *os.File) (*os.File, func(), bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	var dup, flags int
	var ctlErr error
	if err := rc.Control(func(fd uintptr) {
		if flags, ctlErr = unix.FcntlInt(fd, unix.F_GETFL, 0); ctlErr == nil {
			dup, ctlErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		}
	}); err != nil || ctlErr != nil {
		return nil, nil, false
	}
	wasNonblock := flags&unix.O_NONBLOCK != 0
	restore := func() {
		if !wasNonblock {
			_ = unix.SetNonblock(dup, false)
		}
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return nil, nil, false
	}
	pf := os.NewFile(uintptr(dup), f.Name())
	if pf.SetReadDeadline(time.Time{}) != nil { // not pollable
		restore()
		pf.Close()
		return nil, nil, false
	}
	return pf, func() {
		restore()
		pf.Close()
	}, true
}

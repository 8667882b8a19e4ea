package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// PendingName is the file, in the state directory, of audit lines that
// could not be appended within their request's deadline because the log
// stayed locked: the next helper that holds the log appends them first,
// so a decision is late in the log, never missing from it.
const PendingName = "audit.pending"

// keepPending appends line to the pending file in dir, under its own lock
// waited for within ctx (keepLine).
func keepPending(ctx context.Context, dir string, line []byte) error {
	f, err := openOwned(filepath.Join(dir, PendingName), os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	defer f.Close()
	return keepLine(ctx, f, line)
}

// keepLine appends line whole to the kept-lines file f under its lock,
// waited for within ctx (lockWait; a request whose deadline has passed
// tries once), while the file stays under MaxAuditSize. Its holders hold
// it only to append a line or to fold the file in, but a wave of helpers
// whose store or log stayed locked all come to keep theirs at once: they
// queue for it rather than lose their records.
func keepLine(ctx context.Context, f *os.File, line []byte) error {
	if err := retry(ctx, f.Name(), lockWait(ctx), nil, func() (bool, error) { return tryLock(f) }); err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size()+int64(len(line)) > MaxAuditSize {
		return fmt.Errorf("%s: full", f.Name())
	}
	return appendWhole(f, line)
}

// foldPending appends the whole lines of the pending file in dir to the
// log f, which its caller holds locked, and empties the file. A pending
// file locked by another helper is left for the next. A crash between
// the append and the emptying logs those lines twice, never not at all.
func foldPending(dir string, log *os.File) error {
	f, err := openOwned(filepath.Join(dir, PendingName), os.O_APPEND)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	ok, lines, err := takeLines(f)
	if !ok || len(lines) == 0 {
		return err
	}
	if err := appendWhole(log, lines); err != nil {
		return err
	}
	return f.Truncate(0)
}

// takeLines locks the kept-lines file f without waiting (ok says it was
// taken) and reads its whole lines, leaving out a torn tail.
func takeLines(f *os.File) (ok bool, lines []byte, err error) {
	if ok, err := tryLock(f); !ok {
		return false, nil, err
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return true, nil, err
	}
	end, err := lastLineEnd(f, fi.Size())
	if err != nil || end == 0 {
		return true, nil, err
	}
	lines = make([]byte, end)
	_, err = io.ReadFull(io.NewSectionReader(f, 0, end), lines)
	return true, lines, err
}

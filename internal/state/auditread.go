package state

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// MaxAuditLine is the longest audit line read: far past any entry the
// writer produces (request text in it is capped). A longer line is
// reported and skipped.
const MaxAuditLine = 1 << 20

// auditReorder is how many entries ScanAudit holds to put lines written
// slightly out of time order (stamped before their writer got the lock)
// back in order; an entry displaced further than that stays where it is.
const auditReorder = 4096

// auditSkew is how far before its file's last line an entry may be
// stamped: a rotated file whose last line is older than Since by more
// than this holds nothing Since keeps.
const auditSkew = time.Minute

// AuditQuery says which entries ScanAudit gives.
type AuditQuery struct {
	// Since, if set, skips entries before it, and whole rotated files
	// that end before it without reading them.
	Since time.Time
	// Keep, if set, says which of the rest to give.
	Keep func(AuditEntry) bool
	// Skipped, if set, hears of each line too long to read.
	Skipped func(error)
}

// ScanAudit calls each with the entries of the audit log in dir that q
// keeps, oldest first (entries of equal time in the order written),
// reading line by line in memory bounded by MaxAuditLine and
// auditReorder. A line that is not an entry is skipped; an error from
// each ends the scan with it.
func ScanAudit(dir string, q AuditQuery, each func(AuditEntry) error) error {
	names, err := auditFiles(dir, q.Since)
	if err != nil {
		return err
	}
	var held auditHeap
	seq := 0
	for _, name := range names {
		err := scanLines(filepath.Join(dir, name), q.Skipped, func(line []byte) error {
			var e AuditEntry
			if json.Unmarshal(line, &e) != nil || e.Time.Before(q.Since) || (q.Keep != nil && !q.Keep(e)) {
				return nil
			}
			heap.Push(&held, &heldEntry{e, seq})
			seq++
			if held.Len() > auditReorder {
				return each(heap.Pop(&held).(*heldEntry).AuditEntry)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for held.Len() > 0 {
		if err := each(heap.Pop(&held).(*heldEntry).AuditEntry); err != nil {
			return err
		}
	}
	return nil
}

// auditFiles are the log's files to read for entries since since, oldest
// first: walking from the newest back, a file whose last line ends before
// since ends the walk, as every older one does too.
func auditFiles(dir string, since time.Time) ([]string, error) {
	var names []string
	for _, name := range []string{AuditName, AuditName + ".1"} {
		last, err := lastEntryTime(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !since.IsZero() && !last.IsZero() && last.Add(auditSkew).Before(since) {
			break
		}
		names = append([]string{name}, names...)
	}
	return names, nil
}

// lastEntryTime is the time of the last whole line of the file at path,
// zero if that line is no entry (so the file is read, not skipped).
func lastEntryTime(path string) (time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	end, err := lastLineEnd(f, fi.Size())
	if err != nil || end == 0 {
		return time.Time{}, err
	}
	start := max(0, end-MaxAuditLine)
	b := make([]byte, end-1-start)
	if _, err := f.ReadAt(b, start); err != nil {
		return time.Time{}, err
	}
	var e struct{ Time time.Time }
	if json.Unmarshal(b[bytes.LastIndexByte(b, '\n')+1:], &e) != nil {
		return time.Time{}, nil
	}
	return e.Time, nil
}

// scanLines calls each with every line of the file at path (a last line
// without its newline too), skipping a line longer than MaxAuditLine and
// telling skipped of it.
func scanLines(path string, skipped func(error), each func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, MaxAuditLine+1)
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if skipped != nil {
				skipped(fmt.Errorf("%s line %d: longer than %d bytes, skipped", path, n, MaxAuditLine))
			}
			line = nil
		}
		if len(line) > 0 {
			if err := each(bytes.TrimSuffix(line, []byte{'\n'})); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// heldEntry is an entry waiting in ScanAudit's reorder window; seq keeps
// entries of equal time in the order read.
type heldEntry struct {
	AuditEntry
	seq int
}

// auditHeap orders held entries by time, then by seq (container/heap);
// it holds pointers, as swapping whole entries cost a fifth of the scan.
type auditHeap []*heldEntry

func (h auditHeap) Len() int { return len(h) }
func (h auditHeap) Less(i, j int) bool {
	if !h[i].Time.Equal(h[j].Time) {
		return h[i].Time.Before(h[j].Time)
	}
	return h[i].seq < h[j].seq
}
func (h auditHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *auditHeap) Push(x any)   { *h = append(*h, x.(*heldEntry)) }
func (h *auditHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

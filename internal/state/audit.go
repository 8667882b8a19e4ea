package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/askperm/askperm/decision"
)

// AuditName is the audit log's file name in the state directory; the
// previous one, rotated out, has ".1" appended.
const AuditName = "audit.log"

// MaxAuditSize is the size past which the audit log is rotated.
const MaxAuditSize = 8 << 20

// AuditEntry is one decision in the audit log: one JSON line. Request text
// in it is rendered safe and capped by whoever writes it.
type AuditEntry struct {
	Time          time.Time         `json:"time"`
	RequestSHA256 string            `json:"request_sha256"`
	ID            *string           `json:"id,omitempty"`
	Server        string            `json:"server,omitempty"`
	Alias         string            `json:"alias,omitempty"`
	Tool          string            `json:"tool,omitempty"`
	Source        string            `json:"source,omitempty"`
	Action        string            `json:"action"`
	SessionID     string            `json:"session_id,omitempty"`
	Dimensions    map[string]string `json:"dimensions,omitempty"`
	// Shells is the dialect of each dimension that is a command line
	// (syntax shell), so that its value is read as the rules read it.
	Shells map[string]string `json:"shells,omitempty"`
	// Inexact names the fields and dimensions whose text here is not the
	// request's: rendered safe or cut. No rule is proposed from them.
	Inexact   []string          `json:"inexact,omitempty"`
	Decision  string            `json:"decision"`
	Persist   string            `json:"persist"`
	Rule      *decision.Rule    `json:"rule,omitempty"`
	Cause     decision.Cause    `json:"cause"`
	Frontend  decision.Frontend `json:"frontend"`
	Stop      bool              `json:"stop,omitempty"`
	DecidedBy []string          `json:"decided_by,omitempty"` // the rules or memory entries, or the reviewer, that decided
	// NotRemembered says why a decision to be remembered (for the session
	// or always) was not: the decision still says so.
	NotRemembered string `json:"not_remembered,omitempty"`
	LatencyMS     int64  `json:"latency_ms"`
	// AskedMS is how long the frontends (a person) took, when they were
	// asked.
	AskedMS *int64 `json:"asked_ms,omitempty"`
	// Approver is the public key of the team approver who answered.
	Approver string `json:"approver,omitempty"`
	// Ignored are the answers from elsewhere not taken, and why.
	Ignored []string `json:"ignored,omitempty"`
}

// personFrontends are the frontends a person answers through.
var personFrontends = []decision.Frontend{decision.FrontendTUI, decision.FrontendLine, decision.FrontendYad, decision.FrontendZenity, decision.FrontendTeam}

// Asked reports whether a person was asked for e: its frontend is one a
// person answers through (whoever ended it: the person, a timeout).
func (e AuditEntry) Asked() bool { return slices.Contains(personFrontends, e.Frontend) }

// ByPerson reports whether a person made e's decision: not rules, memory,
// canned answers or a timeout.
func (e AuditEntry) ByPerson() bool { return e.Cause == decision.CauseUser && e.Asked() }

// AppendAudit appends e to the audit log in dir, as one line written
// whole or not at all, under an exclusive lock, waited for within ctx,
// that also guards the rotation. A log locked past the wait gets the line
// later (keepPending), and the error says so; the lines kept so are
// appended before e's.
func AppendAudit(ctx context.Context, dir string, e AuditEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := ownedDir(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, AuditName)
	f, err := openLocked(ctx, path)
	if errors.Is(err, ErrLocked) {
		if perr := keepPending(ctx, dir, line); perr != nil {
			return fmt.Errorf("%w; the line is lost: %v", err, perr)
		}
		return fmt.Errorf("%w; the line is kept in %s until it frees", err, PendingName)
	}
	if err != nil {
		return err
	}
	defer f.Close() // also unlocks
	if fi, err := f.Stat(); err == nil && fi.Size()+int64(len(line)) > MaxAuditSize {
		// Rotate while holding the old file's lock: a writer waiting for
		// it finds the file renamed and opens the new one (openLocked).
		if err := os.Rename(path, path+".1"); err != nil {
			return fmt.Errorf("rotating %s: %w", path, err)
		}
		f.Close()
		if f, err = openLocked(ctx, path); err != nil {
			return err
		}
		defer f.Close()
	}
	// A pending file that cannot be folded now is left for later: it
	// never keeps e's line out.
	ferr := foldPending(dir, f)
	if err := appendWhole(f, line); err != nil {
		return err
	}
	if ferr != nil {
		return fmt.Errorf("%s: %w", PendingName, ferr)
	}
	return nil
}

// auditFile is what appendWhole needs of the open log.
type auditFile interface {
	io.Writer
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
}

// appendWhole appends line to f, which its caller holds locked, whole or
// not at all: a write that fails part-way (a full disk) is cut back, and
// so is a torn tail a writer left before (the file not ending in a
// newline, as after a crash), which would otherwise swallow the next line.
func appendWhole(f auditFile, line []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size, err := lastLineEnd(f, fi.Size())
	if err != nil {
		return err
	}
	if size != fi.Size() {
		if err := f.Truncate(size); err != nil {
			return fmt.Errorf("cutting a torn line: %w", err)
		}
	}
	if _, err := f.Write(line); err != nil {
		if terr := f.Truncate(size); terr != nil {
			return fmt.Errorf("%w; and the torn line could not be cut: %v", err, terr)
		}
		return err
	}
	return nil
}

// lastLineEnd is the offset just after the last newline of the first
// size bytes of f, 0 if none.
func lastLineEnd(f io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 4096)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// openLocked opens the log for reading and appending with an exclusive
// lock, waited for within ctx, making sure that the file locked is still
// the one at path (not rotated away while waiting).
func openLocked(ctx context.Context, path string) (*os.File, error) {
	for {
		f, err := openOwned(path, os.O_APPEND|os.O_CREATE)
		if err != nil {
			return nil, err
		}
		if err := lockFile(ctx, f); err != nil {
			f.Close()
			return nil, err
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &now) == nil && held.Ino == now.Ino {
			return f, nil
		}
		f.Close()
	}
}

// ReadAudit returns the entries of the audit log in dir, the rotated one
// first, that keep says to keep, in the order ScanAudit gives them.
func ReadAudit(dir string, keep func(AuditEntry) bool) ([]AuditEntry, error) {
	var out []AuditEntry
	err := ScanAudit(dir, AuditQuery{Keep: keep}, func(e AuditEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

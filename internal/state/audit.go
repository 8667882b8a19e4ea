package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	Decision      string            `json:"decision"`
	Persist       string            `json:"persist"`
	Rule          *decision.Rule    `json:"rule,omitempty"`
	Cause         decision.Cause    `json:"cause"`
	Frontend      decision.Frontend `json:"frontend"`
	Stop          bool              `json:"stop,omitempty"`
	DecidedBy     []string          `json:"decided_by,omitempty"` // the rules or memory entries that decided
	LatencyMS     int64             `json:"latency_ms"`
}

// AppendAudit appends e to the audit log in dir, as one line in one
// write, under an exclusive lock that also guards the rotation.
func AppendAudit(dir string, e AuditEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := checkOwned(dir, true); err != nil {
		return err
	}
	path := filepath.Join(dir, AuditName)
	f, err := openLocked(path)
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
		if f, err = openLocked(path); err != nil {
			return err
		}
		defer f.Close()
	}
	_, err = f.Write(line)
	return err
}

// openLocked opens the log for appending with an exclusive lock, making
// sure that the file locked is still the one at path (not rotated away
// while waiting).
func openLocked(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &now) == nil && held.Ino == now.Ino {
			if err := checkOwned(path, false); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		f.Close()
	}
}

// ReadAudit returns the entries of the audit log in dir, the rotated one
// first, that keep says to keep. A line that is not an entry is skipped.
func ReadAudit(dir string, keep func(AuditEntry) bool) ([]AuditEntry, error) {
	var out []AuditEntry
	for _, name := range []string{AuditName + ".1", AuditName} {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e AuditEntry
			if json.Unmarshal(sc.Bytes(), &e) == nil && keep(e) {
				out = append(out, e)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeAudit writes entries stamped at times to the file name in dir.
func writeAudit(t *testing.T, dir, name string, times ...time.Time) {
	t.Helper()
	var b strings.Builder
	for i, at := range times {
		line, err := json.Marshal(AuditEntry{Time: at, Action: name + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func scanActions(t *testing.T, dir string, q AuditQuery) string {
	t.Helper()
	var got []string
	if err := ScanAudit(dir, q, func(e AuditEntry) error { got = append(got, e.Action); return nil }); err != nil {
		t.Fatal(err)
	}
	return strings.Join(got, " ")
}

// With Since, a rotated file whose last line is older than Since is not
// read at all: its range is its first and last line. (An entry in it
// stamped later than its last line, as no writer does, shows it unread.)
func TestScanAuditSkipsOlderFiles(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	writeAudit(t, dir, AuditName+".1", t0, t0.Add(time.Hour), t0)
	writeAudit(t, dir, AuditName, t0.Add(2*time.Hour), t0.Add(3*time.Hour))
	if got, want := scanActions(t, dir, AuditQuery{Since: t0.Add(30 * time.Minute)}), "audit.loga audit.logb"; got != want {
		t.Errorf("since 30m: %q, want %q", got, want)
	}
	if got, want := scanActions(t, dir, AuditQuery{}), "audit.log.1a audit.log.1c audit.log.1b audit.loga audit.logb"; got != want {
		t.Errorf("all: %q, want %q", got, want)
	}
	// A rotated file ending within the skew of Since is still read.
	if got, want := scanActions(t, dir, AuditQuery{Since: t0.Add(auditSkew / 2)}), "audit.log.1b audit.loga audit.logb"; got != want {
		t.Errorf("since within the skew: %q, want %q", got, want)
	}
}

// An error from the caller ends the scan with it.
func TestScanAuditStopsOnError(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	writeAudit(t, dir, AuditName, t0, t0)
	stop := os.ErrClosed
	n := 0
	if err := ScanAudit(dir, AuditQuery{}, func(AuditEntry) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("err %v after %d entries", err, n)
	}
}

package tty

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestFindPaneRefuses: an announcement is believed only when its process
// is a running pane on that terminal and only this user could write it.
func TestFindPaneRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, ok := FindPane(dir); ok {
		t.Fatal("found a pane with no announcement")
	}
	self := strconv.Itoa(os.Getpid())
	for name, content := range map[string]string{
		"not JSON":                       `{`,
		"a process that is not a pane":   `{"pid":` + self + `,"tty":"/dev/null"}`,
		"a process gone":                 `{"pid":2147483646,"tty":"/dev/pts/0"}`,
		"a relative terminal":            `{"pid":` + self + `,"tty":"pts/0"}`,
		"no pid":                         `{"tty":"/dev/pts/0"}`,
		"a terminal that does not exist": `{"pid":` + self + `,"tty":"/dev/pts/999999"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, paneFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if p, ok := FindPane(dir); ok {
			t.Errorf("%s: found a pane on %s", name, p.TTY)
		}
	}
	// Loosely permissioned: anyone could have pointed helpers at a terminal.
	file := filepath.Join(dir, paneFile)
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, ok := readPane(file); ok {
		t.Fatal("read a world-writable announcement")
	}
}

package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Whatever writes to a state directory first makes it, mode 0700: the
// audit log and the prompt queue as well as the store.
func TestFirstWriterMakesTheDirectory(t *testing.T) {
	ctx := context.Background()
	for name, write := range map[string]func(dir string) error{
		"audit": func(dir string) error { return AppendAudit(ctx, dir, AuditEntry{Time: time.Unix(1, 0)}) },
		"turn": func(dir string) error {
			release, err := WaitTurn(ctx, dir, func() {})
			if err == nil {
				release()
			}
			return err
		},
	} {
		dir := filepath.Join(t.TempDir(), "a", "askperm")
		if err := write(dir); err != nil {
			t.Errorf("%s in a missing directory: %v", name, err)
			continue
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: the directory is %v, %v; want mode 0700", name, fi, err)
		}
	}
}

// A state file that is a symlink is refused, even to a file of the
// user's own: whoever placed it would choose where askperm writes, or
// which file's lock it takes. The file it points to is left as it was.
func TestStateFilesAreNotFollowed(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		file  string
		write func(dir string) error
	}{
		"audit": {AuditName, func(dir string) error { return AppendAudit(ctx, dir, AuditEntry{Time: time.Unix(1, 0)}) }},
		"turn": {TurnName, func(dir string) error {
			release, err := WaitTurn(ctx, dir, func() {})
			if err == nil {
				release()
			}
			return err
		}},
		"late counts": {LateCountsName, func(dir string) error { return KeepCount(context.Background(), dir, "s", false) }},
	} {
		dir, target := t.TempDir(), filepath.Join(t.TempDir(), "elsewhere")
		if err := os.WriteFile(target, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, c.file)); err != nil {
			t.Fatal(err)
		}
		if err := c.write(dir); err == nil {
			t.Errorf("%s through a symlink: no error", name)
		}
		if b, err := os.ReadFile(target); err != nil || len(b) != 0 {
			t.Errorf("%s wrote %q to the symlink's target (%v)", name, b, err)
		}
	}
}

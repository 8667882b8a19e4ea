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

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGateConcurrentCallsWithMemory: twenty calls in flight at once
// through one gate with memory on, each answered and recorded: the audit
// log has all twenty, and, the gate still running, another process opens
// the store (the gate holds it only while its calls use it).
func TestGateConcurrentCallsWithMemory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600)
	env := memoryEnv()
	s := gateSession(t, env, dir, "--answer", "allow-once")
	readAtOnce(t, s, dir, 20)
	state := strings.TrimPrefix(env[len(env)-1], "XDG_STATE_HOME=")
	log := auditLog(t, state)
	allowed := 0
	for _, e := range log {
		if e.Tool == "read_text_file" && e.Decision == "allow" {
			allowed++
		}
	}
	if allowed != 20 || len(log) != 20 {
		t.Errorf("audit log %+v; want the twenty calls allowed", log)
	}
	if r := runPipe(t, nil, env, "rules", "list"); r.code != 0 {
		t.Errorf("rules list, the gate running: exit %d, %s", r.code, r.stderr)
	}
}

// readAtOnce reads dir's notes.txt ("hello") through s with n calls in
// flight at once, each of which must succeed.
func readAtOnce(t *testing.T, s *mcp.ClientSession, dir string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			text, isErr := call(t, s, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})
			if isErr || text != "hello" {
				t.Errorf("call %d in flight: %q, error %v", i, text, isErr)
			}
		})
	}
	wg.Wait()
}

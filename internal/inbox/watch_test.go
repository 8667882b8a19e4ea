package inbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/inbox/inboxtest"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// TestWatchOutlivesItsAttempts: the watches Watch begins within a
// bounded attempt (wire.Retry) last until Watch's context ends: a
// request published, and then marked done, after the attempts' bound has
// passed still comes and goes.
func TestWatchOutlivesItsAttempts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ap := inboxtest.StartApprover(ctx, t)
	tt, err := Watch(ctx, ap.JS, ap.Config, func(err error) { t.Errorf("warning: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(wire.AttemptTimeout + 500*time.Millisecond) // past every attempt's bound

	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	host := inboxtest.NewHost(t, ap.URL, ap.Host, ap.Public)
	req := host.Publish(raw, "late", time.Now().Add(time.Hour))
	waitLen(t, tt.List, 1)
	host.Done(req, team.Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseUnavailable})
	waitLen(t, tt.List, 0)
}

// waitLen waits until l holds n requests.
func waitLen(t *testing.T, l *List, n int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); l.Len() != n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the list holds %d requests, not %d", l.Len(), n)
		}
	}
}

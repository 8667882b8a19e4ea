package natstest

import (
	"context"
	"testing"

	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// SetUp creates the team's streams and buckets (default prefix, with
// replicas) on the servers at url as the set-up user does (askperm-team
// setup): hosts and approvers may not.
func (tm *Team) SetUp(t testing.TB, url string, replicas int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyWithin)
	defer cancel()
	if err := tm.TrySetUp(ctx, tm.Setup, url, replicas); err != nil {
		t.Fatalf("natstest: setting the team up: %v", err)
	}
}

// TrySetUp creates the team's streams as u, within ctx.
func (tm *Team) TrySetUp(ctx context.Context, u User, url string, replicas int) error {
	c := team.Config{URL: url, Creds: u.SeedFile, Host: "setup", Prefix: team.DefaultPrefix, Replicas: replicas}
	return wire.SetUp(ctx, c, u.InboxPrefix())
}

package natstest_test

import (
	"context"
	"testing"

	"github.com/askperm/askperm/internal/team/natstest"
)

// A server shut down and restarted mid-wait keeps the team's streams and
// messages, and a host's watch goes on to see an answer written after.
func TestServerRestartKeepsStreamsAndWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("the watch resumes after its missed heartbeats")
	}
	tm := natstest.NewTeam(t, []string{"hosta"}, 1)
	srv := natstest.StartServer(t, tm)
	host := connect(t, tm.Hosts[0], srv.URL)
	appr := connect(t, tm.Approvers[0], srv.URL)
	ctx := testContext(t)
	tm.SetUp(t, srv.URL, 1)
	req := []byte(`{"id":"r1"}`)
	if _, err := host.publishRequest(ctx, "hosta", req); err != nil {
		t.Fatal(err)
	}
	answers := appr.kv(t, answersKV)
	w, err := host.kv(t, answersKV).Watch(ctx, "hosta."+digest(req)+".*")
	if err != nil {
		t.Fatalf("host watches one request's answers: %v", err)
	}
	defer func() { _ = w.Stop() }()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("no answer yet, got %s", e.Key())
	}

	srv.Shutdown()
	srv.Restart()

	key := answerKey("hosta", digest(req), appr)
	retry(t, ctx, "approver answers after the restart", func(ctx context.Context) error {
		_, err := answers.Create(ctx, key, []byte(`{"answer":1}`))
		return err
	})
	if e := <-w.Updates(); e == nil || e.Key() != key {
		t.Fatalf("host's watch after the restart: %v", e)
	}
	if n := appr.msgs(t, reqStream); n != 1 {
		t.Fatalf("requests stream holds %d after the restart, want 1", n)
	}
	if _, err := host.js.AccountInfo(ctx); err != nil {
		t.Fatalf("host reads account info: %v", err)
	}
}

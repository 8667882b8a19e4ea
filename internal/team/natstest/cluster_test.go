package natstest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/internal/team/natstest"
)

// With R3 streams and buckets, killing the node that leads the answers
// bucket loses nothing: a host's watch goes on, an approver's answer written
// after the kill reaches it, requests are still accepted, and the node
// catches up when it comes back.
func TestClusterSurvivesLeaderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("three servers and an election")
	}
	tm := natstest.NewTeam(t, []string{"hosta"}, 1)
	c := natstest.StartCluster(t, tm)
	host := connect(t, tm.Hosts[0], c.URL())
	appr := connect(t, tm.Approvers[0], c.URL())
	ctx := testContext(t)
	tm.SetUp(t, c.URL(), 3)

	req1 := []byte(`{"id":"r1"}`)
	if _, err := host.publishRequest(ctx, "hosta", req1); err != nil {
		t.Fatal(err)
	}
	w, err := host.kv(t, answersKV).Watch(ctx, "hosta.>")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("no answer yet, got %s", e.Key())
	}

	answers, done := appr.kv(t, answersKV), host.kv(t, doneKV)
	s, err := appr.js.Stream(ctx, "KV_"+answersKV)
	if err != nil {
		t.Fatal(err)
	}
	leader := s.CachedInfo().Cluster.Leader
	c.Kill(leader)

	key := answerKey("hosta", digest(req1), appr)
	retry(t, ctx, "approver answers after the leader died", func(ctx context.Context) error {
		_, err := answers.Create(ctx, key, []byte(`{"answer":1}`))
		return err
	})
	if e := <-w.Updates(); e == nil || e.Key() != key || string(e.Value()) != `{"answer":1}` {
		t.Fatalf("host's watch after the leader died: %v", e)
	}
	req2 := []byte(`{"id":"r2"}`)
	retry(t, ctx, "host publishes after the leader died", func(ctx context.Context) error {
		_, err := host.publishRequest(ctx, "hosta", req2)
		return err
	})

	c.Restart(leader)
	retry(t, ctx, "host marks done with the node back", func(ctx context.Context) error {
		_, err := done.Create(ctx, "hosta."+digest(req1), []byte(`{"outcome":"allow"}`))
		return err
	})
	if n := appr.msgs(t, reqStream); n != 2 {
		t.Fatalf("requests stream holds %d, want 2", n)
	}
	if n := appr.msgs(t, "KV_"+answersKV); n != 1 {
		t.Fatalf("answers bucket holds %d, want the one answer", n)
	}
	s, err = appr.js.Stream(ctx, "KV_"+answersKV)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Cluster; got.Leader == "" || len(got.Replicas) != 2 {
		t.Fatalf("answers bucket after the restart: %+v", got)
	}
}

// retry repeats op while the cluster elects a new leader (no leader, or a
// reply lost with the dead node, show as errors or as no reply, so each try
// has its own bound); a create that did land before its reply was lost
// reads as the key existing and counts as done.
func retry(t *testing.T, ctx context.Context, what string, op func(context.Context) error) {
	t.Helper()
	var err error
	for ctx.Err() == nil {
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = op(try)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrKeyExists) {
			return
		}
		t.Logf("%s: %v", what, err)
	}
	t.Fatalf("%s: %v", what, err)
}

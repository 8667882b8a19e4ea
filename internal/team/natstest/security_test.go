package natstest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	teammode "github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// keysOf is every key of bucket, read by c.
func keysOf(t *testing.T, c *client, bucket string) []string {
	t.Helper()
	ks, err := c.kv(t, bucket).ListKeys(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range ks.Keys() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// rollupAll publishes on subject, a key c may write, with the header that
// asks JetStream to purge the whole stream but this message.
func rollupAll(t *testing.T, c *client, subject string) error {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Data = []byte("x")
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupAll)
	_, err := c.js.PublishMsg(testContext(t), m)
	return err
}

// A key a user may write is no lever on anyone else's: a rollup on a
// host's own done key, or on an approver's own answer or rule key, is
// refused, and every other host's done marks, every other approver's
// answers and rules stay.
func TestNobodyRollsUpABucket(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	ask := teammode.NewAsk()
	if _, err := tt.hostB.kv(t, doneKV).Create(ctx, "hostb."+ask, []byte(`{"outcome":"allow"}`)); err != nil {
		t.Fatal(err)
	}
	answer := answerKey("hostb", ask, tt.appr2)
	if _, err := tt.appr2.kv(t, answersKV).Create(ctx, answer, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	rule := tt.appr2.user.Public + ".0123456789abcdef0123456789abcdef"
	if _, err := tt.appr2.kv(t, rulesKV).Create(ctx, rule, []byte(`{"r":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who     *client
		subject string
	}{
		{tt.hostA, "$KV." + doneKV + ".hosta." + teammode.NewAsk()},
		{tt.appr1, "$KV." + answersKV + ".hostb." + ask + "." + tt.appr1.user.Public},
		{tt.appr1, "$KV." + rulesKV + "." + tt.appr1.user.Public + ".fedcba9876543210fedcba9876543210"},
	} {
		if err := rollupAll(t, tc.who, tc.subject); err == nil {
			t.Errorf("%s: a rollup on %s was taken", tc.who.user, tc.subject)
		}
	}
	if got := keysOf(t, tt.appr1, doneKV); !slices.Equal(got, []string{"hostb." + ask}) {
		t.Errorf("done marks after the rollups: %v", got)
	}
	if e, err := tt.hostB.kv(t, answersKV).Get(ctx, answer); err != nil || string(e.Value()) != `{"a":1}` {
		t.Errorf("approver 2's answer after the rollups: %v", err)
	}
	if got := keysOf(t, tt.appr1, rulesKV); !slices.Equal(got, []string{rule}) {
		t.Errorf("rules after the rollups: %v", got)
	}
}

// Only the set-up user creates and updates streams: an approver can
// neither add a republish (to read every answer) or a subject transform
// (to write under another approver's key) to the answers bucket, nor set
// the team up; the set-up user can.
func TestOnlyTheSetUpUserUpdatesStreams(t *testing.T) {
	tt := startTeam(t)
	rogue, victim := tt.appr1, tt.appr2
	s, err := rogue.js.Stream(testContext(t), "KV_"+answersKV)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.SubjectTransform = &jetstream.SubjectTransformConfig{
		Source:      "$KV." + answersKV + ".*.*." + rogue.user.Public,
		Destination: "$KV." + answersKV + ".{{wildcard(1)}}.{{wildcard(2)}}." + victim.user.Public,
	}
	cfg.RePublish = &jetstream.RePublish{Source: ">", Destination: rogue.user.InboxPrefix() + ".leak.>"}
	rogue.denied(t, "$JS.API.STREAM.UPDATE.KV_"+answersKV, func(ctx context.Context) error {
		_, err := rogue.js.UpdateStream(ctx, cfg)
		return err
	})
	ctx, cancel := context.WithTimeout(testContext(t), 2*time.Second)
	defer cancel()
	if err := tt.tm.TrySetUp(ctx, tt.tm.Approvers[0], tt.url, 1); err == nil {
		t.Error("an approver set the team up")
	}
	if err := tt.tm.TrySetUp(testContext(t), tt.tm.Setup, tt.url, 1); err != nil {
		t.Errorf("the set-up user sets the team up again: %v", err)
	}
	if got := rogue.msgs(t, "KV_"+answersKV); got != 0 {
		t.Errorf("answers after the refused update: %d", got)
	}
	if info, err := rogue.js.Stream(testContext(t), "KV_"+answersKV); err != nil || info.CachedInfo().Config.RePublish != nil || info.CachedInfo().Config.SubjectTransform != nil {
		t.Errorf("the answers bucket after the refused update: %v", err)
	}
}

// The same request bytes from two hosts are two requests, both stored
// and neither told it is a duplicate of the other.
func TestSameBytesFromTwoHosts(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	n := teammode.Names{Prefix: teammode.DefaultPrefix}
	raw := []byte(`{"id":"same","tool":"write_file","action":"write"}`)
	deadline := time.Now().Add(time.Minute)
	for _, h := range []struct {
		c    *client
		name string
	}{{tt.hostA, "hosta"}, {tt.hostB, "hostb"}} {
		if err := wire.Publish(ctx, h.c.js, n, h.name, teammode.NewAsk(), raw, deadline); err != nil {
			t.Errorf("%s: %v", h.name, err)
		}
	}
	if got := tt.appr1.msgs(t, reqStream); got != 2 {
		t.Errorf("the requests stream holds %d requests, want 2", got)
	}
}

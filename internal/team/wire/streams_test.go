package wire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/internal/team"
)

func TestParsePending(t *testing.T) {
	n := team.Names{Prefix: team.DefaultPrefix}
	req := parse(t, testRequest)
	deadline := time.UnixMilli(1_800_000_000_123)
	ask := team.NewAsk()
	header := func(host, a, id, ms string) nats.Header {
		h := nats.Header{}
		h.Set(team.HeaderHost, host)
		h.Set(team.HeaderAsk, a)
		h.Set(team.HeaderMsgID, id)
		h.Set(team.HeaderDeadline, ms)
		return h
	}
	ms := strconv.FormatInt(deadline.UnixMilli(), 10)
	id := team.AskID("ci-1", ask)
	p, err := ParsePending(n, n.RequestSubject("ci-1"), header("ci-1", ask, id, ms), []byte(testRequest))
	if err != nil || p.Host != "ci-1" || p.Ask != ask || p.ID() != id || p.Digest != req.SHA256 || !p.Deadline.Equal(deadline) || string(p.Raw) != testRequest || p.Request.SHA256 != req.SHA256 {
		t.Fatalf("got %+v, %v", p, err)
	}
	for _, tc := range []struct {
		name, subject string
		header        nats.Header
		data, want    string
	}{
		{"another prefix", "other.req.ci-1", header("ci-1", ask, id, ms), testRequest, "is not a request subject"},
		{"a two-token host", "askperm.req.ci.1", header("ci.1", ask, id, ms), testRequest, "is not a request subject"},
		{"host header not the subject's", n.RequestSubject("ci-1"), header("ci-2", ask, id, ms), testRequest, `Askperm-Host "ci-2"`},
		{"no deadline", n.RequestSubject("ci-1"), header("ci-1", ask, id, ""), testRequest, "Askperm-Deadline"},
		{"a deadline in seconds", n.RequestSubject("ci-1"), header("ci-1", ask, id, "-5"), testRequest, "Askperm-Deadline"},
		{"no ask id", n.RequestSubject("ci-1"), header("ci-1", "", id, ms), testRequest, "Askperm-Ask"},
		{"a digest for the ask id", n.RequestSubject("ci-1"), header("ci-1", req.SHA256, "ci-1."+req.SHA256, ms), testRequest, "not an ask id"},
		{"message id the digest alone", n.RequestSubject("ci-1"), header("ci-1", ask, req.SHA256, ms), testRequest, "message id"},
		{"message id another host's", n.RequestSubject("ci-1"), header("ci-1", ask, team.AskID("ci-2", ask), ms), testRequest, "message id"},
		{"an invalid request", n.RequestSubject("ci-1"), header("ci-1", ask, id, ms), `{"action":""}`, "request"},
	} {
		_, err := ParsePending(n, tc.subject, tc.header, []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Setting the team up twice changes nothing. An ask published twice is
// one request, and the second publish an error; any other ask of the
// same bytes, on this host or another, is a request of its own (no
// host's request is ever dropped as another's duplicate).
func TestEnsureStreamsAndPublishEachAskOnce(t *testing.T) {
	_, c, _ := teamUp(t, userKey(t))
	js := jetStream(t, c)
	ctx := context.Background()
	if err := EnsureStreams(ctx, js, c); err != nil {
		t.Fatalf("again: %v", err)
	}
	ask := team.NewAsk()
	deadline := time.Now().Add(time.Minute)
	if err := Publish(ctx, js, c.Names(), c.Host, ask, []byte(testRequest), deadline); err != nil {
		t.Fatal(err)
	}
	if err := Publish(ctx, js, c.Names(), c.Host, ask, []byte(testRequest), deadline); err == nil || !strings.Contains(err.Error(), "published before") {
		t.Errorf("the same ask published again: %v", err)
	}
	for _, h := range []string{c.Host, "ci-2"} {
		if err := Publish(ctx, js, c.Names(), h, team.NewAsk(), []byte(testRequest), deadline); err != nil {
			t.Errorf("another ask of the same bytes on %s: %v", h, err)
		}
	}
	s, err := js.Stream(ctx, c.Names().RequestStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.State.Msgs != 3 {
		t.Errorf("%d requests stored, want 3 (%v)", info.State.Msgs, err)
	}
}

// No bucket takes a rollup (a Nats-Rollup header on any key it may
// write would purge every key of the bucket: every host's done marks,
// every approver's answers and rules); a key's delete marker (rules
// forget --team) still works. Every stream refuses purges.
func TestStreamsRefuseRollupsAndPurges(t *testing.T) {
	_, c, _ := teamUp(t, userKey(t))
	js := jetStream(t, c)
	ctx := context.Background()
	n := c.Names()
	for _, bucket := range []string{n.AnswersBucket(), n.DoneBucket(), n.RulesBucket()} {
		kv, err := js.KeyValue(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Create(ctx, "ci-2.kept", []byte("x")); err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg("$KV." + bucket + ".ci-1.mine")
		m.Data = []byte("x")
		m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupAll)
		if _, err := js.PublishMsg(ctx, m); err == nil {
			t.Errorf("%s took a rollup", bucket)
		}
		if err := kv.Purge(ctx, "ci-2.kept"); err == nil {
			t.Errorf("%s purged a key", bucket)
		}
		if e, err := kv.Get(ctx, "ci-2.kept"); err != nil || string(e.Value()) != "x" {
			t.Errorf("%s: the other key after a rollup: %v", bucket, err)
		}
		if err := kv.Delete(ctx, "ci-2.kept"); err != nil {
			t.Errorf("%s: delete: %v", bucket, err)
		}
		if _, err := kv.Get(ctx, "ci-2.kept"); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("%s: a deleted key: %v", bucket, err)
		}
	}
	for _, sc := range Streams(c) {
		s, err := js.Stream(ctx, sc.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Purge(ctx); err == nil {
			t.Errorf("%s was purged", sc.Name)
		}
	}
}

// Bind refuses a stream or bucket changed, by anyone who may update
// streams, so that it copies, moves or takes in what it should not, and
// one made without EnsureStreams' settings (as jetstream makes a bucket
// by default: rollups allowed).
func TestBindRefusesTamperedStreams(t *testing.T) {
	ts := startServer(t)
	c := validConfig(team.PublicKey(userKey(t)))
	c.URL = ts.url()
	js := jetStream(t, c)
	ctx := context.Background()
	answers := func(n team.Names) string { return "KV_" + n.AnswersBucket() }
	for i, tc := range []struct {
		name   string
		stream func(n team.Names) string
		edit   func(*jetstream.StreamConfig)
	}{
		{"a republish of the answers", answers, func(s *jetstream.StreamConfig) {
			s.RePublish = &jetstream.RePublish{Source: ">", Destination: "leak.>"}
		}},
		{"a subject transform of the answers", answers, func(s *jetstream.StreamConfig) {
			s.SubjectTransform = &jetstream.SubjectTransformConfig{Source: s.Subjects[0], Destination: "$KV.ELSEWHERE.>"}
		}},
		{"a source into the done bucket", func(n team.Names) string { return "KV_" + n.DoneBucket() }, func(s *jetstream.StreamConfig) {
			s.Sources = []*jetstream.StreamSource{{Name: "ELSEWHERE"}}
		}},
		{"more request subjects", func(n team.Names) string { return n.RequestStream() }, func(s *jetstream.StreamConfig) {
			s.Subjects = append(s.Subjects, "elsewhere.>")
		}},
	} {
		c := c
		c.Prefix = fmt.Sprintf("t%d", i)
		if err := EnsureStreams(ctx, js, c); err != nil {
			t.Fatal(err)
		}
		if _, err := Bind(ctx, js, c); err != nil {
			t.Fatalf("%s: before: %v", tc.name, err)
		}
		s, err := js.Stream(ctx, tc.stream(c.Names()))
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.CachedInfo().Config
		tc.edit(&cfg)
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := Bind(ctx, js, c); !errors.Is(err, ErrBadStream) {
			t.Errorf("%s: Bind: %v", tc.name, err)
		}
	}
	// A host's audit line is not published on an audit stream that would
	// copy it elsewhere.
	c.Prefix = "audit"
	if err := EnsureStreams(ctx, js, c); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, c.Names().AuditStream())
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.RePublish = &jetstream.RePublish{Source: ">", Destination: "leak.>"}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := PublishAudit(ctx, c, []byte(`{"audit":1}`)); !errors.Is(err, ErrBadStream) {
		t.Errorf("an audit line on a republishing stream: %v", err)
	}
	c.Prefix = "draft"
	if err := EnsureStreams(ctx, js, c); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, "KV_"+c.Names().DoneBucket()); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: c.Names().DoneBucket()}); err != nil {
		t.Fatal(err)
	}
	if _, err := Bind(ctx, js, c); !errors.Is(err, ErrBadStream) || !strings.Contains(err.Error(), "purges") {
		t.Errorf("a done bucket that takes rollups: Bind: %v", err)
	}
}

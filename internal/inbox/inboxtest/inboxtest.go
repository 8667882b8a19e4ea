// Package inboxtest is a host of a team, for tests of the inbox: it
// publishes requests to the team's server as the team frontend does,
// marks them done, and reads the answers approvers wrote, verified as the
// host verifies them. The server and its users come from natstest, so
// that the documented permissions are the ones tested. Test-only:
// imported from _test.go files, never from code the askperm binary
// links.
package inboxtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/natstest"
	"github.com/askperm/askperm/internal/team/wire"
)

// Host is a host of the team, trusting some approvers. The team's
// streams must exist (an approver's askperm inbox makes them).
type Host struct {
	t      testing.TB
	Config team.Config
	js     jetstream.JetStream
	asks   map[string]string // the ask id of each request published, by digest
}

// NewHost connects host u (a natstest host user) to the server at url.
func NewHost(t testing.TB, url string, u natstest.User, approvers ...string) *Host {
	t.Helper()
	c := team.Config{URL: url, Creds: u.SeedFile, Host: u.Name, Approvers: approvers, Prefix: team.DefaultPrefix, Replicas: 1}
	return &Host{t: t, Config: c, js: connect(context.Background(), t, c, team.HostInbox(c.Host)), asks: map[string]string{}}
}

// connect connects to c's server as c.Creds, replying on inbox, until
// ctx ends or the test does.
func connect(ctx context.Context, t testing.TB, c team.Config, inbox string) jetstream.JetStream {
	t.Helper()
	nc, err := wire.Connect(ctx, c, inbox)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Publish publishes the request raw with its id set to id (to tell
// requests apart), ending at deadline, as the team frontend does, and
// returns it as sent.
func (h *Host) Publish(raw []byte, id string, deadline time.Time) *decision.Request {
	h.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		h.t.Fatal(err)
	}
	m["id"] = id
	raw, _ = json.Marshal(m)
	req, err := decision.Parse(raw)
	if err != nil {
		h.t.Fatal(err)
	}
	ask := team.NewAsk()
	if err := wire.Publish(context.Background(), h.js, h.Config.Names(), h.Config.Host, ask, raw, deadline); err != nil {
		h.t.Fatal(err)
	}
	h.asks[req.SHA256] = ask
	return req
}

// Ask is the ask id req was published with.
func (h *Host) Ask(req *decision.Request) string {
	h.t.Helper()
	a, ok := h.asks[req.SHA256]
	if !ok {
		h.t.Fatalf("request %s was not published", req.SHA256)
	}
	return a
}

// KV is the team's bucket named bucket.
func (h *Host) KV(bucket string) jetstream.KeyValue {
	h.t.Helper()
	kv, err := h.js.KeyValue(context.Background(), bucket)
	if err != nil {
		h.t.Fatal(err)
	}
	return kv
}

// Done marks req ended, as the host does when an answer decided it or
// it timed out.
func (h *Host) Done(req *decision.Request, d team.Done) {
	h.t.Helper()
	if err := wire.WriteDone(context.Background(), h.KV(h.Config.Names().DoneBucket()), h.Config.Host, h.Ask(req), d); err != nil {
		h.t.Fatal(err)
	}
}

// Answer is approver's answer to req, waited for up to 10 seconds and
// verified as the host verifies it; the test fails without one.
func (h *Host) Answer(req *decision.Request, approver string) decision.Decision {
	h.t.Helper()
	kv := h.KV(h.Config.Names().AnswersBucket())
	key := team.AnswerKey(h.Config.Host, h.Ask(req), approver)
	e, err := kv.Get(context.Background(), key)
	for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		e, err = kv.Get(context.Background(), key)
	}
	if err != nil {
		h.t.Fatalf("no answer %s: %v", key, err)
	}
	v, err := team.Verify(h.Config, h.Ask(req), key, e.Value(), req)
	if err != nil {
		h.t.Fatalf("the answer does not verify: %v", err)
	}
	return v.Decision
}

// Approver is an approver of a team whose server runs for the test, its
// streams set up, with one host, alpha: the approver's config and
// JetStream, connected until ctx ends.
type Approver struct {
	natstest.User
	Config team.Config
	JS     jetstream.JetStream
	URL    string
	Host   natstest.User
}

// StartApprover starts the team's server and connects its approver.
func StartApprover(ctx context.Context, t testing.TB) *Approver {
	t.Helper()
	tm := natstest.NewTeam(t, []string{"alpha"}, 1)
	u := natstest.StartServer(t, tm).URL
	tm.SetUp(t, u, 1)
	ap := tm.Approvers[0]
	c := team.Config{URL: u, Creds: ap.SeedFile, Host: "approver", Prefix: team.DefaultPrefix, Replicas: 1}
	return &Approver{User: ap, Config: c, JS: connect(ctx, t, c, team.ApproverInbox(ap.Public)), URL: u, Host: tm.Hosts[0]}
}

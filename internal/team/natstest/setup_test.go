package natstest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	teammode "github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/natstest"
)

// The team's names with the default prefix, as docs/team/nats.conf spells them.
const (
	reqStream   = "ASKPERM_REQ"
	auditStream = "ASKPERM_AUDIT"
	answersKV   = "ASKPERM_ANSWERS"
	doneKV      = "ASKPERM_DONE"
	rulesKV     = "ASKPERM_RULES"
)

// client is one user's connection, with the asynchronous errors the server
// sent it (permission violations arrive there, not as call results).
type client struct {
	user natstest.User
	nc   *nats.Conn
	js   jetstream.JetStream
	errs chan error
}

func connect(t *testing.T, u natstest.User, url string) *client {
	t.Helper()
	errs := make(chan error, 64)
	nc := u.Connect(t, url, errs)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &client{user: u, nc: nc, js: js, errs: errs}
}

func (c *client) kv(t *testing.T, bucket string) jetstream.KeyValue {
	t.Helper()
	kv, err := c.js.KeyValue(testContext(t), bucket)
	if err != nil {
		t.Fatalf("%s binds %s: %v", c.user, bucket, err)
	}
	return kv
}

// denied runs op, which the server must refuse, and waits for the
// permission violation whose subject contains subject; then op's context is
// cancelled (a refused request gets no reply) and op must have failed or
// been a fire-and-forget publish.
func (c *client) denied(t *testing.T, subject string, op func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	for {
		select {
		case err := <-c.errs:
			if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
				continue
			}
			cancel()
			if done != nil {
				<-done
			}
			return
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				// A call that failed on its own (say a subscription refused at
				// once) still has to be reported by the server: keep waiting.
				t.Logf("%s: %v", c.user, err)
			}
			done = nil
		case <-ctx.Done():
			t.Fatalf("%s: no permission violation for %q", c.user, subject)
		}
	}
}

// testContext bounds a test's waits: a minute, and never past shortly
// before the test binary's deadline, so a wait that never ends fails its
// test rather than panicking or starving the tests after it.
func testContext(t *testing.T) context.Context {
	t.Helper()
	end := time.Now().Add(time.Minute)
	if d, ok := t.Deadline(); ok && d.Add(-5*time.Second).Before(end) {
		end = d.Add(-5 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	t.Cleanup(cancel)
	return ctx
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// publishRequest publishes a request as a host's team frontend does, with
// an ask id of its own.
func (c *client) publishRequest(ctx context.Context, host string, body []byte) (*jetstream.PubAck, error) {
	m := nats.NewMsg("askperm.req." + host)
	m.Data = body
	ask := teammode.NewAsk()
	m.Header.Set(jetstream.MsgIDHeader, teammode.AskID(host, ask))
	m.Header.Set(teammode.HeaderAsk, ask)
	m.Header.Set("Askperm-Host", host)
	m.Header.Set("Askperm-Deadline", "4102444800000")
	return c.js.PublishMsg(ctx, m)
}

// msgs is how many messages a stream holds, read from its info (which every
// user may read) so a refused write can be shown to have left nothing.
func (c *client) msgs(t *testing.T, stream string) uint64 {
	t.Helper()
	s, err := c.js.Stream(testContext(t), stream)
	if err != nil {
		t.Fatalf("%s: stream %s: %v", c.user, stream, err)
	}
	return s.CachedInfo().State.Msgs
}

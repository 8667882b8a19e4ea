package team

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestParsePending(t *testing.T) {
	n := Names{DefaultPrefix}
	req := parse(t, testRequest)
	deadline := time.UnixMilli(1_800_000_000_123)
	header := func(host, id, ms string) nats.Header {
		h := nats.Header{}
		h.Set(HeaderHost, host)
		h.Set(HeaderMsgID, id)
		h.Set(HeaderDeadline, ms)
		return h
	}
	ms := strconv.FormatInt(deadline.UnixMilli(), 10)
	p, err := ParsePending(n, n.RequestSubject("ci-1"), header("ci-1", req.SHA256, ms), []byte(testRequest))
	if err != nil || p.Host != "ci-1" || p.Digest != req.SHA256 || !p.Deadline.Equal(deadline) || string(p.Raw) != testRequest || p.Request.SHA256 != req.SHA256 {
		t.Fatalf("got %+v, %v", p, err)
	}
	for _, tc := range []struct {
		name, subject string
		header        nats.Header
		data, want    string
	}{
		{"another prefix", "other.req.ci-1", header("ci-1", req.SHA256, ms), testRequest, "is not a request subject"},
		{"a two-token host", "askperm.req.ci.1", header("ci.1", req.SHA256, ms), testRequest, "is not a request subject"},
		{"host header not the subject's", n.RequestSubject("ci-1"), header("ci-2", req.SHA256, ms), testRequest, `Askperm-Host "ci-2"`},
		{"no deadline", n.RequestSubject("ci-1"), header("ci-1", req.SHA256, ""), testRequest, "Askperm-Deadline"},
		{"a deadline in seconds", n.RequestSubject("ci-1"), header("ci-1", req.SHA256, "-5"), testRequest, "Askperm-Deadline"},
		{"message id not the digest", n.RequestSubject("ci-1"), header("ci-1", digestOf("x"), ms), testRequest, "is not the request's digest"},
		{"an invalid request", n.RequestSubject("ci-1"), header("ci-1", req.SHA256, ms), `{"action":""}`, "request"},
	} {
		_, err := ParsePending(n, tc.subject, tc.header, []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Setting the team up twice changes nothing; publishing a request twice
// is one request.
func TestEnsureStreamsAndPublishOnce(t *testing.T) {
	_, c, _ := teamUp(t, userKey(t))
	js := jetStream(t, c)
	ctx := context.Background()
	if err := EnsureStreams(ctx, js, c); err != nil {
		t.Fatalf("again: %v", err)
	}
	req := parse(t, testRequest)
	for range 2 {
		if err := Publish(ctx, js, c.Names(), c.Host, req.SHA256, []byte(testRequest), time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := js.Stream(ctx, c.Names().RequestStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.State.Msgs != 1 {
		t.Errorf("%d requests stored, want 1 (%v)", info.State.Msgs, err)
	}
}

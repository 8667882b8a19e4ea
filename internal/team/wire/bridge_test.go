package wire

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/askperm/askperm/internal/team"
)

// A bridge refuses a first line that is not a request it can carry,
// before connecting to anything.
func TestBridgeRefusesBadStart(t *testing.T) {
	line := func(s team.BridgeStart) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	c := validConfig()
	deadline := time.Now().Add(time.Minute).UnixMilli()
	for _, tc := range []struct{ name, in, want string }{
		{"nothing", "", "the request: EOF"},
		{"not JSON", "hello\n", "the request"},
		{"an invalid request", line(team.BridgeStart{Config: c, Request: []byte(`{"action":""}`), Digest: digestOf(`{}`), Deadline: deadline}), "the request"},
		{"another digest", line(team.BridgeStart{Config: c, Request: []byte(testRequest), Digest: digestOf(`{}`), Ask: team.NewAsk(), Deadline: deadline}), "the request's digest is"},
		{"no ask id", line(team.BridgeStart{Config: c, Request: []byte(testRequest), Digest: parse(t, testRequest).SHA256, Deadline: deadline}), "not an ask id"},
	} {
		var out bytes.Buffer
		err := Bridge(context.Background(), strings.NewReader(tc.in), &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
			t.Errorf("%s: %v, wrote %q; want %q", tc.name, err, out.String(), tc.want)
		}
	}
}

// A request the bridge cannot publish is an event saying why, and no
// error: askperm reads the reason.
func TestBridgeUnavailable(t *testing.T) {
	c := validConfig(team.PublicKey(userKey(t)))
	c.URL = "nats://127.0.0.1:" + strconv.Itoa(freePort(t))
	start, _ := json.Marshal(team.BridgeStart{Config: c, Request: []byte(testRequest), Digest: parse(t, testRequest).SHA256, Ask: team.NewAsk(), Deadline: time.Now().Add(time.Minute).UnixMilli()})
	// askperm keeps the bridge's stdin open while the request lives.
	in, w := io.Pipe()
	defer w.Close()
	go w.Write(append(start, '\n'))
	var out bytes.Buffer
	if err := Bridge(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	var ev team.BridgeEvent
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &ev); err != nil || !strings.Contains(ev.Unavailable, "no servers available") {
		t.Errorf("wrote %q (%v)", out.String(), err)
	}
}

package wire

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/quick"

	"github.com/askperm/askperm/internal/team"
)

// fakeLogin is a server that sends nonce in its INFO and returns the
// signature of the client's CONNECT ("" if none came), with Connect's
// error for an approver logging in with creds.
func fakeLogin(t *testing.T, creds, k, nonce string) (string, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sigc := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			sigc <- ""
			return
		}
		defer c.Close()
		n, _ := json.Marshal(nonce)
		c.Write([]byte(`INFO {"server_id":"evil","version":"2.11.0","proto":1,"headers":true,"max_payload":1048576,"auth_required":true,"nonce":` + string(n) + "}\r\n"))
		l, _ := bufio.NewReader(c).ReadString('\n')
		var cn struct {
			Sig string `json:"sig"`
		}
		json.Unmarshal([]byte(strings.TrimPrefix(l, "CONNECT ")), &cn)
		sigc <- cn.Sig
	}()
	c := validConfig(k)
	c.URL, c.Creds = "nats://"+ln.Addr().String(), creds
	nc, err := Connect(context.Background(), c, team.ApproverInbox(k))
	if nc != nil {
		nc.Close()
	}
	return <-sigc, err
}

// A server (or anyone on a nats:// path) picks the nonce the approver's
// key signs at login: it gets no signature over anything but a nonce
// nats-server could send, in particular not over an answer's or a
// rule's statement, with or without its domain.
func TestLoginSignsOnlyServerNonces(t *testing.T) {
	kp := userKey(t)
	k := team.PublicKey(kp)
	seed, _ := kp.Seed()
	creds := filepath.Join(t.TempDir(), "team.nk")
	if err := os.WriteFile(creds, append(seed, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	statement := `{"ask":"0123456789abcdef0123456789abcdef","decision":{"decision":"allow"},"host":"victim"}`
	for _, nonce := range []string{
		statement,
		team.AnswerDomain + statement,
		team.RuleDomain + `{"approver":"` + k + `"}`,
		"{abcdefghijklmno",
		"abcdefg\nhijklmnop",
		"abcdefghijklmnopqrstuvw", // too long
		"abcdefghij",              // too short
		"abcdefghijk+mno",         // not base64url
	} {
		sig, err := fakeLogin(t, creds, k, nonce)
		if sig != "" {
			t.Errorf("nonce %q: signed at login", nonce)
		}
		if err == nil || !strings.Contains(err.Error(), "nonce") {
			t.Errorf("nonce %q: Connect error %v, want one naming the nonce", nonce, err)
		}
	}
	// nats-server's own kind of nonce is signed.
	if sig, _ := fakeLogin(t, creds, k, "AbCdEfGhIjK-_01"); sig == "" {
		t.Error("a nats-server nonce was not signed")
	}
}

// Every nonce nats-server makes (11 random bytes in unpadded base64url)
// is signed; no nonce signed can start with a statement's domain or be
// JSON.
func TestServerNonceProperty(t *testing.T) {
	for range 1000 {
		raw := make([]byte, 11)
		rand.Read(raw)
		if n := base64.RawURLEncoding.EncodeToString(raw); !serverNonce([]byte(n)) {
			t.Fatalf("nats-server's nonce %q refused", n)
		}
	}
	signed := func(b []byte) bool {
		if !serverNonce(b) {
			return true
		}
		s := string(b)
		return !strings.HasPrefix(s, team.AnswerDomain) && !strings.HasPrefix(s, team.RuleDomain) &&
			!strings.ContainsAny(s, "{\n \"")
	}
	if err := quick.Check(signed, &quick.Config{MaxCount: 10000}); err != nil {
		t.Error(err)
	}
	for _, d := range []string{team.AnswerDomain, team.RuleDomain} {
		if err := quick.Check(func(tail []byte) bool { return !serverNonce(append([]byte(d), tail...)) }, nil); err != nil {
			t.Error(err)
		}
	}
}

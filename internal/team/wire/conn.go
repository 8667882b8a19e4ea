package wire

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/userfile"
)

// ReachTimeout bounds reaching the server (team.ReachTimeout).
const ReachTimeout = team.ReachTimeout

// reconnectWait is the pause between two attempts to reconnect: short,
// since a person's answer may be waiting.
const reconnectWait = 250 * time.Millisecond

// Connect connects to c.URL (tls:// for TLS) with c.Creds, within
// ReachTimeout or ctx, whichever ends first. inbox is the reply subject
// prefix (team.HostInbox or team.ApproverInbox), so that the server's permissions
// can keep each client to its own replies. Once connected, the
// connection is re-established for ever after every loss; its owner
// closes it.
func Connect(ctx context.Context, c team.Config, inbox string, opts ...nats.Option) (*nats.Conn, error) {
	reach := ReachTimeout
	if deadline, ok := ctx.Deadline(); ok {
		reach = min(reach, time.Until(deadline))
	}
	if reach <= 0 {
		return nil, fmt.Errorf("%s: no time left to connect", c.URL)
	}
	auth, err := credentials(c.Creds)
	if err != nil {
		return nil, err
	}
	all := []nats.Option{
		nats.Name("askperm " + c.Host),
		nats.Timeout(reach),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.ReconnectJitter(50*time.Millisecond, 250*time.Millisecond),
		nats.CustomInboxPrefix(inbox),
		// Errors are reported by the calls that meet them; the default
		// handler would print to stderr on its own.
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}),
	}
	if auth != nil {
		all = append(all, auth)
	}
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := nats.Connect(c.URL, append(all, opts...)...)
		done <- result{nc, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", c.URL, r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() { // a connection made too late is closed, not leaked
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("%s: %w", c.URL, context.Cause(ctx))
	}
}

// WithJetStream connects as Connect does, runs do with the connection's
// JetStream, and closes the connection.
func WithJetStream(ctx context.Context, c team.Config, inbox string, do func(jetstream.JetStream) error) error {
	nc, err := Connect(ctx, c, inbox)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return do(js)
}

// The login nonce nats-server sends is 11 random bytes in unpadded
// base64url, 15 characters; a little slack either way is allowed for
// other versions. The same key signs answers and team rules, so a
// server (or anyone on a nats:// path) must not get it to sign other
// bytes: those start with a domain (team.AnswerDomain, RuleDomain) no
// nonce can hold, and anything but a short base64url string is refused.
const minNonce, maxNonce = 11, 22

// serverNonce reports whether nonce is one nats-server could send.
func serverNonce(nonce []byte) bool {
	if len(nonce) < minNonce || len(nonce) > maxNonce {
		return false
	}
	for _, c := range nonce {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// truncate is at most the first 32 bytes of b, for an error message.
func truncate(b []byte) []byte { return b[:min(len(b), 32)] }

// jwtMarker starts the JWT of a NATS .creds file.
var jwtMarker = []byte("-----BEGIN NATS USER JWT-----")

// credentials is the option that authenticates with the file at path: a
// NATS .creds file (a user JWT and its seed) or an nkey seed file (one
// line, SU...), told apart by content. The file is a secret
// (userfile.ReadSecret); "" is no option.
func credentials(path string) (nats.Option, error) {
	if path == "" {
		return nil, nil
	}
	b, err := userfile.ReadSecret(path)
	if err != nil {
		return nil, fmt.Errorf("creds: %w", err)
	}
	kp, err := nkeys.ParseDecoratedUserNKey(b)
	if err != nil {
		return nil, fmt.Errorf("creds: %s: neither a NATS .creds file nor an nkey user seed: %w", path, err)
	}
	sign := func(nonce []byte) ([]byte, error) {
		if !serverNonce(nonce) {
			return nil, fmt.Errorf("the server's login nonce %q is not one nats-server makes (%d to %d base64url characters): refusing to sign it with %s", truncate(nonce), minNonce, maxNonce, path)
		}
		return kp.Sign(nonce)
	}
	if !bytes.Contains(b, jwtMarker) {
		return nats.Nkey(team.PublicKey(kp), sign), nil
	}
	jwt, err := nkeys.ParseDecoratedJWT(b)
	if err != nil {
		return nil, fmt.Errorf("creds: %s: %w", path, err)
	}
	return nats.UserJWT(func() (string, error) { return jwt, nil }, sign), nil
}

package teamcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/mdp/qrterminal/v3"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/webinbox"
)

// defaultWebAddr is the address --web's help suggests.
const defaultWebAddr = "127.0.0.1:8765"

// defaultOrigin is the page's origin when --origin is not given: the
// address listened on, named localhost when it is a loopback one (a
// passkey's relying party is a host name, never an IP address).
func defaultOrigin(addr *net.TCPAddr, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host := addr.IP.String()
	if addr.IP.IsLoopback() || addr.IP.IsUnspecified() {
		host = "localhost"
	}
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(host, strconv.Itoa(addr.Port)))
}

// listenWeb listens on addr and returns the page's origin (given, or
// defaultOrigin). When the origin's host is localhost, it listens on the
// same port on both loopback addresses: a browser resolves localhost to
// either (Chromium tries ::1 first), and a program holding the other one
// would be served the page's origin, its passkeys and cookies. A host
// without an IPv6 loopback is served on 127.0.0.1 alone. On an error, the
// listeners opened are returned, to be closed.
func listenWeb(addr, origin string, tls bool) ([]net.Listener, string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", err
	}
	if host == "localhost" { // resolved here, so the other loopback is known
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, "", err
	}
	lns := []net.Listener{ln}
	a := ln.Addr().(*net.TCPAddr)
	if origin == "" {
		origin = defaultOrigin(a, tls)
	}
	u, err := url.Parse(origin)
	if err != nil || !webinbox.LocalhostName(u.Hostname()) || !(a.IP.IsLoopback() || a.IP.Equal(net.IPv4zero)) {
		return lns, origin, nil // New checks the origin itself
	}
	other := "::1"
	if a.IP.To4() == nil {
		other = "127.0.0.1"
	}
	ln2, err := net.Listen("tcp", net.JoinHostPort(other, strconv.Itoa(a.Port)))
	switch {
	case err == nil:
		lns = append(lns, ln2)
	case other == "::1" && (errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT)):
		// no IPv6 loopback here: nobody can hold it either
	default:
		return lns, "", fmt.Errorf("the origin %s is localhost, so the page must hold port %d on both loopback addresses: %w", origin, a.Port, err)
	}
	return lns, origin, nil
}

// runInboxWeb serves the inbox as a web page until a signal, printing on
// stderr (the approver's terminal) the one-time pairing link when one is
// offered, and every passkey registered.
func runInboxWeb(s cli.Streams, o *inboxOptions) error {
	tls := o.tlsCert != "" || o.tlsKey != ""
	if tls && (o.tlsCert == "" || o.tlsKey == "") {
		return cli.Usage("inbox --web: give both --tls-cert and --tls-key")
	}
	if err := webinbox.CheckAddr(o.web, tls); err != nil {
		return cli.Usage("inbox: %v", err)
	}
	return withLasting(s, o, stderrWarnings(s), func(ctx context.Context, a *approver) error { return serveWeb(ctx, s, o, a, tls) })
}

// serveWeb serves a's inbox until ctx ends.
func serveWeb(ctx context.Context, s cli.Streams, o *inboxOptions, a *approver, tls bool) error {
	set := a.set
	if set.StateDir == "" {
		return cli.Usage("inbox --web: no state directory for the passkeys: set XDG_STATE_HOME or HOME, or give --state-dir")
	}
	lns, origin, err := listenWeb(o.web, o.origin, tls)
	for _, ln := range lns {
		defer ln.Close()
	}
	if err != nil {
		return cli.Usage("inbox --web: %v", err)
	}
	srv, pair, err := webinbox.New(webinbox.Config{Team: a.team, Key: a.key, ArmDelay: set.Prompt.Arming(), Origin: origin,
		Passkeys: filepath.Join(set.StateDir, webinbox.PasskeyFile), Pair: o.pair, Registered: func(id []byte, at time.Time) {
			cli.Warn(s.ErrOut, fmt.Sprintf("inbox: a passkey was registered at %s (id %.8x…): if it was not you, stop askperm inbox and remove it from %s",
				at.UTC().Format(time.RFC3339), id, webinbox.PasskeyFile))
		}})
	if err != nil {
		return cli.Usage("inbox --web: %v", err)
	}
	go srv.Broadcast(ctx)
	if pair == "" {
		cli.Warn(s.ErrOut, fmt.Sprintf("inbox: serving %s on %s; log in at %s/login with your passkey (to pair another browser, start with --pair)",
			origin, lns[0].Addr(), origin))
	} else {
		cli.Warn(s.ErrOut, fmt.Sprintf("inbox: serving %s on %s; log in at %s/login. To pair a browser (register its passkey), open this one-time link in it within %v, or scan the code below: %s",
			origin, lns[0].Addr(), origin, webinbox.PairingLife, pair))
		qrterminal.GenerateHalfBlock(pair, qrterminal.L, s.ErrOut)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	context.AfterFunc(ctx, func() { _ = hs.Close() })
	served := make(chan error, len(lns))
	for _, ln := range lns {
		go func() {
			if tls {
				served <- hs.ServeTLS(ln, o.tlsCert, o.tlsKey)
			} else {
				served <- hs.Serve(ln)
			}
		}()
	}
	err = <-served
	_ = hs.Close()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("inbox --web: %w", err)}
	}
	return nil
}

package teamcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
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

// runInboxWeb serves the inbox as a web page until a signal, printing the
// one-time pairing link on stderr (the approver's terminal).
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
	ln, err := net.Listen("tcp", o.web)
	if err != nil {
		return cli.Usage("inbox --web: %v", err)
	}
	defer ln.Close()
	origin := o.origin
	if origin == "" {
		origin = defaultOrigin(ln.Addr().(*net.TCPAddr), tls)
	}
	srv, pair, err := webinbox.New(webinbox.Config{Team: a.team, Key: a.key, ArmDelay: set.Prompt.Arming(), Origin: origin,
		Passkeys: filepath.Join(set.StateDir, webinbox.PasskeyFile)})
	if err != nil {
		return cli.Usage("inbox --web: %v", err)
	}
	go srv.Broadcast(ctx)
	cli.Warn(s.ErrOut, fmt.Sprintf("inbox: serving %s on %s; log in at %s/login. To pair a browser (register its passkey), open this one-time link in it, or scan the code below: %s",
		origin, ln.Addr(), origin, pair))
	qrterminal.GenerateHalfBlock(pair, qrterminal.L, s.ErrOut)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	context.AfterFunc(ctx, func() { _ = hs.Close() })
	if tls {
		err = hs.ServeTLS(ln, o.tlsCert, o.tlsKey)
	} else {
		err = hs.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("inbox --web: %w", err)}
	}
	return nil
}

package teamcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/webinbox"
)

// defaultWebAddr is where askperm inbox --web listens unless told.
const defaultWebAddr = "127.0.0.1:8765"

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
	set, err := inboxSettings(s, o)
	if err != nil {
		return err
	}
	ctx, stop := cli.OnSignals(context.Background())
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	a, err := connectLasting(ctx, cancel, set, stderrWarnings(s))
	if err != nil {
		return err
	}
	srv, pair := webinbox.New(a.team, a.key, set.Prompt.Arming(), tls)
	go srv.Broadcast(ctx)
	ln, err := net.Listen("tcp", o.web)
	if err != nil {
		return cli.Usage("inbox --web: %v", err)
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	cli.Warn(s.ErrOut, fmt.Sprintf("inbox: serving on %s://%s/ ; open this one-time pairing link in your browser (it pairs one browser): %s://%s%s",
		scheme, ln.Addr(), scheme, ln.Addr(), pair))
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

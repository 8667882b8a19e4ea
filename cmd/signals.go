package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// endingSignals end a helper: the requests it is deciding are denied as
// cancelled.
var endingSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// onSignals returns ctx, cancelled by the first of endingSignals. Their
// handlers are installed before it returns, before the request is read: a
// signal at any moment of a request ends it with a deny (a caller such as
// Claude Code runs the call when its hook dies without an answer), and
// nothing changes a terminal or starts a dialog unhandled.
func onSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, endingSignals...)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, cancel
}

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

// onSignals returns ctx, cancelled by the first of endingSignals, and
// armed, which returns once their handlers are installed. Installing them
// starts a thread (about 0.2 ms of a 2 ms decision), so it runs beside the
// reading and deciding of the request, and only asking a person waits for
// it (the pipeline's BeforeAsking): nothing changes a terminal or starts
// a dialog before a signal is handled. A signal before then ends the
// process without a decision, as one during start-up always has, and every
// caller reads that as a denial.
func onSignals(parent context.Context) (ctx context.Context, stop func(), armed func()) {
	ctx, cancel := context.WithCancel(parent)
	ready := make(chan struct{})
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, endingSignals...)
		close(ready)
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, cancel, func() { <-ready }
}

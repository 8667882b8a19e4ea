package cmd

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errCallerGone ends a request whose caller closed its end of our stdout:
// nobody can read the decision any more, so nobody should be asked.
var errCallerGone = errors.New("the caller closed its end of stdout")

// watchCaller cancels ctx when out (a pipe or socket to the caller) reports
// a hang-up or error. Polling with no events requested consumes nothing.
// A terminal or file as stdout never reports either, so the watch idles
// until cancel.
func watchCaller(ctx context.Context, out *os.File) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		fds := []unix.PollFd{{Fd: int32(out.Fd())}}
		for ctx.Err() == nil {
			if _, err := unix.Poll(fds, 1000); err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
				cancel(errCallerGone)
				return
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

package cmd

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// errCallerGone ends a request whose caller closed its end of our stdout:
// nobody can read the decision any more, so nobody should be asked.
var errCallerGone = errors.New("the caller closed its end of stdout")

// callerWatchDelay is how long a request runs before its caller is
// watched; a person takes longer than that to answer.
const callerWatchDelay = 20 * time.Millisecond

// watchCaller cancels ctx when out (a pipe or socket to the caller) reports
// a hang-up or error. Polling with no events requested consumes nothing.
// A terminal or file as stdout never reports either, so the watch idles
// until cancel. The watch starts after callerWatchDelay: most requests are
// decided sooner, without a human, and need no thread blocked in poll.
func watchCaller(ctx context.Context, out *os.File) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	watch := time.AfterFunc(callerWatchDelay, func() {
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
	})
	return ctx, func() {
		watch.Stop()
		cancel(context.Canceled)
	}
}

package wire

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attempts bound each JetStream API call: a call sent while a cluster
// elects a leader gets no reply, and is better sent again than waited
// on for the caller's whole deadline.
const (
	AttemptTimeout = 2 * time.Second
	firstBackoff   = 100 * time.Millisecond
	maxBackoff     = time.Second
	// retryWait bounds the attempts of a caller whose context has no
	// deadline (an answer from a lasting inbox): an election takes a few
	// seconds, and a server silent for longer is an error, not a hang.
	retryWait = 10 * time.Second
)

// retryPolicy is how Retry paces its attempts.
type retryPolicy struct{ attempt, first, max, wait time.Duration }

var jsRetry = retryPolicy{AttemptTimeout, firstBackoff, maxBackoff, retryWait}

// Retry calls call with a context that ends within AttemptTimeout, again
// after a growing pause while the call fails for want of a reply (see
// Transient), until it succeeds, fails otherwise, or ctx ends (or, when
// ctx has no deadline, 10 s pass); it then returns the last attempt's
// result.
func Retry[T any](ctx context.Context, call func(ctx context.Context) (T, error)) (T, error) {
	return retry(ctx, jsRetry, call)
}

func retry[T any](ctx context.Context, p retryPolicy, call func(ctx context.Context) (T, error)) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.wait)
		defer cancel()
	}
	wait := p.first
	for {
		actx, cancel := context.WithTimeout(ctx, p.attempt)
		v, err := call(actx)
		cancel()
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return v, err
		}
		pause := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			pause.Stop()
			return v, err
		case <-pause.C:
		}
		wait = min(2*wait, p.max)
	}
}

// Transient is an error of a call that got no answer or a "not now" one
// (no reply in time, no responders, a cluster without a leader): sent
// again, the call may succeed.
func Transient(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.As(err, &api) && api.Code == http.StatusServiceUnavailable
}

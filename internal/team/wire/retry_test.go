package wire

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// hurried paces attempts without waiting: the tests count calls, not time.
var hurried = retryPolicy{attempt: time.Hour, first: time.Microsecond, max: time.Microsecond, wait: time.Hour}

var transients = []error{
	context.DeadlineExceeded,
	fmt.Errorf("KV_ASKPERM_DONE: %w", context.DeadlineExceeded),
	nats.ErrTimeout,
	nats.ErrNoResponders,
	jetstream.ErrNoStreamResponse,
	&jetstream.APIError{Code: http.StatusServiceUnavailable, ErrorCode: jetstream.JSErrCodeJetStreamNotEnabled},
}

var finals = []error{
	jetstream.ErrKeyExists,
	jetstream.ErrStreamNotFound,
	jetstream.ErrBucketNotFound,
	ErrBadStream,
	context.Canceled,
	&jetstream.APIError{Code: http.StatusNotFound, ErrorCode: jetstream.JSErrCodeStreamNotFound},
}

func TestTransient(t *testing.T) {
	for _, err := range transients {
		if !Transient(err) {
			t.Errorf("%v: not transient", err)
		}
	}
	for _, err := range finals {
		if Transient(err) {
			t.Errorf("%v: transient", err)
		}
	}
}

// TestRetryProperty: a call failing n times for want of a reply and
// then ending (with a value or a final error) is called n+1 times, and
// its last result is returned; each attempt's context ends within the
// policy's attempt bound.
func TestRetryProperty(t *testing.T) {
	p := retryPolicy{attempt: time.Minute, first: time.Microsecond, max: time.Microsecond, wait: time.Hour}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 2))
		n := rng.IntN(8)
		var last error
		if rng.IntN(2) == 0 {
			last = finals[rng.IntN(len(finals))]
		}
		calls := 0
		v, err := retry(context.Background(), p, func(ctx context.Context) (int, error) {
			if d, ok := ctx.Deadline(); !ok || time.Until(d) > p.attempt {
				t.Fatalf("seed %d: attempt's deadline %v, %v", seed, d, ok)
			}
			calls++
			if calls <= n {
				return 0, transients[rng.IntN(len(transients))]
			}
			return calls, last
		})
		if calls != n+1 || v != n+1 || !errors.Is(err, last) || (last == nil) != (err == nil) {
			t.Fatalf("seed %d: %d transient failures then %v: %d calls, got %d, %v", seed, n, last, calls, v, err)
		}
	}
}

// TestRetryEndsWithItsContext: attempts failing for want of a reply stop
// when the caller's context ends, with the last attempt's error.
func TestRetryEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, err := retry(ctx, hurried, func(context.Context) (struct{}, error) {
		if calls++; calls == 5 {
			cancel()
		}
		return struct{}{}, fmt.Errorf("KV_ASKPERM_DONE: %w", nats.ErrNoResponders)
	})
	if calls != 5 || !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("%d calls, %v", calls, err)
	}
}

// TestRetryBoundsEachAttempt: a call that never replies is given up
// after the attempt's bound and sent again, not waited on until the
// caller's deadline.
func TestRetryBoundsEachAttempt(t *testing.T) {
	p := retryPolicy{attempt: time.Millisecond, first: time.Microsecond, max: time.Microsecond, wait: time.Hour}
	calls := 0
	v, err := retry(context.Background(), p, func(ctx context.Context) (string, error) {
		if calls++; calls < 3 {
			<-ctx.Done() // no reply, as during a leader election
			return "", ctx.Err()
		}
		return "bound", nil
	})
	if calls != 3 || v != "bound" || err != nil {
		t.Fatalf("%d calls, %q, %v", calls, v, err)
	}
}

// TestRetryEndsWithoutADeadline: a caller without a deadline is not
// kept waiting on a server that never replies: the attempts stop within
// the policy's wait, with the last attempt's error.
func TestRetryEndsWithoutADeadline(t *testing.T) {
	p := retryPolicy{attempt: time.Hour, first: time.Microsecond, max: time.Microsecond, wait: 50 * time.Millisecond}
	_, err := retry(context.Background(), p, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

// lostReplyKV stores a Create but, the first time, loses its reply (a
// failover): the caller sees a timeout for a write that landed.
type lostReplyKV struct {
	jetstream.KeyValue
	stored  map[string][]byte
	creates int
}

func (kv *lostReplyKV) Create(_ context.Context, key string, value []byte, _ ...jetstream.KVCreateOpt) (uint64, error) {
	kv.creates++
	if _, ok := kv.stored[key]; ok {
		return 0, jetstream.ErrKeyExists
	}
	kv.stored[key] = value
	if kv.creates == 1 {
		return 0, nats.ErrTimeout
	}
	return 1, nil
}

func (kv *lostReplyKV) Get(_ context.Context, key string) (jetstream.KeyValueEntry, error) {
	v, ok := kv.stored[key]
	if !ok {
		return nil, jetstream.ErrKeyNotFound
	}
	return storedEntry{value: v}, nil
}

type storedEntry struct {
	jetstream.KeyValueEntry
	value []byte
}

func (e storedEntry) Value() []byte    { return e.value }
func (e storedEntry) Revision() uint64 { return 1 }

// TestWriteAnswerLostReply: an answer whose write landed but whose reply
// was lost is written, not "answered before"; an earlier, other answer
// of the same approver still is.
func TestWriteAnswerLostReply(t *testing.T) {
	answer := []byte(`{"decision":{},"approver":"AAPPROVER","sig":"x"}`)
	kv := &lostReplyKV{stored: map[string][]byte{}}
	if err := WriteAnswer(context.Background(), kv, "hosta", "ask1", answer); err != nil || kv.creates != 2 {
		t.Fatalf("after a lost reply: %v, %d creates", err, kv.creates)
	}
	kv = &lostReplyKV{stored: map[string][]byte{}}
	other := []byte(`{"decision":{},"approver":"AAPPROVER","sig":"y"}`)
	kv.creates = 1 // the reply of this write is not lost
	if err := WriteAnswer(context.Background(), kv, "hosta", "ask1", other); err != nil {
		t.Fatal(err)
	}
	if err := WriteAnswer(context.Background(), kv, "hosta", "ask1", answer); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Fatalf("a second answer: %v", err)
	}
}

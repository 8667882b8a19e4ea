package inbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// Team is an approver's view of a team's server: the list of pending
// requests, kept current, and the buckets answers go to.
type Team struct {
	List    *List
	Config  team.Config
	Answers jetstream.KeyValue
	// Rules is the team rules bucket, where an always-answer's rule goes.
	Rules jetstream.KeyValue
	// Warn is told of every request read that is not a valid request
	// (ignored), of a request not listed, and of a watch that stopped.
	Warn func(error)

	now  func() time.Time
	last atomic.Pointer[string] // the last warning
}

func (t *Team) warn(err error) {
	msg := err.Error()
	t.last.Store(&msg)
	t.Warn(err)
}

// LastWarning is the last warning given, "" when none was.
func (t *Team) LastWarning() string {
	if p := t.last.Load(); p != nil {
		return *p
	}
	return ""
}

// Watch fills t.List from the requests stream (everything it keeps) and
// the done bucket, and keeps it current until ctx ends: a request leaves
// when its done key appears or its deadline passes. It returns once both
// have been read up to where they stood when it started, so that the list
// is then complete; ctx's end stops the watch.
func Watch(ctx context.Context, js jetstream.JetStream, c team.Config, warn func(error)) (*Team, error) {
	n := c.Names()
	t := &Team{List: NewList(), Config: c, Warn: warn, now: time.Now}
	var err error
	if t.Answers, err = wire.BindKV(ctx, js, c, n.AnswersBucket()); err != nil {
		return nil, err
	}
	if t.Rules, err = wire.BindKV(ctx, js, c, n.RulesBucket()); err != nil {
		return nil, err
	}
	done, err := wire.BindKV(ctx, js, c, n.DoneBucket())
	if err != nil {
		return nil, err
	}
	// The done marks are read first: a request read after them is never
	// listed when it ended. Each watch is started again while it stalls
	// (a cluster electing a leader), as wire.Retry paces it.
	w, err := wire.Retry(ctx, func(actx context.Context) (jetstream.KeyWatcher, error) {
		return t.readDone(ctx, actx, done)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.DoneBucket(), err)
	}
	go t.watchDone(ctx, w)
	if _, err := wire.Retry(ctx, func(actx context.Context) (struct{}, error) {
		return struct{}{}, t.readRequests(ctx, actx, js, c)
	}); err != nil {
		return nil, err
	}
	go t.expire(ctx)
	return t, nil
}

// errStalled is a watch that has been silent for wire.AttemptTimeout
// before reaching where its stream stood when it began: a transient
// error (wire.Transient), so the watch is begun again.
var errStalled = fmt.Errorf("no messages for %s: %w", wire.AttemptTimeout, context.DeadlineExceeded)

// readDone watches the done bucket, begun within actx, takes the keys
// present at the start into the list, and returns the watch, which
// lasts until ctx ends; a watch silent for wire.AttemptTimeout before
// that is stopped with errStalled.
func (t *Team) readDone(ctx, actx context.Context, done jetstream.KeyValue) (jetstream.KeyWatcher, error) {
	// A watch lasts as long as the context it is begun with: begun with
	// ctx, it is waited on only until actx ends, and stopped if it
	// comes later.
	type begun struct {
		w   jetstream.KeyWatcher
		err error
	}
	bc := make(chan begun, 1)
	go func() {
		w, err := done.WatchAll(ctx, jetstream.IgnoreDeletes(), jetstream.MetaOnly())
		bc <- begun{w, err}
	}()
	var w jetstream.KeyWatcher
	select {
	case b := <-bc:
		if b.err != nil {
			return nil, b.err
		}
		w = b.w
	case <-actx.Done():
		go func() {
			if b := <-bc; b.w != nil {
				b.w.Stop()
			}
		}()
		return nil, context.Cause(actx)
	}
	idle := time.NewTimer(wire.AttemptTimeout)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			w.Stop()
			return nil, context.Cause(ctx)
		case <-idle.C:
			w.Stop()
			return nil, errStalled
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("the watch of the done bucket stopped")
			}
			if e == nil { // the keys present at the start are all read
				return w, nil
			}
			t.takeDone(e)
			idle.Reset(wire.AttemptTimeout)
		}
	}
}

// watchDone takes every later done key from w into the list until ctx
// ends.
func (t *Team) watchDone(ctx context.Context, w jetstream.KeyWatcher) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				t.warn(errors.New("the watch of the done bucket stopped"))
				return
			}
			if e != nil {
				t.takeDone(e)
			}
		}
	}
}

func (t *Team) takeDone(e jetstream.KeyValueEntry) {
	h, a, err := team.ParseAskID(e.Key())
	if err != nil {
		return // not a done key of this format
	}
	t.List.Done(h, a, t.now())
}

// readRequests consumes the requests stream, bound within actx, from its
// start into the list until ctx ends, and returns once the messages it
// held when the watch began are read; a consumer silent for
// wire.AttemptTimeout before that is stopped with errStalled.
func (t *Team) readRequests(ctx, actx context.Context, js jetstream.JetStream, c team.Config) error {
	progress := make(chan struct{}, 1)
	read, stop, err := t.watchRequests(actx, js, c, progress)
	if err != nil {
		return err
	}
	idle := time.NewTimer(wire.AttemptTimeout)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			return context.Cause(ctx)
		case <-idle.C:
			stop()
			return fmt.Errorf("%s: %w", c.Names().RequestStream(), errStalled)
		case <-progress:
			idle.Reset(wire.AttemptTimeout)
		case <-read:
			context.AfterFunc(ctx, stop)
			return nil
		}
	}
}

// watchRequests binds the requests stream and makes its consumer within
// ctx, and consumes the stream from its start into the list until stop
// is called. Each message is told on progress (when it has room); read
// is closed once the messages the stream held at the start are read.
func (t *Team) watchRequests(ctx context.Context, js jetstream.JetStream, c team.Config, progress chan<- struct{}) (read <-chan struct{}, stop func(), err error) {
	n := c.Names()
	s, err := wire.BindStream(ctx, js, c, n.RequestStream())
	if err != nil {
		return nil, nil, err
	}
	last := s.CachedInfo().State.LastSeq
	readc := make(chan struct{})
	once := sync.OnceFunc(func() { close(readc) })
	if s.CachedInfo().State.Msgs == 0 {
		once()
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", n.RequestStream(), err)
	}
	full := map[string]bool{} // hosts said to be past their share; only the consumer's goroutine uses it
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case progress <- struct{}{}:
		default:
		}
		meta, err := m.Metadata()
		if err != nil {
			t.warn(fmt.Errorf("%s: %w", n.RequestStream(), err))
			return
		}
		p, err := wire.ParsePending(n, m.Subject(), m.Headers(), m.Data())
		if err != nil {
			t.warn(fmt.Errorf("ignored: %w", err))
		} else if _, err := t.List.Add(p, meta.Timestamp, t.now()); err != nil && !full[p.Host] {
			// Said once per host: a flooding host must not flood the
			// approver's terminal too.
			full[p.Host] = errors.Is(err, ErrFull)
			t.warn(err)
		}
		if meta.Sequence.Stream >= last || meta.NumPending == 0 {
			once()
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", n.RequestStream(), err)
	}
	return readc, cc.Stop, nil
}

// expire removes each request as its deadline passes, until ctx ends.
func (t *Team) expire(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		next := t.List.Expire(t.now())
		wait := time.Hour // nothing pending: wait for a change
		if !next.IsZero() {
			wait = time.Until(next)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-t.List.added:
		}
	}
}

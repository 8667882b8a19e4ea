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
	// listed when it ended.
	w, err := done.WatchAll(ctx, jetstream.IgnoreDeletes(), jetstream.MetaOnly())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.DoneBucket(), err)
	}
	doneRead := make(chan struct{})
	go t.watchDone(ctx, w, doneRead)
	select {
	case <-doneRead:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	reqRead, err := t.watchRequests(ctx, js, c)
	if err != nil {
		return nil, err
	}
	select {
	case <-reqRead:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	go t.expire(ctx)
	return t, nil
}

// watchDone takes every done key from w into the list, and closes read
// when the keys present at the start have all been taken.
func (t *Team) watchDone(ctx context.Context, w jetstream.KeyWatcher, read chan struct{}) {
	defer w.Stop()
	once := sync.OnceFunc(func() { close(read) })
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				t.warn(errors.New("the watch of the done bucket stopped"))
				return
			}
			if e == nil { // the keys present at the start are all read
				once()
				continue
			}
			h, a, err := team.ParseAskID(e.Key())
			if err != nil {
				continue // not a done key of this format
			}
			t.List.Done(h, a, t.now())
		}
	}
}

// watchRequests consumes the requests stream from its start into the
// list, and returns a channel closed once the messages it held when the
// watch began are read.
func (t *Team) watchRequests(ctx context.Context, js jetstream.JetStream, c team.Config) (<-chan struct{}, error) {
	n := c.Names()
	s, err := wire.BindStream(ctx, js, c, n.RequestStream())
	if err != nil {
		return nil, err
	}
	last := s.CachedInfo().State.LastSeq
	read := make(chan struct{})
	once := sync.OnceFunc(func() { close(read) })
	if s.CachedInfo().State.Msgs == 0 {
		once()
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.RequestStream(), err)
	}
	full := map[string]bool{} // hosts said to be past their share; only the consumer's goroutine uses it
	cc, err := cons.Consume(func(m jetstream.Msg) {
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
		return nil, fmt.Errorf("%s: %w", n.RequestStream(), err)
	}
	context.AfterFunc(ctx, cc.Stop)
	return read, nil
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

package wire

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

// doneBound bounds recording a request's end: askperm kills the bridge
// soon after telling it.
const doneBound = 250 * time.Millisecond

// rewatchWait is the pause before watching the answers again after the
// watch could not be made or ended.
const rewatchWait = 250 * time.Millisecond

// lastWords is how long past the request's deadline the bridge lives if
// askperm neither tells it the end nor closes its stdin.
const lastWords = 2 * time.Second

// Bridge is askperm-team's bridge (team.BridgeStart): it reads the
// request from in, publishes it, writes on out each answer it sees
// until in says how the request ended, and records that end. An error
// is a bridge that could not even start; a request that cannot be
// published is an Unavailable event and no error.
func Bridge(ctx context.Context, in io.Reader, out io.Writer) error {
	rd := bufio.NewReader(in)
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("bridge: the request: %w", err)
	}
	var start team.BridgeStart
	if err := json.Unmarshal(line, &start); err != nil {
		return fmt.Errorf("bridge: the request: %w", err)
	}
	req, err := decision.Parse(start.Request)
	if err != nil {
		return fmt.Errorf("bridge: the request: %w", err)
	}
	if req.SHA256 != start.Digest {
		return fmt.Errorf("bridge: the request's digest is %s, not %s", req.SHA256, start.Digest)
	}
	if err := team.CheckAsk(start.Ask); err != nil {
		return fmt.Errorf("bridge: the request: %w", err)
	}
	deadline := time.UnixMilli(start.Deadline)
	ctx, cancel := context.WithDeadline(ctx, deadline.Add(lastWords))
	defer cancel()
	// ended is closed when in says how the request ended (end) or ends.
	ended, end := make(chan struct{}), new(team.Done)
	go func() {
		defer close(ended)
		line, err := rd.ReadBytes('\n')
		if err != nil || json.Unmarshal(line, end) != nil {
			end = nil
		}
	}()
	b := &bridge{c: start.Config, n: start.Config.Names(), req: req, ask: start.Ask, raw: start.Request, deadline: deadline,
		out: out, reconnected: make(chan struct{}, 1), seen: map[string]uint64{}}
	if err := b.start(ctx, ended, &end); err != nil {
		return b.emit(team.BridgeEvent{Unavailable: err.Error()})
	}
	defer b.nc.Close()
	if err := b.emit(team.BridgeEvent{Published: true}); err != nil {
		return err
	}
	err = b.relay(ctx, ended)
	<-ended
	if end != nil {
		b.done(ctx, *end)
	}
	return err
}

// bridge is one request carried to the team.
type bridge struct {
	c        team.Config
	n        team.Names
	req      *decision.Request
	ask      string
	raw      []byte
	deadline time.Time
	out      io.Writer
	mu       sync.Mutex // out

	nc      *nats.Conn
	buckets Buckets
	// reconnected is signalled after each reconnection: the watch is made
	// again, in case the server lost its consumer.
	reconnected chan struct{}
	// seen is the revision of each answer key passed on.
	seen map[string]uint64
}

// emit writes ev, one line.
func (b *bridge) emit(ev team.BridgeEvent) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err = b.out.Write(append(line, '\n'))
	return err
}

// start connects, binds the team's streams and publishes the request, within team.ReachTimeout or until
// the request ends. A publish that failed may have stored the request
// all the same: its end is recorded, as askperm told or unavailable.
func (b *bridge) start(parent context.Context, ended <-chan struct{}, end **team.Done) error {
	ctx, cancel := context.WithTimeout(parent, team.ReachTimeout)
	defer cancel()
	go func() {
		select {
		case <-ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	nc, err := Connect(ctx, b.c, team.HostInbox(b.c.Host), nats.ReconnectHandler(func(*nats.Conn) {
		select {
		case b.reconnected <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err == nil {
		b.buckets, err = Bind(ctx, js, b.c)
	}
	if err == nil {
		err = Publish(ctx, js, b.n, b.c.Host, b.ask, b.raw, b.deadline)
		if err != nil {
			d := team.Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseUnavailable}
			select {
			case <-ended:
				if *end != nil {
					d = **end
				}
			default:
			}
			b.done(parent, d)
		}
	}
	if err != nil {
		nc.Close()
		return err
	}
	b.nc = nc
	return nil
}

// relay passes on every answer put under the request's keys until the
// request ends, watching the answer keys again whenever the watch ends
// or the connection comes back.
func (b *bridge) relay(ctx context.Context, ended <-chan struct{}) error {
	var w *watch
	defer func() { w.stop() }()
	retry := time.After(0)
	for {
		var updates <-chan jetstream.KeyValueEntry
		if w != nil {
			updates = w.Updates()
		}
		select {
		case <-retry:
			retry = nil
			if w == nil {
				var err error
				if w, err = b.watch(ctx); err != nil {
					retry = time.After(rewatchWait)
				}
			}
		case <-b.reconnected:
			w.stop()
			w, retry = nil, time.After(0)
		case e, ok := <-updates:
			switch {
			case !ok:
				w.stop()
				w, retry = nil, time.After(rewatchWait)
			case e == nil || e.Operation() != jetstream.KeyValuePut || b.seen[e.Key()] == e.Revision():
			default:
				b.seen[e.Key()] = e.Revision()
				if err := b.emit(team.BridgeEvent{Key: e.Key(), Value: e.Value()}); err != nil {
					return err
				}
			}
		case <-ended:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// watch is a watch of the answer keys, with what stops it.
type watch struct {
	jetstream.KeyWatcher
	cancel context.CancelFunc
}

// stop stops w, if any.
func (w *watch) stop() {
	if w != nil {
		w.Stop()
		w.cancel()
	}
}

// watch watches the request's answer keys until ctx ends or the watch is
// stopped. Making it is bounded by team.ReachTimeout: made while the
// connection is down, it would wait for the connection to come back, and
// the relay must keep noticing reconnections.
func (b *bridge) watch(ctx context.Context) (*watch, error) {
	// The watch lives as long as the context it is made with: a timeout
	// for its making alone is a timer cancelling it.
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(team.ReachTimeout, cancel)
	w, err := b.buckets.Answers.Watch(ctx, team.AnswerWatch(b.c.Host, b.ask))
	if !timer.Stop() || err != nil {
		cancel()
		return nil, cmp.Or(err, context.DeadlineExceeded)
	}
	return &watch{w, cancel}, nil
}

// done records how the request ended in the done bucket, best effort
// within doneBound, also after ctx ended.
func (b *bridge) done(ctx context.Context, d team.Done) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), doneBound)
	defer cancel()
	_ = WriteDone(ctx, b.buckets.Done, b.c.Host, b.ask, d) // the inboxes drop the request at its deadline anyway
}

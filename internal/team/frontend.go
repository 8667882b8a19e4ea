package team

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// doneBound bounds writing a request's end to the done bucket: best
// effort, it must not hold the decision back.
const doneBound = 250 * time.Millisecond

// rewatchWait is the pause before watching the answers again after the
// watch could not be made or ended.
const rewatchWait = 250 * time.Millisecond

// Frontend is the `team` frontend: it publishes the request as sent to
// the team's request stream and waits, until its context ends, for an
// approver's answer that passes Verify. Answers that do not are ignored,
// said on warn, and listed in the answer's Ignored for the audit log: a
// rogue answer neither decides nor stops the wait.
type Frontend struct {
	c    *Config
	warn func(string)
}

// New returns the team frontend of c (nil: team mode not configured, the
// frontend is unavailable). warn says each ignored answer, one line.
func New(c *Config, warn func(string)) *Frontend {
	if warn == nil {
		warn = func(string) {}
	}
	return &Frontend{c: c, warn: warn}
}

// Name is "team".
func (*Frontend) Name() decision.Frontend { return decision.FrontendTeam }

// Ask asks the team about f's request. It is unavailable when team mode
// is not configured or trusts no approver, when the form has no request
// as sent, when the server cannot be reached within ReachTimeout, when
// the team's streams are missing, or when the same request (its digest)
// ended before. Once the request is published it waits until ctx ends,
// through lost connections, and a verified answer is the only way it
// returns an answer. Whenever the request ends, the done bucket says so.
func (fe *Frontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	c := fe.c
	switch {
	case c == nil:
		return form.Answer{}, fmt.Errorf("no [team] in config.toml: %w", prompt.ErrUnavailable)
	case len(c.Approvers) == 0:
		return form.Answer{}, fmt.Errorf("%w: %w", ErrNoApprovers, prompt.ErrUnavailable)
	case f.Sent() == nil:
		return form.Answer{}, fmt.Errorf("the request as sent is unknown: %w", prompt.ErrUnavailable)
	}
	// The approvers see, and sign for, the digest of the bytes sent: they
	// must be those of the request asked about.
	if d, err := decision.RequestSHA256(f.Sent()); err != nil || d != f.Req.SHA256 {
		return form.Answer{}, fmt.Errorf("the request as sent is not the request asked about: %w", prompt.ErrUnavailable)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		var cancel context.CancelFunc
		ctx, cancel = prompt.Bounded(ctx)
		defer cancel()
		deadline, _ = ctx.Deadline()
	}
	r := &request{c: c, n: c.Names(), req: f.Req, raw: f.Sent(), deadline: deadline, reconnected: make(chan struct{}, 1), seen: map[string]uint64{}}
	if err := r.start(ctx); err != nil {
		return form.Answer{}, fmt.Errorf("%w: %w", err, prompt.ErrUnavailable)
	}
	defer r.nc.Close()
	return r.wait(ctx, fe.warn)
}

// request is one request asked of the team.
type request struct {
	c        *Config
	n        Names
	req      *decision.Request
	raw      []byte
	deadline time.Time

	nc      *nats.Conn
	buckets Buckets
	// reconnected is signalled after each reconnection: the watch is made
	// again, in case the server lost its consumer.
	reconnected chan struct{}
	// seen is the revision of each answer key looked at.
	seen map[string]uint64
	// ignored says why each answer was ignored, the first maxIgnored;
	// more counts the others.
	ignored []string
	more    int
}

// maxIgnored bounds the ignored answers said and audited one by one: a
// flood of rogue answers must not flood the terminal or the audit log.
const maxIgnored = 16

// ignore notes that an answer was ignored, and why.
func (r *request) ignore(err error, warn func(string)) {
	if len(r.ignored) == maxIgnored {
		if r.more == 0 {
			warn("team: more answers ignored; the audit log counts them")
		}
		r.more++
		return
	}
	why := form.Line(err.Error())
	r.ignored = append(r.ignored, why)
	warn("team: ignored " + why)
}

// ignoredAll are the ignored answers as the audit log keeps them.
func (r *request) ignoredAll() []string {
	if r.more == 0 {
		return r.ignored
	}
	return append(r.ignored, fmt.Sprintf("and %d more", r.more))
}

// start connects, binds the team's streams, checks that the request did
// not end before, and publishes it, within ReachTimeout.
func (r *request) start(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, ReachTimeout)
	defer cancel()
	nc, err := Connect(ctx, *r.c, HostInbox(r.c.Host), nats.ReconnectHandler(func(*nats.Conn) {
		select {
		case r.reconnected <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err == nil {
		r.buckets, err = Bind(ctx, js, *r.c)
	}
	if err == nil {
		err = r.notEndedBefore(ctx)
	}
	if err == nil {
		err = Publish(ctx, js, r.n, r.c.Host, r.req.SHA256, r.raw, r.deadline)
		if err != nil { // it may have been stored all the same
			cause := decision.CauseUnavailable
			if parent.Err() != nil {
				cause = endCause(parent)
			}
			r.done(ctx, Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: cause})
		}
	}
	if err != nil {
		nc.Close()
		return err
	}
	r.nc = nc
	return nil
}

// notEndedBefore fails when the done bucket has the request: the same
// bytes were asked and decided before, and answers to them, already
// taken, must not decide again.
func (r *request) notEndedBefore(ctx context.Context) error {
	_, err := r.buckets.Done.Get(ctx, DoneKey(r.c.Host, r.req.SHA256))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", r.n.DoneBucket(), err)
	}
	return fmt.Errorf("the same request (digest %s) was decided by the team before; a request asked again needs its own id", r.req.SHA256)
}

// wait waits for the first verified answer until ctx ends, watching the
// answer keys again whenever the watch ends or the connection comes
// back, and records the request's end.
func (r *request) wait(ctx context.Context, warn func(string)) (form.Answer, error) {
	// The done bucket is written within the request's time: the wait
	// ends that much earlier.
	margin := min(doneBound, time.Until(r.deadline)/20)
	waitCtx, cancel := context.WithDeadline(ctx, r.deadline.Add(-margin))
	defer cancel()
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
				if w, err = r.watch(waitCtx); err != nil {
					retry = time.After(rewatchWait)
				}
			}
		case <-r.reconnected:
			w.stop()
			w, retry = nil, time.After(0)
		case e, ok := <-updates:
			switch {
			case !ok:
				w.stop()
				w, retry = nil, time.After(rewatchWait)
			case e == nil || e.Operation() != jetstream.KeyValuePut || r.seen[e.Key()] == e.Revision():
			default:
				r.seen[e.Key()] = e.Revision()
				v, err := Verify(*r.c, e.Key(), e.Value(), r.req)
				if err != nil {
					r.ignore(err, warn)
					continue
				}
				r.done(ctx, Done{Outcome: v.Decision.Decision, Frontend: decision.FrontendTeam, Approver: v.Approver, Cause: v.Decision.Cause})
				a := answerOf(v)
				a.Ignored = r.ignoredAll()
				return a, nil
			}
		case <-waitCtx.Done():
			r.done(ctx, Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: endCause(ctx)})
			<-ctx.Done()
			return form.Answer{Ignored: r.ignoredAll()}, ctx.Err()
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

// watch watches r's answer keys until ctx ends or the watch is stopped.
// Making it is bounded by ReachTimeout: made while the connection is
// down, it would wait for the connection to come back, and the wait must
// keep noticing reconnections.
func (r *request) watch(ctx context.Context) (*watch, error) {
	// The watch lives as long as the context it is made with: a timeout
	// for its making alone is a timer cancelling it.
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(ReachTimeout, cancel)
	w, err := r.buckets.Answers.Watch(ctx, AnswerWatch(r.c.Host, r.req.SHA256))
	if !timer.Stop() || err != nil {
		cancel()
		return nil, cmp.Or(err, context.DeadlineExceeded)
	}
	return &watch{w, cancel}, nil
}

// endCause is the cause of the deny of a request whose wait ended with
// ctx still running or ended: timeout, unless ctx was cancelled (a
// signal, the caller gone).
func endCause(ctx context.Context) decision.Cause {
	if errors.Is(ctx.Err(), context.Canceled) {
		return decision.CauseCancelled
	}
	return decision.CauseTimeout
}

// done records how the request ended in the done bucket, best effort
// within doneBound, also after ctx ended.
func (r *request) done(ctx context.Context, d Done) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), doneBound)
	defer cancel()
	_ = WriteDone(ctx, r.buckets.Done, r.c.Host, r.req.SHA256, d) // the inboxes drop the request at its deadline anyway
}

// answerOf is the form's answer that gives the verified decision again:
// the host's form checks it once more and builds the final decision.
func answerOf(v Verified) form.Answer {
	d := v.Decision
	a := form.Answer{Message: d.Message, Approver: v.Approver}
	always := d.Persist == decision.PersistAlways
	switch {
	case d.Decision == decision.Allow && always:
		a.Choice = form.AllowAlways
	case d.Decision == decision.Allow:
		a.Choice = form.AllowOnce
	case always:
		a.Choice = form.DenyAlways
	default:
		a.Choice = form.DenyOnce
	}
	if d.Rule != nil {
		a.Grants, a.Scopes, a.WorkdirScope, a.Lifetime = d.Grants, d.Rule.Scopes, d.Rule.WorkdirScope, d.Rule.Lifetime
	}
	return a
}

package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

// Retention and limits of what the team's server keeps.
const (
	// RequestsMaxAge is how long the request stream keeps a request: no
	// request is pending longer.
	RequestsMaxAge = 24 * time.Hour
	// dedupWindow is how long a request published again (the same host
	// and ask id) is not a second request.
	dedupWindow = 10 * time.Minute
	answersTTL  = 24 * time.Hour
	auditMaxAge = 30 * 24 * time.Hour
	// headerRoom is what a message's headers may add to its data.
	headerRoom = 4 << 10
	// requestsPerHost caps the requests the stream keeps per host (one
	// subject each): a flooding host loses its own oldest requests.
	requestsPerHost = 10_000
	// streamBytes caps each stream's and bucket's store.
	streamBytes = 1 << 30
	// maxDone caps a done mark, a short JSON object.
	maxDone = 1 << 10
	// maxAuditLine caps an audit line.
	maxAuditLine = 64 << 10
)

// Streams are the stream configs of the team's streams and of its
// buckets' streams, with replicas: every one refuses deletes and purges
// (so no rollup can wipe a bucket), and keeps its messages within set
// sizes.
func Streams(c team.Config) []jetstream.StreamConfig {
	n := c.Names()
	out := []jetstream.StreamConfig{
		{Name: n.RequestStream(), Subjects: []string{n.RequestSubjects()}, MaxAge: RequestsMaxAge, Duplicates: dedupWindow,
			MaxMsgSize: team.MaxRequest + headerRoom, MaxMsgsPerSubject: requestsPerHost},
		{Name: n.AuditStream(), Subjects: []string{n.AuditSubjects()}, MaxAge: auditMaxAge, MaxMsgSize: maxAuditLine + headerRoom},
	}
	for _, kv := range []struct {
		bucket string
		ttl    time.Duration
		max    int32
	}{
		{n.AnswersBucket(), answersTTL, team.MaxAnswer},
		{n.DoneBucket(), answersTTL, maxDone},
		{n.RulesBucket(), 0, team.MaxAnswer}, // a rule is capped as an answer is
	} {
		// As jetstream.CreateKeyValue would make it, with one value per
		// key, but no rollups: they purge.
		out = append(out, jetstream.StreamConfig{Name: kvStream(kv.bucket), Subjects: []string{kvSubjects(kv.bucket)}, MaxAge: kv.ttl,
			MaxMsgSize: kv.max + headerRoom, MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew, AllowDirect: true,
			Duplicates: 2 * time.Minute})
	}
	for i := range out {
		s := &out[i]
		s.Retention, s.Storage, s.Replicas = jetstream.LimitsPolicy, jetstream.FileStorage, c.Replicas
		s.MaxBytes, s.MaxMsgs, s.MaxConsumers = streamBytes, -1, -1
		s.DenyDelete, s.DenyPurge, s.AllowRollup = true, true, false
	}
	return out
}

func kvStream(bucket string) string   { return "KV_" + bucket }
func kvSubjects(bucket string) string { return "$KV." + bucket + ".>" }

// EnsureStreams creates the team's streams and buckets where missing,
// and updates them to c's settings where present (idempotent). It needs
// the set-up user's credentials (askperm-team setup); a host and an
// approver only bind (Bind).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, c team.Config) error {
	for _, s := range Streams(c) {
		if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
			return fmt.Errorf("stream %s: %w", s.Name, err)
		}
	}
	return nil
}

// SetUp connects to c's server with c.Creds, replying on inbox, and
// makes the streams (EnsureStreams): askperm-team setup, as the team's
// set-up user.
func SetUp(ctx context.Context, c team.Config, inbox string) error {
	return WithJetStream(ctx, c, inbox, func(js jetstream.JetStream) error { return EnsureStreams(ctx, js, c) })
}

// CheckStream checks that got, a stream's config read from the server,
// is what Streams set up for want's name: its subjects, and nothing that
// would copy, move or wipe what it holds (a subject transform, a
// republish, sources, a mirror, deletes, purges or rollups allowed).
// Anyone allowed to update streams could have changed them, and a host
// or an approver must not trust such a stream.
func CheckStream(got jetstream.StreamConfig, want jetstream.StreamConfig) error {
	var why string
	switch {
	case !slices.Equal(got.Subjects, want.Subjects):
		why = fmt.Sprintf("subjects %q, not %q", got.Subjects, want.Subjects)
	case got.SubjectTransform != nil:
		why = "it has a subject transform"
	case got.RePublish != nil:
		why = "it republishes its messages"
	case got.Mirror != nil || len(got.Sources) > 0:
		why = "it mirrors or sources other streams"
	case !got.DenyDelete || !got.DenyPurge || got.AllowRollup:
		why = "it allows deletes, purges or rollups"
	default:
		return nil
	}
	return fmt.Errorf("stream %s is not as askperm-team setup makes it (%s): ask the team's set-up user to run askperm-team setup: %w", got.Name, why, ErrBadStream)
}

// ErrBadStream is a stream or bucket whose config CheckStream refuses.
var ErrBadStream = errors.New("refused")

// bindStream finds the stream named want.Name and checks its config.
func bindStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := Retry(ctx, func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, want.Name) })
	if err != nil {
		return nil, notSetUp(want.Name, err)
	}
	if err := CheckStream(s.CachedInfo().Config, want); err != nil {
		return nil, err
	}
	return s, nil
}

// BindKV finds bucket, one of c's buckets, checking its stream.
func BindKV(ctx context.Context, js jetstream.JetStream, c team.Config, bucket string) (jetstream.KeyValue, error) {
	for _, want := range Streams(c) {
		if want.Name != kvStream(bucket) {
			continue
		}
		if _, err := bindStream(ctx, js, want); err != nil {
			return nil, err
		}
		kv, err := Retry(ctx, func(ctx context.Context) (jetstream.KeyValue, error) { return js.KeyValue(ctx, bucket) })
		if err != nil {
			return nil, notSetUp(bucket, err)
		}
		return kv, nil
	}
	return nil, fmt.Errorf("%s is not a bucket of the team", bucket)
}

// BindStream finds stream, one of c's streams, checking its config.
func BindStream(ctx context.Context, js jetstream.JetStream, c team.Config, stream string) (jetstream.Stream, error) {
	for _, want := range Streams(c) {
		if want.Name == stream {
			return bindStream(ctx, js, want)
		}
	}
	return nil, fmt.Errorf("%s is not a stream of the team", stream)
}

// Buckets are the buckets a host uses for its requests.
type Buckets struct {
	Answers, Done jetstream.KeyValue
}

// Bind finds the request stream and the answers and done buckets, each
// checked (CheckStream); any missing is team.ErrNotSetUp.
func Bind(ctx context.Context, js jetstream.JetStream, c team.Config) (Buckets, error) {
	n := c.Names()
	if _, err := BindStream(ctx, js, c, n.RequestStream()); err != nil {
		return Buckets{}, err
	}
	answers, err := BindKV(ctx, js, c, n.AnswersBucket())
	if err != nil {
		return Buckets{}, err
	}
	done, err := BindKV(ctx, js, c, n.DoneBucket())
	if err != nil {
		return Buckets{}, err
	}
	return Buckets{answers, done}, nil
}

func notSetUp(name string, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) {
		return fmt.Errorf("%s: %w", name, team.ErrNotSetUp)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Publish publishes raw, the request as sent, for ask a of host h,
// which ends at deadline. The message id is team.AskID(h, a): the same
// ask published again is not a second request, but any other ask is,
// even of the same bytes, and a new ask found a duplicate is an error.
func Publish(ctx context.Context, js jetstream.JetStream, n team.Names, h, a string, raw []byte, deadline time.Time) error {
	msg := nats.NewMsg(n.RequestSubject(h))
	msg.Data = raw
	msg.Header.Set(team.HeaderDeadline, strconv.FormatInt(deadline.UnixMilli(), 10))
	msg.Header.Set(team.HeaderHost, h)
	msg.Header.Set(team.HeaderAsk, a)
	ack, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(team.AskID(h, a)), jetstream.WithExpectStream(n.RequestStream()))
	if err == nil && ack.Duplicate {
		err = fmt.Errorf("%s: ask %s was published before", n.RequestStream(), a)
	}
	return err
}

// Pending is a request as an approver receives it.
type Pending struct {
	Host string
	// Ask is the host's ask id: answers are keyed and signed for it.
	Ask    string
	Digest string
	// Raw is the request as sent, whose digest is Digest; Request is it
	// parsed.
	Raw      []byte
	Request  *decision.Request
	Deadline time.Time
}

// ID is p's team.AskID.
func (p Pending) ID() string { return team.AskID(p.Host, p.Ask) }

// ParsePending reads a message of the request stream (subject, header
// and data) and checks it: the subject's host is the header's, the ask
// id is one, the message id is team.AskID of both, and the request is
// valid.
func ParsePending(n team.Names, subject string, header nats.Header, data []byte) (Pending, error) {
	h, ok := n.HostOfSubject(subject)
	if !ok {
		return Pending{}, fmt.Errorf("%q is not a request subject of %s", subject, n.RequestSubjects())
	}
	if hh := header.Get(team.HeaderHost); hh != h {
		return Pending{}, fmt.Errorf("request on %s: %s %q is not the subject's host", subject, team.HeaderHost, hh)
	}
	a := header.Get(team.HeaderAsk)
	if err := team.CheckAsk(a); err != nil {
		return Pending{}, fmt.Errorf("request on %s: %s: %w", subject, team.HeaderAsk, err)
	}
	if id := header.Get(team.HeaderMsgID); id != team.AskID(h, a) {
		return Pending{}, fmt.Errorf("request on %s: message id %q is not %q", subject, id, team.AskID(h, a))
	}
	ms, err := strconv.ParseInt(header.Get(team.HeaderDeadline), 10, 64)
	if err != nil || ms <= 0 {
		return Pending{}, fmt.Errorf("request on %s: %s %q is not a time in Unix milliseconds", subject, team.HeaderDeadline, header.Get(team.HeaderDeadline))
	}
	req, err := decision.Parse(data)
	if err != nil {
		return Pending{}, fmt.Errorf("request on %s: %w", subject, err)
	}
	return Pending{Host: h, Ask: a, Digest: req.SHA256, Raw: data, Request: req, Deadline: time.UnixMilli(ms)}, nil
}

// WriteAnswer writes answer, an encoded Answer (team.Sign for h and a),
// to ask a of host h, under the answer's approver's key, with create:
// one answer per approver and ask (jetstream.ErrKeyExists for a second).
// A write that got no reply is sent again (Retry); found then, the same
// bytes are this answer's first write, which landed.
func WriteAnswer(ctx context.Context, answers jetstream.KeyValue, h, a string, answer []byte) error {
	var v team.Answer
	if err := json.Unmarshal(answer, &v); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	key := team.AnswerKey(h, a, v.Approver)
	tries := 0
	_, err := Retry(ctx, func(ctx context.Context) (uint64, error) {
		tries++
		rev, err := answers.Create(ctx, key, answer)
		if tries > 1 && errors.Is(err, jetstream.ErrKeyExists) {
			if e, gerr := answers.Get(ctx, key); gerr == nil && bytes.Equal(e.Value(), answer) {
				return e.Revision(), nil
			}
		}
		return rev, err
	})
	return err
}

// WriteDone records, with create, that ask a of host h ended as done
// says. An ask ended before keeps its first record:
// jetstream.ErrKeyExists.
func WriteDone(ctx context.Context, kv jetstream.KeyValue, h, a string, done team.Done) error {
	b, err := json.Marshal(done)
	if err != nil {
		return err
	}
	_, err = kv.Create(ctx, team.DoneKey(h, a), b)
	return err
}

package team

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
)

// Retention of what the team's server keeps.
const (
	requestsMaxAge = 24 * time.Hour
	// dedupWindow is how long a request published again (the same
	// digest) is not a second request.
	dedupWindow = 10 * time.Minute
	answersTTL  = 24 * time.Hour
	auditMaxAge = 30 * 24 * time.Hour
)

// EnsureStreams creates the team's streams and buckets where missing,
// and updates them to c's settings where present (idempotent). The
// approver's askperm does it; a host only binds (Bind).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, c Config) error {
	n := c.Names()
	for _, s := range []jetstream.StreamConfig{
		{Name: n.RequestStream(), Subjects: []string{n.RequestSubjects()}, MaxAge: requestsMaxAge, Duplicates: dedupWindow},
		{Name: n.AuditStream(), Subjects: []string{n.AuditSubjects()}, MaxAge: auditMaxAge},
	} {
		s.Retention, s.Storage, s.Replicas = jetstream.LimitsPolicy, jetstream.FileStorage, c.Replicas
		if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
			return fmt.Errorf("stream %s: %w", s.Name, err)
		}
	}
	for _, kv := range []jetstream.KeyValueConfig{
		{Bucket: n.AnswersBucket(), TTL: answersTTL},
		{Bucket: n.DoneBucket(), TTL: answersTTL},
		{Bucket: n.RulesBucket()},
	} {
		kv.History, kv.Storage, kv.Replicas = 1, jetstream.FileStorage, c.Replicas
		if _, err := js.CreateOrUpdateKeyValue(ctx, kv); err != nil {
			return fmt.Errorf("bucket %s: %w", kv.Bucket, err)
		}
	}
	return nil
}

// Buckets are the buckets a host uses for its requests.
type Buckets struct {
	Answers, Done jetstream.KeyValue
}

// ErrNotSetUp is a team whose streams or buckets are missing.
var ErrNotSetUp = errors.New("the team's streams are not set up: run askperm inbox once, as an approver")

// Bind finds the request stream and the answers and done buckets; any
// missing is ErrNotSetUp.
func Bind(ctx context.Context, js jetstream.JetStream, c Config) (Buckets, error) {
	n := c.Names()
	if _, err := js.Stream(ctx, n.RequestStream()); err != nil {
		return Buckets{}, notSetUp(n.RequestStream(), err)
	}
	answers, err := js.KeyValue(ctx, n.AnswersBucket())
	if err != nil {
		return Buckets{}, notSetUp(n.AnswersBucket(), err)
	}
	done, err := js.KeyValue(ctx, n.DoneBucket())
	if err != nil {
		return Buckets{}, notSetUp(n.DoneBucket(), err)
	}
	return Buckets{answers, done}, nil
}

func notSetUp(name string, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) {
		return fmt.Errorf("%s: %w", name, ErrNotSetUp)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Publish publishes raw, the request as sent, whose digest is d, for host
// h's request that ends at deadline. The digest is the message id: a
// request published again is not a second request.
func Publish(ctx context.Context, js jetstream.JetStream, n Names, h, d string, raw []byte, deadline time.Time) error {
	msg := nats.NewMsg(n.RequestSubject(h))
	msg.Data = raw
	msg.Header.Set(HeaderDeadline, strconv.FormatInt(deadline.UnixMilli(), 10))
	msg.Header.Set(HeaderHost, h)
	_, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(d), jetstream.WithExpectStream(n.RequestStream()))
	return err
}

// Pending is a request as an approver receives it.
type Pending struct {
	Host   string
	Digest string
	// Raw is the request as sent, whose digest is Digest; Request is it
	// parsed.
	Raw      []byte
	Request  *decision.Request
	Deadline time.Time
}

// ParsePending reads a message of the request stream (subject, header
// and data) and checks it: the subject's host is the header's, the
// request is valid, and its digest is the message id.
func ParsePending(n Names, subject string, header nats.Header, data []byte) (Pending, error) {
	h, ok := n.HostOfSubject(subject)
	if !ok {
		return Pending{}, fmt.Errorf("%q is not a request subject of %s", subject, n.RequestSubjects())
	}
	if hh := header.Get(HeaderHost); hh != h {
		return Pending{}, fmt.Errorf("request on %s: %s %q is not the subject's host", subject, HeaderHost, hh)
	}
	ms, err := strconv.ParseInt(header.Get(HeaderDeadline), 10, 64)
	if err != nil || ms <= 0 {
		return Pending{}, fmt.Errorf("request on %s: %s %q is not a time in Unix milliseconds", subject, HeaderDeadline, header.Get(HeaderDeadline))
	}
	req, err := decision.Parse(data)
	if err != nil {
		return Pending{}, fmt.Errorf("request on %s: %w", subject, err)
	}
	if id := header.Get(HeaderMsgID); id != req.SHA256 {
		return Pending{}, fmt.Errorf("request on %s: message id %q is not the request's digest %s", subject, id, req.SHA256)
	}
	return Pending{Host: h, Digest: req.SHA256, Raw: data, Request: req, Deadline: time.UnixMilli(ms)}, nil
}

// WriteAnswer writes answer, an encoded Answer (Sign), to request d of
// host h, under the answer's approver's key, with create: one answer
// per approver and request (jetstream.ErrKeyExists for a second).
func WriteAnswer(ctx context.Context, answers jetstream.KeyValue, h, d string, answer []byte) error {
	var a Answer
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	_, err := answers.Create(ctx, AnswerKey(h, d, a.Approver), answer)
	return err
}

// Done is how a request ended, written by its host to the done bucket.
type Done struct {
	Outcome  string            `json:"outcome"` // allow or deny
	Frontend decision.Frontend `json:"frontend"`
	Approver string            `json:"approver"` // the answer's approver; "" when none decided
	Cause    decision.Cause    `json:"cause"`
}

// WriteDone records, with create, that request d of host h ended as
// done says. A request ended before (the same digest) keeps its first
// record: jetstream.ErrKeyExists.
func WriteDone(ctx context.Context, kv jetstream.KeyValue, h, d string, done Done) error {
	b, err := json.Marshal(done)
	if err != nil {
		return err
	}
	_, err = kv.Create(ctx, DoneKey(h, d), b)
	return err
}

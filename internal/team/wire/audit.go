package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/internal/team"
)

// PublishAudit publishes line, the audit log's line of a team decision
// (decided by the team frontend or a team rule) of host c.Host, on the
// team's audit stream (subject p.audit.<host>), within ctx and
// team.AuditBound, and waits for the stream to have it: askperm-team's
// hidden audit-publish.
func PublishAudit(ctx context.Context, c team.Config, line []byte) error {
	ctx, cancel := context.WithTimeout(ctx, team.AuditBound)
	defer cancel()
	return WithJetStream(ctx, c, team.HostInbox(c.Host), func(js jetstream.JetStream) error {
		n := c.Names()
		// A stream that would move or copy the line elsewhere is refused.
		if _, err := BindStream(ctx, js, c, n.AuditStream()); err != nil {
			return err
		}
		if _, err := js.Publish(ctx, n.AuditSubject(c.Host), line, jetstream.WithExpectStream(n.AuditStream())); err != nil {
			if errors.Is(err, jetstream.ErrNoStreamResponse) {
				return fmt.Errorf("%s: %w", n.AuditStream(), team.ErrNotSetUp)
			}
			return fmt.Errorf("%s: %w", n.AuditStream(), err)
		}
		return nil
	})
}

// AuditLine is one line of the audit stream, from the host that
// published it (the subject it could publish on), stored by the stream
// at Stored: the two things about it the host does not choose.
type AuditLine struct {
	Host   string
	Line   []byte
	Stored time.Time
}

// ReadAudit gives each every line of the audit stream of js that the
// credentials may read, oldest first, and returns when none is left (or
// each returned an error).
func ReadAudit(ctx context.Context, js jetstream.JetStream, n team.Names, each func(AuditLine) error) error {
	cons, err := js.OrderedConsumer(ctx, n.AuditStream(), jetstream.OrderedConsumerConfig{FilterSubjects: []string{n.AuditSubjects()}})
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%s: %w", n.AuditStream(), team.ErrNotSetUp)
		}
		return fmt.Errorf("%s: %w", n.AuditStream(), err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", n.AuditStream(), err)
	}
	left := info.NumPending
	for left > 0 {
		batch, err := cons.Fetch(int(min(left, 256)), jetstream.FetchMaxWait(time.Until(deadlineOr(ctx, 5*time.Second))))
		if err != nil {
			return fmt.Errorf("%s: %w", n.AuditStream(), err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			md, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("%s: %w", n.AuditStream(), err)
			}
			host, _ := auditHost(n, msg.Subject())
			if err := each(AuditLine{Host: host, Line: msg.Data(), Stored: md.Timestamp}); err != nil {
				return err
			}
			left = md.NumPending
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("%s: %w", n.AuditStream(), err)
		}
		if got == 0 {
			return fmt.Errorf("%s: no line came within the wait, %d left", n.AuditStream(), left)
		}
	}
	return nil
}

// auditHost is the host of an audit subject.
func auditHost(n team.Names, subject string) (string, bool) {
	h, ok := strings.CutPrefix(subject, n.AuditSubject(""))
	return h, ok && team.CheckHost(h) == nil
}

// deadlineOr is ctx's deadline, or d from now without one.
func deadlineOr(ctx context.Context, d time.Duration) time.Time {
	if t, ok := ctx.Deadline(); ok {
		return t
	}
	return time.Now().Add(d)
}

package team

import (
	"context"
	"time"

	"github.com/go-json-experiment/json"
)

// AuditBound bounds publishing one audit line: it is best effort, and a
// decision is never kept waiting for it past this (nor past its own
// deadline).
const AuditBound = time.Second

// AuditPublish is what askperm gives askperm-team's hidden audit-publish
// on its stdin: the team and the line to publish.
type AuditPublish struct {
	Config Config `json:"config"`
	Line   []byte `json:"line"`
}

// PublishAudit publishes line, the audit log's line of a team decision
// (decided by the team frontend or a team rule) of host c.Host, on the
// team's audit stream (subject p.audit.<host>), within ctx and
// AuditBound, and waits for the stream to have it: askperm-team's hidden
// audit-publish does.
func PublishAudit(ctx context.Context, c Config, line []byte) error {
	ctx, cancel := context.WithTimeout(ctx, AuditBound)
	defer cancel()
	in, err := json.Marshal(AuditPublish{Config: c, Line: line})
	if err != nil {
		return err
	}
	_, err = runTeam(ctx, c, "audit-publish", in, 0)
	return err
}

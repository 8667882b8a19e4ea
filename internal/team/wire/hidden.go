package wire

import (
	"context"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"

	"github.com/askperm/askperm/internal/team"
)

// RulesFetch is askperm-team's hidden rules-fetch: host c's config
// (JSON) on in, the team's rules (FetchRules, []team.RuleEntry as JSON)
// on out. askperm verifies each rule when it uses it.
func RulesFetch(ctx context.Context, in io.Reader, out io.Writer) error {
	var c team.Config
	if err := readJSON(in, &c); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	rules, err := FetchRulesOf(ctx, c)
	if err != nil {
		return err
	}
	return json.MarshalWrite(out, rules)
}

// AuditPublish is askperm-team's hidden audit-publish: a
// team.AuditPublish (JSON) on in, its line published (PublishAudit).
func AuditPublish(ctx context.Context, in io.Reader) error {
	var p team.AuditPublish
	if err := readJSON(in, &p); err != nil {
		return err
	}
	if err := p.Config.Check(); err != nil {
		return err
	}
	return PublishAudit(ctx, p.Config, p.Line)
}

// maxInput bounds what askperm writes on a hidden command's stdin: a
// config and an audit line.
const maxInput = 4 << 20

// readJSON reads v, strictly, from askperm's stdin.
func readJSON(in io.Reader, v any) error {
	b, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return err
	}
	if len(b) > maxInput {
		return fmt.Errorf("stdin: more than %d bytes", maxInput)
	}
	if err := json.Unmarshal(b, v, json.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	return nil
}

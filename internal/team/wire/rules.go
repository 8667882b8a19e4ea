package wire

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

// WriteRule signs (team.SignRule) and writes, with create, the team rule of
// approver kp's always-decision d of raw (the request as its host sent it) to rules, the team's rules
// bucket (Names.RulesBucket), and returns its id. The same rule written
// twice is jetstream.ErrKeyExists.
func WriteRule(ctx context.Context, rules jetstream.KeyValue, kp nkeys.KeyPair, raw []byte, d decision.Decision, now time.Time) (string, error) {
	id, value, err := team.SignRule(kp, raw, d, now)
	if err != nil {
		return "", err
	}
	if _, err := rules.Create(ctx, team.RuleKey(team.PublicKey(kp), id), value); err != nil {
		return "", fmt.Errorf("%s: %w", rules.Bucket(), err)
	}
	return id, nil
}

// FetchRules reads every rule of the rules bucket of js (deleted ones
// left out), in the bucket's order.
func FetchRules(ctx context.Context, js jetstream.JetStream, c team.Config) ([]team.RuleEntry, error) {
	n := c.Names()
	kv, err := BindKV(ctx, js, c, n.RulesBucket())
	if err != nil {
		return nil, err
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.RulesBucket(), err)
	}
	defer w.Stop()
	rules := []team.RuleEntry{}
	for {
		select {
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return nil, fmt.Errorf("%s: the watch ended", n.RulesBucket())
			case e == nil: // every rule present was given
				return rules, nil
			}
			rules = append(rules, team.RuleEntry{Key: e.Key(), Value: e.Value()})
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %w", n.RulesBucket(), context.Cause(ctx))
		}
	}
}

// FetchRulesOf is FetchRules of host c's team, connected as the host:
// askperm-team's hidden rules-fetch.
func FetchRulesOf(ctx context.Context, c team.Config) ([]team.RuleEntry, error) {
	var rules []team.RuleEntry
	err := WithJetStream(ctx, c, team.HostInbox(c.Host), func(js jetstream.JetStream) (err error) {
		rules, err = FetchRules(ctx, js, c)
		return err
	})
	return rules, err
}

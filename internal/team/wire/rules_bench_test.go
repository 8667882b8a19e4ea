package wire

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
)

// benchRules writes n allow-always rules of k, one per path, to the team
// of ts and returns a host trusting k whose cache holds them, fresh.
func benchRules(b *testing.B, n int) (team.Memory, func() time.Time) {
	b.Helper()
	ts := startTeam(b)
	k := userKey(b)
	for i := range n {
		ts.writeRule(b, k, strings.ReplaceAll(testRequest, "/p/a", fmt.Sprintf("/p/%d", i)), form.Answer{Choice: form.AllowAlways, Scopes: map[string]string{"path": fmt.Sprintf("/p/%d", i)}})
	}
	var w said
	m := ts.host(b, "alpha", &w, team.PublicKey(k))
	now := ruleTime.Add(time.Minute) // the rules' created time is ruleTime
	if _, err := team.RefreshRules(context.Background(), m.Config, m.Dir, now); err != nil {
		b.Fatal(err)
	}
	return m, func() time.Time { return now }
}

// What a request pays for team memory when the cache is fresh: reading
// the cache and matching its rules, a signature checked for the one that
// decides. No network.
func BenchmarkTeamRulesFresh(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint(n, " rules"), func(b *testing.B) {
			m, now := benchRules(b, n)
			req := writeRequest(b, "/p/3")
			b.ResetTimer()
			for b.Loop() {
				if got, _ := m.Matching(req, now()); len(got) != 1 {
					b.Fatalf("%d matches", len(got))
				}
			}
		})
	}
}

// What a request pays when the cache is stale: the rules fetched again
// from a server on this machine (connect, watch the bucket, write the
// cache), then matched.
func BenchmarkTeamRulesRefresh(b *testing.B) {
	m, now := benchRules(b, 10)
	req := writeRequest(b, "/p/3")
	t := now()
	b.ResetTimer()
	for b.Loop() {
		t = t.Add(team.RulesFresh)
		if got, _ := m.Matching(req, t); len(got) != 1 {
			b.Fatalf("%d matches", len(got))
		}
	}
}

// What a team decision pays to publish its audit line to a server on
// this machine.
func BenchmarkPublishAudit(b *testing.B) {
	ts := startTeam(b)
	c := validConfig()
	c.URL = ts.url()
	line := []byte(`{"time":"2026-12-02T00:00:00Z","decision":"deny","` + strings.Repeat("x", 200) + `":1}`)
	for b.Loop() {
		if err := team.PublishAudit(context.Background(), c, line); err != nil {
			b.Fatal(err)
		}
	}
}

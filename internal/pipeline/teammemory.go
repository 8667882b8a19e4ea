package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
)

// SourceTeam is the Source of a team rule's opinion: a rule an approver
// remembered for the team (protocol section 11). It decides as memory
// does (frontend memory, cause rule), the audit log naming the rule and
// its approver.
const SourceTeam = "team"

// teamMemory is the policy source of the team rules that decide a
// request on this host (team.Memory), or nil without [team], a state
// directory for its cache, or an approver to trust.
func teamMemory(c Config) Source {
	if c.Team == nil || c.Memory == nil || len(c.Team.Approvers) == 0 {
		return nil
	}
	m := team.Memory{Config: *c.Team, Dir: c.Memory.Dir, Warn: c.Warn}
	return func(req *decision.Request) []policy.Opinion {
		matches, known := m.Matching(req, c.Now())
		var ops []policy.Opinion
		for _, x := range matches {
			ops = append(ops, ruleOpinion(x.Match, SourceTeam, x.Name()))
		}
		if !known {
			// A team deny may be unseen: a question outweighs every
			// allow (strictest wins), as withoutMemory makes each one.
			ops = append(ops, policy.Opinion{Verdict: policy.Prompt, By: decision.FrontendMemory, Cause: decision.CauseRule,
				Source: SourceTeam, Name: "team rules unknown"})
		}
		return ops
	}
}

// withTeamMemory is c with the team rules among its policy sources.
func withTeamMemory(c Config) Config {
	if s := teamMemory(c); s != nil {
		c.Policy = append(slices.Clip(c.Policy), s)
	}
	return c
}

// ruleOpinion is the opinion of a remembered rule m that covers a
// request, local or the team's: an allow, a deny, or, for a deny a
// computed command may be the denied one, a question.
func ruleOpinion(m state.Match, source, name string) policy.Opinion {
	v := policy.Allow
	switch {
	case m.Decision == decision.Deny && m.Maybe:
		v = policy.Prompt
	case m.Decision == decision.Deny:
		v = policy.Deny
	}
	return policy.Opinion{Verdict: v, By: decision.FrontendMemory, Cause: decision.CauseRule, Source: source, Name: name, Commands: m.Commands}
}

// recordTeam, for decision d the team decided (the team frontend, or a
// team rule among the winners of ops), publishes its audit line e to the
// team's audit stream, within ctx, a failure said; and, for an answer
// to remember always, marks the cached team rules stale, so that the
// rule its approver remembered decides the next request.
func (p *Pipeline) recordTeam(ctx context.Context, e state.AuditEntry, d *decision.Decision, ops []policy.Opinion) {
	if p.c.Team == nil || !teamDecided(d, ops) {
		return
	}
	if d.Frontend == decision.FrontendTeam && d.Persist == decision.PersistAlways {
		if err := team.MarkStale(*p.c.Team, p.c.Memory.Dir); err != nil {
			p.c.Warn(fmt.Sprintf("team rules: %v", err))
		}
	}
	line, err := json.Marshal(e)
	if err == nil {
		err = team.PublishAudit(ctx, *p.c.Team, line)
	}
	if err != nil {
		p.c.Warn(fmt.Sprintf("audit stream: %v; the line is in the local audit log only", err))
	}
}

// teamDecided says whether the team decided d: its frontend, or a team
// rule among the opinions that won.
func teamDecided(d *decision.Decision, ops []policy.Opinion) bool {
	if d.Frontend == decision.FrontendTeam {
		return true
	}
	if d.Frontend != decision.FrontendMemory && d.Frontend != decision.FrontendRules {
		return false
	}
	_, winners := policy.Combine(ops)
	return slices.ContainsFunc(winners, func(o policy.Opinion) bool { return o.Source == SourceTeam })
}

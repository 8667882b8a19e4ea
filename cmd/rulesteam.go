package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
)

// teamWait bounds what a command waits for the team's server.
const teamWait = 10 * time.Second

// withTeam gives rules list and rules forget their --team flag: the team
// rules (protocol section 11) instead of this machine's.
func withTeam(s streams, o *memoryOptions, list, forget *cobra.Command) {
	var on bool
	list.Flags().BoolVar(&on, "team", false, "the team's rules, from its server, or from this machine's cache when the server cannot be reached")
	forget.Flags().BoolVar(&on, "team", false, "forget the team rule ID, one of your own as an approver")
	for c, teamRun := range map[*cobra.Command]func([]string) error{
		list:   func([]string) error { return listTeamRules(s, o) },
		forget: func(args []string) error { return forgetTeamRule(s, o, args) },
	} {
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if !on {
				return run(cmd, args)
			}
			return teamRun(args)
		}
	}
}

// teamSettings are the settings of o, which must configure [team].
func teamSettings(s streams, o *memoryOptions) (settings.Settings, error) {
	set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.getenv)
	switch {
	case err != nil:
		return set, usage("%v", err)
	case set.Team == nil:
		return set, usage("--team: no [team] in the config file (docs/team-memory.md)")
	}
	return set, nil
}

// teamClient is a connection to the team's server as this machine: as
// its approver when it has an approver key, else as host c.Host, so
// that the server's permissions let its replies through. Its ctx ends
// with the first permission error the server reports, which would
// otherwise only show as a timeout.
type teamClient struct {
	ctx context.Context
	end func() // releases ctx
	js  jetstream.JetStream
	nc  *nats.Conn
}

// connectTeam connects to the server of c, for at most teamWait.
func connectTeam(c team.Config) (*teamClient, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teamWait)
	ctx, stop := context.WithCancelCause(ctx)
	tc := &teamClient{ctx: ctx, end: func() { stop(nil); cancel() }}
	inbox := team.HostInbox(c.Host)
	if kp, err := team.LoadKey(c.Key); err == nil {
		inbox = team.ApproverInbox(team.PublicKey(kp))
	}
	nc, err := team.Connect(ctx, c, inbox, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			stop(err)
		}
	}))
	if err != nil {
		tc.end()
		return nil, err
	}
	tc.nc = nc
	if tc.js, err = jetstream.New(nc); err != nil {
		tc.close()
		return nil, err
	}
	return tc, nil
}

func (tc *teamClient) close() {
	tc.nc.Close()
	tc.end()
}

// why is err, or the permission error the server reported, which says
// more than what it caused.
func (tc *teamClient) why(err error) error {
	if cause := context.Cause(tc.ctx); err != nil && errors.Is(cause, nats.ErrPermissionViolation) {
		return fmt.Errorf("%w (%v)", cause, err)
	}
	return err
}

// teamRule is a row of rules list --team.
type teamRule struct {
	ID       string     `json:"id"`
	Approver string     `json:"approver"`
	Status   string     `json:"status"` // in force, expired, untrusted or invalid: why
	Rule     state.Rule `json:"rule"`
}

var teamRulesHeading = []string{"ID", "APPROVER", "DECISION", "SERVER", "TOOL", "ACTION", "SCOPES", "WORKDIR", "GRANTS", "EXPIRES", "STATUS"}

// teamRuleRow is r's row: local rules' columns (ruleRow), but the origin,
// with the team rule's approver and status.
func teamRuleRow(r teamRule) []string {
	cells := ruleRow(r.Rule)
	return append(append([]string{r.ID, r.Approver}, cells[1:len(cells)-1]...), r.Status)
}

// teamRuleOf is the row of entry e for host c at now.
func teamRuleOf(c team.Config, e team.RuleEntry, now time.Time) teamRule {
	u, err := team.ReadRule(e.Key, e.Value)
	if err != nil {
		k, _, _ := strings.Cut(e.Key, ".")
		return teamRule{ID: strings.TrimPrefix(e.Key, k+"."), Approver: k, Status: "invalid: " + err.Error()}
	}
	r := teamRule{ID: u.ID, Approver: u.Approver, Rule: u.Rule, Status: "in force"}
	switch err := u.Verify(c); {
	case !c.Trusts(u.Approver):
		r.Status = "untrusted"
	case err != nil:
		r.Status = "invalid: " + err.Error()
	case u.Rule.Expired(now):
		r.Status = "expired"
	}
	return r
}

// listTeamRules lists the team's rules from its server, refreshing this
// machine's cache, or from the cache when the server cannot be reached,
// and says on stderr which.
func listTeamRules(s streams, o *memoryOptions) error {
	set, err := teamSettings(s, o)
	if err != nil {
		return err
	}
	c, now := *set.Team, time.Now()
	var rules []team.RuleEntry
	tc, err := connectTeam(c)
	if err == nil {
		defer tc.close()
		rules, err = team.FetchRules(tc.ctx, tc.js, c.Names())
		err = tc.why(err)
	}
	switch {
	case err == nil:
		warn(s.errOut, fmt.Sprintf("team rules from %s", c.URL))
		if set.StateDir != "" {
			if _, err := team.SaveRules(c, set.StateDir, rules, now); err != nil {
				warn(s.errOut, fmt.Sprintf("team rules cache: %v", err))
			}
		}
	case set.StateDir == "":
		return &exitError{code: exitInternal, err: fmt.Errorf("team rules: %w; and no state directory holds a cache", err)}
	default:
		rc, cerr := team.LoadRules(c, set.StateDir)
		if cerr != nil {
			return &exitError{code: exitInternal, err: fmt.Errorf("team rules: %w; and the cache: %v", err, cerr)}
		}
		when := "none cached"
		if rc.Fetched != 0 {
			when = "from the cache of " + rc.FetchedAt().UTC().Format(time.RFC3339)
		}
		warn(s.errOut, fmt.Sprintf("team rules: %v; %s", err, when))
		rules = rc.Rules
	}
	items := func(yield func(teamRule) error) error {
		for _, e := range rules {
			if err := yield(teamRuleOf(c, e, now)); err != nil {
				return err
			}
		}
		return nil
	}
	out := bufio.NewWriterSize(s.decision, 64<<10)
	if o.json {
		err = writeJSONArray(out, items)
	} else {
		err = writeTable(out, teamRulesHeading, teamRuleRow, items)
	}
	if err = errors.Join(err, out.Flush()); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	return nil
}

// forgetTeamRule deletes the team rule args[0] of this machine's
// approver key from the team's server, with its credentials: the
// server's permissions let an approver delete its own rules alone.
func forgetTeamRule(s streams, o *memoryOptions, args []string) error {
	if o.all || len(args) != 1 {
		return usage("rules forget --team: give one team rule ID (see askperm rules list --team)")
	}
	set, err := teamSettings(s, o)
	if err != nil {
		return err
	}
	c := *set.Team
	kp, err := team.LoadKey(c.Key)
	if err != nil {
		return usage("rules forget --team: your approver key: %v (only an approver forgets its own team rules)", err)
	}
	key := team.RuleKey(team.PublicKey(kp), args[0])
	if _, _, err := team.ParseRuleKey(key); err != nil {
		return usage("rules forget --team: %q is not a team rule ID (see askperm rules list --team)", args[0])
	}
	tc, err := connectTeam(c)
	if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("team: %w", err)}
	}
	defer tc.close()
	ctx := tc.ctx
	kv, err := tc.js.KeyValue(ctx, c.Names().RulesBucket())
	if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("team: %s: %w", c.Names().RulesBucket(), tc.why(err))}
	}
	if _, err := kv.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
		return usage("rules forget --team: no team rule %s of yours (%s)", args[0], team.PublicKey(kp))
	} else if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("team: %s: %w", key, tc.why(err))}
	}
	if err := kv.Delete(ctx, key); err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("team: forgetting %s: %w: only its approver, with its own credentials, may", key, tc.why(err))}
	}
	if set.StateDir != "" {
		if err := team.MarkStale(c, set.StateDir); err != nil {
			warn(s.errOut, fmt.Sprintf("team rules cache: %v", err))
		}
	}
	warn(s.errOut, fmt.Sprintf("forgot team rule %s", args[0]))
	return nil
}

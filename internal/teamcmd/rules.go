package teamcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// teamWait bounds what a command waits for the team's server.
const teamWait = 10 * time.Second

// memoryOptions are the flags of rules list|forget --team and log
// --team, as askperm's rules and log commands have them.
type memoryOptions struct {
	stateDir, config string
	json, all        bool
}

func (o *memoryOptions) register(c *cobra.Command) {
	c.PersistentFlags().StringVar(&o.stateDir, "state-dir", "", "the state directory (env ASKPERM_STATE_DIR; default $XDG_STATE_HOME/askperm)")
	c.PersistentFlags().StringVar(&o.config, "config", "", "config file (env ASKPERM_CONFIG)")
}

// newRules is askperm rules list --team and rules forget --team ID,
// which askperm hands to askperm-team (its own rules it lists and forgets
// itself).
func newRules(s cli.Streams) *cobra.Command {
	o := &memoryOptions{}
	c := &cobra.Command{Use: "rules", Short: "List or forget the team's rules (askperm rules list|forget --team)"}
	o.register(c)
	var on bool
	teamOnly := func(run func([]string) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			if !on {
				return cli.Usage("rules %s: give --team; askperm rules %s is this machine's rules", c.Name(), c.Name())
			}
			return run(args)
		}
	}
	list := &cobra.Command{
		Use:   "list --team",
		Short: "List the team's rules",
		Args:  cobra.NoArgs,
		RunE:  teamOnly(func([]string) error { return listTeamRules(s, o) }),
	}
	list.Flags().BoolVar(&o.json, "json", false, "one JSON array")
	forget := &cobra.Command{
		Use:   "forget --team ID",
		Short: "Forget one of your team rules, as its approver",
		Args:  cobra.MaximumNArgs(1),
		RunE:  teamOnly(func(args []string) error { return forgetTeamRule(s, o, args) }),
	}
	forget.Flags().BoolVar(&o.all, "all", false, "refused: a team rule is forgotten one at a time")
	list.Flags().BoolVar(&on, "team", false, "the team's rules, from its server, or from this machine's cache when the server cannot be reached")
	forget.Flags().BoolVar(&on, "team", false, "forget the team rule ID, one of your own as an approver")
	c.AddCommand(list, forget)
	return c
}

// teamSettings are the settings of o, which must configure [team].
func teamSettings(s cli.Streams, o *memoryOptions) (settings.Settings, error) {
	set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.Getenv)
	switch {
	case err != nil:
		return set, cli.Usage("%v", err)
	case set.Team == nil:
		return set, cli.Usage("--team: no [team] in the config file (docs/team-memory.md)")
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
	if kp, err := wire.LoadKey(c.Key); err == nil {
		inbox = team.ApproverInbox(team.PublicKey(kp))
	}
	nc, err := wire.Connect(ctx, c, inbox, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
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

// teamRuleRow is r's row: local rules' columns (cli.RuleRow), but the origin,
// with the team rule's approver and status. Every text of another
// machine's is rendered safe: the rule by cli.RuleRow, the status here
// (the ID and the approver parsed as such).
func teamRuleRow(r teamRule) []string {
	cells := cli.RuleRow(r.Rule)
	return append(append([]string{r.ID, r.Approver}, cells[1:len(cells)-1]...), form.Line(r.Status))
}

// teamRuleOf is the row of entry e for host c at now; false when its key
// is no rule key, which is said on errOut instead, rendered safe.
func teamRuleOf(errOut io.Writer, c team.Config, e team.RuleEntry, now time.Time) (teamRule, bool) {
	k, id, err := team.ParseRuleKey(e.Key)
	if err != nil {
		cli.Warn(errOut, form.Line(fmt.Sprintf("team rules: %v; not listed", err)))
		return teamRule{}, false
	}
	u, err := team.ReadRule(e.Key, e.Value)
	if err != nil {
		return teamRule{ID: id, Approver: k, Status: form.Line("invalid: " + err.Error())}, true
	}
	r := teamRule{ID: u.ID, Approver: u.Approver, Rule: u.Rule, Status: "in force"}
	switch err := u.Verify(c, now); {
	case !c.Trusts(u.Approver):
		r.Status = "untrusted"
	case err != nil:
		r.Status = form.Line("invalid: " + err.Error())
	case u.Rule.Expired(now):
		r.Status = "expired"
	}
	return r, true
}

// listTeamRules lists the team's rules from its server, refreshing this
// machine's cache, or from the cache when the server cannot be reached,
// and says on stderr which.
func listTeamRules(s cli.Streams, o *memoryOptions) error {
	set, err := teamSettings(s, o)
	if err != nil {
		return err
	}
	c, now := *set.Team, time.Now()
	var rules []team.RuleEntry
	tc, err := connectTeam(c)
	if err == nil {
		defer tc.close()
		rules, err = wire.FetchRules(tc.ctx, tc.js, c)
		err = tc.why(err)
	}
	switch {
	case err == nil:
		cli.Warn(s.ErrOut, fmt.Sprintf("team rules from %s", c.URL))
		if set.StateDir != "" {
			if _, err := team.SaveRules(c, set.StateDir, rules, now); err != nil {
				cli.Warn(s.ErrOut, fmt.Sprintf("team rules cache: %v", err))
			}
		}
	case set.StateDir == "":
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team rules: %w; and no state directory holds a cache", err)}
	default:
		rc, cerr := team.LoadRules(c, set.StateDir)
		if cerr != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team rules: %w; and the cache: %v", err, cerr)}
		}
		when := "none cached"
		if rc.Fetched != 0 {
			when = "from the cache of " + rc.FetchedAt().UTC().Format(time.RFC3339)
		}
		cli.Warn(s.ErrOut, fmt.Sprintf("team rules: %v; %s", err, when))
		rules = rc.Rules
	}
	items := func(yield func(teamRule) error) error {
		for _, e := range rules {
			if r, ok := teamRuleOf(s.ErrOut, c, e, now); ok {
				if err := yield(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if !o.json {
		return cli.WriteList(s.Decision, false, teamRulesHeading, teamRuleRow, items)
	}
	// The rules' text is another machine's: JSON's own escapes leave some
	// of what a terminal acts on raw.
	var b bytes.Buffer
	if err := cli.WriteList(&b, true, teamRulesHeading, teamRuleRow, items); err != nil {
		return err
	}
	if _, err := s.Decision.Write(cli.ASCIIJSON(b.Bytes())); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	return nil
}

// forgetTeamRule deletes the team rule args[0] of this machine's
// approver key from the team's server, with its credentials: the
// server's permissions let an approver delete its own rules alone.
func forgetTeamRule(s cli.Streams, o *memoryOptions, args []string) error {
	if o.all || len(args) != 1 {
		return cli.Usage("rules forget --team: give one team rule ID (see askperm rules list --team)")
	}
	set, err := teamSettings(s, o)
	if err != nil {
		return err
	}
	c := *set.Team
	kp, err := wire.LoadKey(c.Key)
	if err != nil {
		return cli.Usage("rules forget --team: your approver key: %v (only an approver forgets its own team rules)", err)
	}
	key := team.RuleKey(team.PublicKey(kp), args[0])
	if _, _, err := team.ParseRuleKey(key); err != nil {
		return cli.Usage("rules forget --team: %q is not a team rule ID (see askperm rules list --team)", args[0])
	}
	tc, err := connectTeam(c)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team: %w", err)}
	}
	defer tc.close()
	ctx := tc.ctx
	kv, err := wire.BindKV(ctx, tc.js, c, c.Names().RulesBucket())
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team: %s: %w", c.Names().RulesBucket(), tc.why(err))}
	}
	if _, err := kv.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
		return cli.Usage("rules forget --team: no team rule %s of yours (%s)", args[0], team.PublicKey(kp))
	} else if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team: %s: %w", key, tc.why(err))}
	}
	if err := kv.Delete(ctx, key); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("team: forgetting %s: %w: only its approver, with its own credentials, may", key, tc.why(err))}
	}
	if set.StateDir != "" {
		if err := team.MarkStale(c, set.StateDir); err != nil {
			cli.Warn(s.ErrOut, fmt.Sprintf("team rules cache: %v", err))
		}
	}
	cli.Warn(s.ErrOut, fmt.Sprintf("forgot team rule %s", args[0]))
	return nil
}

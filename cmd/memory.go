package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/hook"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
)

// claudeCopies says where Claude Code keeps a copy of rule id (of every
// rule, with all), which forgetting the rule leaves in place.
func claudeCopies(st *state.Store, id uint64, all bool) []string {
	rules, err := st.Rules(time.Now())
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range rules {
		kinds := make([]decision.ScopeKind, len(r.Dimensions))
		for i, d := range r.Dimensions {
			kinds[i] = d.Kind
		}
		if c, ok := hook.ClaudeCopyOf(r.Decision, r.Server, r.Tool, kinds, r.WorkdirScope, r.Expires == 0); ok && (all || r.ID == id) {
			out = append(out, fmt.Sprintf("rule %d: Claude Code may keep a copy, its rule %s in %s: remove it there too (/permissions)", r.ID, form.Line(c.Rule), c.Settings))
		}
	}
	return out
}

func warnAll(s cli.Streams, lines []string) {
	for _, l := range lines {
		cli.Warn(s.ErrOut, l)
	}
}

// memoryOptions are the flags of the commands that list and forget what
// askperm remembers.
type memoryOptions struct {
	stateDir, config string
	json, all        bool
}

func (o *memoryOptions) register(c *cobra.Command) {
	c.PersistentFlags().StringVar(&o.stateDir, "state-dir", "", "the state directory (env ASKPERM_STATE_DIR; default $XDG_STATE_HOME/askperm)")
	c.PersistentFlags().StringVar(&o.config, "config", "", "config file (env ASKPERM_CONFIG)")
}

// open opens the store the settings name.
func (o *memoryOptions) open(s cli.Streams) (*state.Store, settings.Settings, error) {
	set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.Getenv)
	if err != nil {
		return nil, set, cli.Usage("%v", err)
	}
	if set.StateDir == "" {
		return nil, set, cli.Usage("no state directory: set XDG_STATE_HOME or HOME, or give --state-dir")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := state.Open(ctx, set.StateDir)
	if err != nil {
		return nil, set, &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("state store: %w", err)}
	}
	return st, set, nil
}

func newRules(s cli.Streams) *cobra.Command {
	o := &memoryOptions{}
	c := &cobra.Command{Use: "rules", Short: "List or forget remembered always-rules"}
	o.register(c)
	list := listCommand(s, o, "List the remembered always-rules in force",
		func(st *state.Store, _ settings.Settings, yield func(state.Rule) error) error {
			return st.EachRule(time.Now(), yield)
		}, cli.RulesHeading, cli.RuleRow)
	forget := &cobra.Command{
		Use:   "forget ID | --all",
		Short: "Forget one remembered rule, or all",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if o.all == (len(args) == 1) {
				return cli.Usage("rules forget: give one rule ID, or --all")
			}
			var id uint64
			if !o.all {
				var err error
				if id, err = strconv.ParseUint(args[0], 10, 64); err != nil {
					return cli.Usage("rules forget: %q is not a rule ID (see askperm rules list)", args[0])
				}
			}
			st, _, err := o.open(s)
			if err != nil {
				return err
			}
			defer st.Close()
			copies := claudeCopies(st, id, o.all)
			if o.all {
				n, err := st.ForgetAll()
				if err != nil {
					return &cli.ExitError{Code: cli.ExitInternal, Err: err}
				}
				cli.Warn(s.ErrOut, fmt.Sprintf("forgot %d rules", n))
				warnAll(s, copies)
				return nil
			}
			found, err := st.Forget(id)
			switch {
			case err != nil:
				return &cli.ExitError{Code: cli.ExitInternal, Err: err}
			case !found:
				return cli.Usage("rules forget: no rule %d", id)
			}
			cli.Warn(s.ErrOut, fmt.Sprintf("forgot rule %d", id))
			warnAll(s, copies)
			return nil
		},
	}
	forget.Flags().BoolVar(&o.all, "all", false, "forget every rule")
	withTeam(s, o, list, forget)
	c.AddCommand(list, forget)
	return c
}

func newSession(s cli.Streams) *cobra.Command {
	o := &memoryOptions{}
	c := &cobra.Command{Use: "session", Short: "List or forget approvals for a session"}
	o.register(c)
	list := listCommand(s, o, "List the calls approved for their session",
		func(st *state.Store, set settings.Settings, yield func(state.SessionApproval) error) error {
			return st.EachSession(time.Now(), set.SessionIdle, yield)
		}, sessionsHeading, sessionRow)
	forget := &cobra.Command{
		Use:   "forget [SESSION]",
		Short: "Forget the approvals of one session, or of all",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			st, _, err := o.open(s)
			if err != nil {
				return err
			}
			defer st.Close()
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			n, err := st.ForgetSessions(id)
			if err != nil {
				return &cli.ExitError{Code: cli.ExitInternal, Err: err}
			}
			cli.Warn(s.ErrOut, fmt.Sprintf("forgot %d session approvals", n))
			return nil
		},
	}
	c.AddCommand(list, forget)
	return c
}

// listCommand is the list subcommand of a memory: what each finds, as
// one JSON array with --json, else as a table of header and row, each
// item written as it is found, the output buffered.
func listCommand[T any](s cli.Streams, o *memoryOptions, short string,
	each func(*state.Store, settings.Settings, func(T) error) error, heading []string, row func(T) []string) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, set, err := o.open(s)
			if err != nil {
				return err
			}
			defer st.Close()
			items := func(yield func(T) error) error { return each(st, set, yield) }
			return cli.WriteList(s.Decision, o.json, heading, row, items)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "one JSON array")
	return c
}

var sessionsHeading = []string{"SESSION", "SERVER", "TOOL", "LAST USED", "APPROVED"}

// sessionRow is a's row of session list; request text in it is rendered
// safe.
func sessionRow(a state.SessionApproval) []string {
	p := a.Approval
	question := "(not recorded)"
	if a.Question != "" {
		question = recorded(a.Question)
	}
	return []string{form.Line(p.SessionID), cli.Dash(form.Line(a.Server)), cli.Dash(form.Line(p.Tool)),
		time.Unix(a.LastUsed, 0).Format(time.DateTime), question}
}

// recorded is q, text rendered (form.Line) when it was recorded, shown as
// it is when nothing in it but its own escapes would be rendered, else
// rendered again: a record changed by hand never reaches the terminal raw.
func recorded(q string) string {
	bare := strings.NewReplacer(`\`, "", "⟨", "").Replace(q)
	if form.Line(bare) == bare {
		return q
	}
	return form.Line(q)
}

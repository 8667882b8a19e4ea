package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
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

func warnAll(s streams, lines []string) {
	for _, l := range lines {
		warn(s.errOut, l)
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
func (o *memoryOptions) open(s streams) (*state.Store, settings.Settings, error) {
	set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.getenv)
	if err != nil {
		return nil, set, usage("%v", err)
	}
	if set.StateDir == "" {
		return nil, set, usage("no state directory: set XDG_STATE_HOME or HOME, or give --state-dir")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := state.Open(ctx, set.StateDir)
	if err != nil {
		return nil, set, &exitError{code: exitInternal, err: fmt.Errorf("state store: %w", err)}
	}
	return st, set, nil
}

func newRules(s streams) *cobra.Command {
	o := &memoryOptions{}
	c := &cobra.Command{Use: "rules", Short: "List or forget remembered always-rules"}
	o.register(c)
	list := listCommand(s, o, "List the remembered always-rules in force",
		func(st *state.Store, _ settings.Settings, yield func(state.Rule) error) error {
			return st.EachRule(time.Now(), yield)
		}, rulesHeading, ruleRow)
	forget := &cobra.Command{
		Use:   "forget ID | --all",
		Short: "Forget one remembered rule, or all",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if o.all == (len(args) == 1) {
				return usage("rules forget: give one rule ID, or --all")
			}
			var id uint64
			if !o.all {
				var err error
				if id, err = strconv.ParseUint(args[0], 10, 64); err != nil {
					return usage("rules forget: %q is not a rule ID (see askperm rules list)", args[0])
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
					return &exitError{code: exitInternal, err: err}
				}
				warn(s.errOut, fmt.Sprintf("forgot %d rules", n))
				warnAll(s, copies)
				return nil
			}
			found, err := st.Forget(id)
			switch {
			case err != nil:
				return &exitError{code: exitInternal, err: err}
			case !found:
				return usage("rules forget: no rule %d", id)
			}
			warn(s.errOut, fmt.Sprintf("forgot rule %d", id))
			warnAll(s, copies)
			return nil
		},
	}
	forget.Flags().BoolVar(&o.all, "all", false, "forget every rule")
	withTeam(s, o, list, forget)
	c.AddCommand(list, forget)
	return c
}

func newSession(s streams) *cobra.Command {
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
				return &exitError{code: exitInternal, err: err}
			}
			warn(s.errOut, fmt.Sprintf("forgot %d session approvals", n))
			return nil
		},
	}
	c.AddCommand(list, forget)
	return c
}

// listCommand is the list subcommand of a memory: what each finds, as
// one JSON array with --json, else as a table of header and row, each
// item written as it is found, the output buffered.
func listCommand[T any](s streams, o *memoryOptions, short string,
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
			out := bufio.NewWriterSize(s.decision, 64<<10)
			if o.json {
				err = writeJSONArray(out, items)
			} else {
				err = writeTable(out, heading, row, items)
			}
			if err = errors.Join(err, out.Flush()); err != nil {
				return &exitError{code: exitInternal, err: err}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "one JSON array")
	return c
}

// writeTable writes what items gives as a table of heading and each
// one's row.
func writeTable[T any](out io.Writer, heading []string, row func(T) []string, items func(func(T) error) error) error {
	return streamTable(out, heading, func(_ bool, emit func([]string) error) error {
		return items(func(it T) error { return emit(row(it)) })
	})
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
	return []string{form.Line(p.SessionID), dash(form.Line(a.Server)), dash(form.Line(p.Tool)),
		time.Unix(a.LastUsed, 0).Format(time.DateTime), question}
}

// writeJSONArray writes what each gives as one JSON array, as writeJSON
// writes a slice of it, one element at a time.
func writeJSONArray[T any](out io.Writer, each func(func(T) error) error) error {
	sep := "["
	err := each(func(v T) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		io.WriteString(out, sep)
		sep = ","
		_, err = out.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if sep == "[" {
		io.WriteString(out, sep)
	}
	_, err = io.WriteString(out, "]\n")
	return err
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

var rulesHeading = []string{"ID", "DECISION", "SERVER", "TOOL", "ACTION", "SCOPES", "WORKDIR", "GRANTS", "EXPIRES", "ORIGIN"}

// ruleRow is r's row of rules list; request text in it is rendered safe.
func ruleRow(r state.Rule) []string {
	var scopes []string
	for _, d := range r.Dimensions {
		scopes = append(scopes, form.Line(d.Name)+"="+string(d.Kind)+":"+form.Line(d.Match))
	}
	workdir := r.WorkdirScope
	if r.Workdir != "" {
		workdir = form.Line(r.Workdir)
	}
	grants := make([]string, len(r.Grants))
	for i, g := range r.Grants {
		grants[i] = form.Line(g)
	}
	expires := "never"
	if r.Expires != 0 {
		expires = time.Unix(r.Expires, 0).Format(time.DateTime)
	}
	return []string{strconv.FormatUint(r.ID, 10), string(r.Decision), dash(form.Line(r.Server)), dash(form.Line(r.Tool)),
		form.Line(r.Action), dash(strings.Join(scopes, " ")), dash(workdir), dash(strings.Join(grants, ",")), expires, originText(r.Origin)}
}

// originText says who gave a rule: a person in a frontend, or a canned
// answer.
func originText(origin string) string {
	switch origin {
	case string(decision.FrontendAnswers):
		return "canned-answer"
	case state.OriginUnknown:
		return origin
	}
	return "person/" + form.Line(origin)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

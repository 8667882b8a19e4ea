package cmd

import (
	"context"
	"fmt"
	"os"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/setup"
)

const doctorExample = `  askperm doctor
  askperm doctor --json | jq -r '.checks[] | select(.status != "ok") | .fix'`

func newDoctor(s cli.Streams) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check your set-up: terminal, display, dialogs, pane, state directory, rules, team, notify, reviewers, the agents' hooks",
		Long: `Check the set-up askperm would run in, changing nothing, one line per check (ok, warn or fail, and what
to do): the terminal and TERM, the display and the dialog programs, a running askperm pane, the state
directory and its store (not waited for long when locked), config.toml and rules.toml, team mode (the
askperm-team program it would run and whether it is trusted, the host, the approvers; the server is not
contacted), [notify] and each [[reviewer]], the hooks Claude
Code's and Codex's settings files run and whether their askperm binary exists, and what the frontend chain
would do now, here and for the hooks. Exit 0 when nothing fails, 1 otherwise.`,
		Example: doctorExample,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return runDoctor(s, asJSON) },
	}
	c.Flags().BoolVar(&asJSON, "json", false, `one JSON object: {"ok": bool, "checks": [{"check", "status", "detail", "fix"?}]}`)
	return c
}

func runDoctor(s cli.Streams, asJSON bool) error {
	dir, err := os.Getwd()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	self, _ := os.Executable() // without it, hooks are recognised by the name askperm
	set, err := settings.Resolve(settings.Flags{}, s.Getenv)
	if err != nil { // the config and rules checks say why; the rest runs on the defaults
		set = setup.Defaults(s.Getenv)
	}
	away := set
	awayFromAgent(&away)
	resolvePane(&away)
	d := setup.Doctor{
		Getenv: s.Getenv, Place: setup.Place{Getenv: s.Getenv, Dir: dir},
		StateDir: set.StateDir, Dialogs: set.Prompt.DialogPaths, Self: self,
		Here: setup.Chain{Frontends: set.Frontends, Prompt: set.Prompt},
		Away: setup.Chain{Frontends: away.Frontends, Prompt: away.Prompt},
		Team: set.Team, Notify: set.Notify,
	}
	if err == nil { // Settings hold the reviewers compiled; doctor shows them as written
		if path := setup.ConfigPath(s.Getenv); path != "" {
			if cfg, err := settings.Load(path, true); err == nil {
				d.Reviewers = cfg.Reviewers
			}
		}
	}
	checks := d.Run(context.Background())
	ok := true
	for _, c := range checks {
		ok = ok && c.Status != setup.Fail
	}
	if asJSON {
		b, err := json.Marshal(struct {
			OK     bool          `json:"ok"`
			Checks []setup.Check `json:"checks"`
		}{ok, checks})
		if err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: err}
		}
		fmt.Fprintf(s.Decision, "%s\n", b)
	} else {
		for _, c := range checks {
			line := fmt.Sprintf("%-4s %s: %s", c.Status, c.Name, c.Detail)
			if c.Fix != "" {
				line += " → " + c.Fix
			}
			fmt.Fprintln(s.Decision, line)
		}
	}
	if !ok {
		return &cli.ExitError{Code: cli.ExitDeny}
	}
	return nil
}

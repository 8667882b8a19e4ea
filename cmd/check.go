package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/settings"
)

// checkOptions are the flags of askperm check.
type checkOptions struct {
	settings.Flags
	json bool
}

// checkJSON is askperm check --json (protocol section 8).
type checkJSON struct {
	Result   string        `json:"result"`
	Message  string        `json:"message,omitempty"`
	Opinions []opinionJSON `json:"opinions"`
}

type opinionJSON struct {
	Source  string `json:"source"`
	Name    string `json:"name"`
	Opinion string `json:"opinion"`
}

func newCheck(s streams) *cobra.Command {
	o := &checkOptions{}
	c := &cobra.Command{
		Use:   "check",
		Short: "Say what would decide a request, and why, without asking anyone",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runCheck(s, o) },
	}
	f := c.Flags()
	f.StringArrayVar(&o.Rules, "rules", nil, "a rules file (TOML); repeatable, beside the user's rules.toml")
	f.StringVar(&o.Config, "config", "", "config file (env ASKPERM_CONFIG)")
	f.StringVar(&o.StateDir, "state-dir", "", "the state directory (env ASKPERM_STATE_DIR)")
	f.BoolVar(&o.NoRemember, "no-remember", false, "leave what askperm remembers out")
	f.StringVar(&o.MaxRequest, "max-request", "", "largest request accepted (default 1MiB)")
	f.BoolVar(&o.json, "json", false, "one JSON object")
	return c
}

func runCheck(s streams, o *checkOptions) error {
	set, err := settings.Resolve(o.Flags, s.getenv)
	if err != nil {
		return usage("%v", err)
	}
	if isatty.IsTerminal(s.in.Fd()) {
		return usage("stdin is a terminal: pipe one JSON request into askperm check")
	}
	cfg := pipeline.Config{Timeout: set.Timeout, MaxRequest: set.MaxRequest, Warn: func(m string) { warn(s.errOut, m) }}
	if !set.Policy.Empty() {
		cfg.Policy = []pipeline.Source{set.Policy.Opinions}
	}
	if set.StateDir != "" {
		cfg.Memory = &pipeline.Memory{Dir: set.StateDir, SessionIdle: set.SessionIdle}
	}
	res, err := pipeline.New(cfg).Check(context.Background(), s.in)
	if errors.Is(err, pipeline.ErrInvalidRequest) {
		return &exitError{code: exitRequest, err: err}
	} else if err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	out := checkJSON{Result: res.Verdict.String(), Message: res.Message, Opinions: []opinionJSON{}}
	for _, op := range res.Opinions {
		out.Opinions = append(out.Opinions, opinionJSON{Source: op.Source, Name: op.Name, Opinion: op.Verdict.String()})
	}
	if o.json {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = s.decision.Write(append(b, '\n'))
		return err
	}
	w := tabwriter.NewWriter(s.decision, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SOURCE\tNAME\tOPINION")
	for _, op := range out.Opinions {
		fmt.Fprintf(w, "%s\t%s\t%s\n", op.Source, op.Name, op.Opinion)
	}
	result := out.Result
	if len(out.Opinions) == 0 {
		result += " (nothing decides it: a person or a canned answer is asked)"
	}
	if out.Message != "" {
		result += ": " + out.Message
	}
	fmt.Fprintf(w, "\nresult: %s\n", result)
	return w.Flush()
}

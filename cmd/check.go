package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
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
	// Commands are the simple commands of the request's command lines
	// (protocol section 10), in the order of their dimensions.
	Commands []commandJSON `json:"commands,omitempty"`
	// Reviewers name the reviewers that would be asked, in order, when
	// the result is prompt (protocol section 12); they are not run.
	Reviewers []string `json:"reviewers,omitempty"`
}

// commandJSON is one simple command and the opinions speaking of it.
type commandJSON struct {
	Dimension string        `json:"dimension"`
	Text      string        `json:"text"`
	Opaque    string        `json:"opaque"`
	Opinions  []opinionJSON `json:"opinions"`
}

type opinionJSON struct {
	Source  string `json:"source"`
	Name    string `json:"name"`
	Opinion string `json:"opinion"`
}

func newCheck(s cli.Streams) *cobra.Command {
	o := &checkOptions{}
	c := &cobra.Command{
		Use:   "check",
		Short: "Say what would decide a request, and why, without asking anyone",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runCheck(s, o) },
	}
	checkFlags(c.Flags(), &o.Flags, &o.json, "one JSON object")
	return c
}

// checkFlags registers the flags check and explain share.
func checkFlags(f *pflag.FlagSet, o *settings.Flags, json *bool, jsonUsage string) {
	f.StringArrayVar(&o.Rules, "rules", nil, "a rules file (TOML); repeatable, beside the user's rules.toml")
	f.StringVar(&o.Config, "config", "", "config file (env ASKPERM_CONFIG)")
	f.StringVar(&o.StateDir, "state-dir", "", "the state directory (env ASKPERM_STATE_DIR)")
	f.BoolVar(&o.NoRemember, "no-remember", false, "leave what askperm remembers (remembered rules, session approvals) out")
	f.StringVar(&o.MaxRequest, "max-request", "", "largest input accepted (default 1MiB)")
	f.BoolVar(json, "json", false, jsonUsage)
}

func runCheck(s cli.Streams, o *checkOptions) error {
	p, _, err := checker(s, o.Flags, "check")
	if err != nil {
		return err
	}
	res, err := p.Check(context.Background(), s.In)
	if err != nil {
		return checkError(err)
	}
	out := checkResult(res)
	if o.json {
		return cli.WriteJSON(s.Decision, out)
	}
	w := tabwriter.NewWriter(s.Decision, 0, 4, 2, ' ', 0)
	writeCheck(w, out)
	return w.Flush()
}

// checker is the pipeline that check and explain (command) ask, and the
// settings it was made of.
func checker(s cli.Streams, flags settings.Flags, command string) (*pipeline.Pipeline, settings.Settings, error) {
	set, err := settings.Resolve(flags, s.Getenv)
	if err != nil {
		return nil, set, cli.Usage("%v", err)
	}
	if isatty.IsTerminal(s.In.Fd()) {
		return nil, set, cli.Usage("stdin is a terminal: pipe one JSON request into askperm %s", command)
	}
	cfg := pipeline.Config{Timeout: set.Timeout, MaxRequest: set.MaxRequest, Team: set.Team, Reviewers: set.Reviewers, Warn: func(m string) { cli.Warn(s.ErrOut, m) }}
	if !set.Policy.Empty() {
		cfg.Policy = []pipeline.Source{set.Policy.Opinions}
	}
	if set.StateDir != "" {
		cfg.Memory = &pipeline.Memory{Dir: set.StateDir, SessionIdle: set.SessionIdle}
	}
	return pipeline.New(cfg), set, nil
}

// checkError is the exit of a check that failed: 65 for a request that
// is not one, 70 else.
func checkError(err error) error {
	if errors.Is(err, pipeline.ErrInvalidRequest) {
		return &cli.ExitError{Code: cli.ExitRequest, Err: err}
	}
	return &cli.ExitError{Code: cli.ExitInternal, Err: err}
}

// checkResult is what check says of res.
func checkResult(res pipeline.Check) checkJSON {
	out := checkJSON{Result: res.Verdict.String(), Message: res.Message, Reviewers: res.Reviewers}
	out.Opinions = opinionsJSON(res.Opinions)
	for _, d := range res.Request.Dimensions {
		for _, c := range res.Commands[d.Name] {
			out.Commands = append(out.Commands, commandJSON{Dimension: d.Name, Text: c.Text, Opaque: c.Opaque, Opinions: opinionsJSON(c.Opinions)})
		}
	}
	return out
}

// writeCheck writes out as check's table: the opinions, the commands of
// command lines, the result.
func writeCheck(w io.Writer, out checkJSON) {
	fmt.Fprintln(w, "SOURCE\tNAME\tOPINION")
	for _, op := range out.Opinions {
		fmt.Fprintf(w, "%s\t%s\t%s\n", op.Source, op.Name, op.Opinion)
	}
	if len(out.Commands) > 0 {
		fmt.Fprintln(w, "\nDIMENSION\tCOMMAND\tDECIDED BY")
		for _, c := range out.Commands {
			by := "nothing: asks"
			if len(c.Opinions) > 0 {
				var names []string
				for _, op := range c.Opinions {
					names = append(names, op.Name+" ("+op.Opinion+")")
				}
				by = strings.Join(names, ", ")
			}
			text := c.Text
			if c.Opaque != "" {
				text += " [opaque: " + c.Opaque + "]"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", form.Line(c.Dimension), form.Line(text), form.Line(by))
		}
	}
	result := out.Result
	switch {
	case len(out.Reviewers) > 0:
		result += " (the reviewers " + form.Line(strings.Join(out.Reviewers, ", ")) + " are asked first)"
	case len(out.Opinions) == 0:
		result += " (nothing decides it: a person or a canned answer is asked)"
	}
	if out.Message != "" {
		result += ": " + out.Message
	}
	fmt.Fprintf(w, "\nresult: %s\n", result)
}

func opinionsJSON(ops []pipeline.Opinion) []opinionJSON {
	out := []opinionJSON{}
	for _, op := range ops {
		out = append(out, opinionJSON{Source: op.Source, Name: op.Name, Opinion: op.Verdict.String()})
	}
	return out
}

package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/settings"
)

// decidingOptions are the flags every command that decides requests
// shares (registerDeciding).
type decidingOptions struct {
	settings.Flags
	verbose bool
}

// askOptions are the flags of askperm and askperm ask.
type askOptions struct {
	decidingOptions
	exitStatus bool
}

func (o *askOptions) register(c *cobra.Command) {
	registerDeciding(c, &o.Flags, &o.verbose)
	c.Flags().BoolVar(&o.exitStatus, "exit-status", false, "exit 0 allow, 1 deny, 124 timeout, 130 cancelled (the decision is still written)")
}

// registerDeciding registers the flags of every command that decides
// requests (askperm, ask, gate).
func registerDeciding(c *cobra.Command, o *settings.Flags, verbose *bool) {
	f := c.Flags()
	f.StringVar(&o.Answer, "answer", "", "answer without a human: allow-once, deny-once, allow-always, deny-always or allow-session")
	f.StringVar(&o.Message, "message", "", "the denial reason given with --answer")
	f.StringVar(&o.AnswersFile, "answers", "", "canned answers file (TOML), first match wins")
	f.BoolVar(&o.Strict, "strict", false, "with --answers: exit 69 when no canned answer matches instead of asking")
	f.StringVar(&o.Timeout, "timeout", "", "deadline for the whole request, reading stdin included (30s, 5m, or seconds; default 300s; 0 means the default)")
	f.StringVar(&o.MaxRequest, "max-request", "", "largest request accepted (bytes, or with a KiB/MiB suffix; default 1MiB)")
	f.StringVar(&o.Frontend, "frontend", "", "comma-separated frontend order: tui, line, yad, zenity, team, none (env ASKPERM_FRONTEND)")
	f.StringVar(&o.TTY, "tty", "", "ask on this terminal instead of the controlling one; auto: on the pane kept for approvals (askperm pane) when one runs (env ASKPERM_TTY)")
	f.StringVar(&o.Config, "config", "", "config file (env ASKPERM_CONFIG; default $XDG_CONFIG_HOME/askperm/config.toml)")
	f.BoolVar(verbose, "verbose", false, "name on stderr the rules, memory entries or reviewer that decided, and each reviewer that abstained")
	f.StringArrayVar(&o.Rules, "rules", nil, "a rules file (TOML) deciding before anyone is asked; repeatable, beside the user's rules.toml")
	f.StringVar(&o.StateDir, "state-dir", "", "where remembered rules and session approvals live (env ASKPERM_STATE_DIR; default $XDG_STATE_HOME/askperm)")
	f.BoolVar(&o.NoRemember, "no-remember", false, noRememberUsage)
	completeDeciding(c)
}

// noRememberUsage is --no-remember's help: everything the state
// directory holds is turned off with it.
const noRememberUsage = "use no state directory (as [state] remember = false): remembered rules and session approvals are neither used nor recorded, no audit log line is written, prompts of other askperm processes are not queued behind, the circuit breaker and prompt limits do not count, and no pane (askperm pane) is found"

// command returns the cobra command use, running askperm ask.
func (o *askOptions) command(s cli.Streams, use, short string) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.AnswerSet = c.Flags().Changed("answer")
			return runAsk(s, o)
		},
	}
	o.register(c)
	return c
}

func runAsk(s cli.Streams, o *askOptions) error {
	set, err := settings.Resolve(o.Flags, s.Getenv)
	if err != nil {
		return cli.Usage("%v", err)
	}
	if isatty.IsTerminal(s.In.Fd()) {
		return cli.Usage("stdin is a terminal: pipe one JSON request into askperm (see askperm --help)")
	}
	ctx, stop, p := oneShot(s, set, o.verbose)
	defer stop()
	ctx, cancel := watchCaller(ctx, s.Decision)
	defer cancel()
	return writeOutcome(s, p.Run(ctx, s.In), o.exitStatus)
}

// oneShot is the pipeline of a helper that decides one request, and its
// context, which the signals that end a helper cancel (cli.OnSignals).
func oneShot(s cli.Streams, set settings.Settings, verbose bool, tune ...func(*pipeline.Config)) (context.Context, func(), *pipeline.Pipeline) {
	ctx, stop := cli.OnSignals(context.Background())
	c := pipelineConfig(s, set, verbose)
	for _, t := range tune {
		t(&c)
	}
	return ctx, stop, pipeline.New(c)
}

// newPipeline is the pipeline the settings describe.
func newPipeline(s cli.Streams, set settings.Settings, verbose bool) *pipeline.Pipeline {
	return pipeline.New(pipelineConfig(s, set, verbose))
}

// pipelineConfig is the configuration of the pipeline the settings
// describe.
func pipelineConfig(s cli.Streams, set settings.Settings, verbose bool) pipeline.Config {
	resolvePane(&set)
	var memory *pipeline.Memory
	if set.StateDir != "" {
		memory = &pipeline.Memory{Dir: set.StateDir, SessionIdle: set.SessionIdle, Breaker: set.Breaker, Prompts: set.Prompts}
	}
	var sources []pipeline.Source
	if !set.Policy.Empty() {
		sources = append(sources, set.Policy.Opinions)
	}
	return pipeline.Config{
		Policy:     sources,
		Memory:     memory,
		Timeout:    set.Timeout,
		MaxRequest: set.MaxRequest,
		Answers:    set.Answers,
		Strict:     set.Strict,
		Reviewers:  set.Reviewers,
		Frontends:  set.Frontends,
		Prompt:     set.Prompt,
		Team:       set.Team,
		Notify:     set.Notify,
		Warn:       func(m string) { cli.Warn(s.ErrOut, m) },
		Verbose:    verbose,
	}
}

// writeOutcome writes the outcome's decision, if it has one, and returns
// its exit status.
func writeOutcome(s cli.Streams, out pipeline.Outcome, exitStatus bool) error {
	if out.Decision == nil {
		code := cli.ExitInternal
		switch {
		case errors.Is(out.Err, pipeline.ErrInvalidRequest):
			code = cli.ExitRequest
		case errors.Is(out.Err, pipeline.ErrNoMatch):
			code = cli.ExitNoMatch
		case errors.Is(out.Err, pipeline.ErrBadAnswer):
			code = cli.ExitUsage
		}
		return &cli.ExitError{Code: code, Err: out.Err}
	}
	if _, err := s.Decision.Write(decision.Encode(*out.Decision)); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("writing the decision: %w", err)}
	}
	if out.Err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: out.Err}
	}
	if code := statusOf(*out.Decision, exitStatus); code != cli.ExitOK {
		return &cli.ExitError{Code: code}
	}
	return nil
}

// statusOf is the exit status of a written decision.
func statusOf(d decision.Decision, exitStatus bool) int {
	switch {
	case !exitStatus || d.Decision == decision.Allow:
		return cli.ExitOK
	case d.Cause == decision.CauseTimeout:
		return cli.ExitTimeout
	case d.Cause == decision.CauseCancelled:
		return cli.ExitCancel
	default:
		return cli.ExitDeny
	}
}

package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/hook"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/settings"
)

// exitBlock is the exit status that makes an agent's PreToolUse hook block
// the call: any other non-zero status lets the tool run. A panic outside
// the pipeline (which turns its own into denies) exits 2 as well, Go's
// status for a crash, so a crash blocks too.
const exitBlock = 2

// hookTimeout is a hook's deadline unless --timeout says otherwise:
// shorter than the agents' default hook timeouts (Claude Code's is 60 s),
// so askperm answers before the agent kills it, which would not block.
const hookTimeout = 50 * time.Second

func newHook(s cli.Streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook AGENT",
		Short: "Answer an agent's permission hook",
		// A missing or mistyped agent must not pass for an answer: help
		// and exit 0 would leave every call to the agent's own rules.
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &cli.ExitError{Code: exitBlock, Err: fmt.Errorf("hook: no agent %q (claude-code or codex); blocked", args[0])}
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return &cli.ExitError{Code: exitBlock, Err: errors.New("hook: name the agent (askperm hook claude-code or askperm hook codex); blocked")}
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &cli.ExitError{Code: exitBlock, Err: fmt.Errorf("hook: %w (name the agent first: askperm hook claude-code or askperm hook codex); blocked", err)}
	})
	c.AddCommand(
		newAgentHook(s, hook.ClaudeCode, "Answer a Claude Code PreToolUse or PermissionRequest hook (fails closed: a deny answer, or exit 2)"),
		newAgentHook(s, hook.Codex, "Answer a Codex PermissionRequest hook (fails closed: a deny answer, or exit 2)"))
	return c
}

const hookLong = `Reads the agent's hook payload on stdin and writes its answer on stdout,
in the agent's own format. A hook's defaults differ from askperm's:

  --timeout   50s (under the agents' 60s hook timeout), not 300s
  failures    never exit 64, 65, 69 or 70: a PermissionRequest gets a deny
              answer (exit 0), any other event exit 2, which blocks the
              call; so do --strict with no canned answer matching, a
              payload that is not the agent's, and a bad flag or setting
  the person  asked on the pane kept for approvals (askperm pane) or in a
              dialog, not on the agent's own terminal unless --tty names it

Exit status: 0 with an answer (or none, when the agent is to ask itself),
2 blocked.`

func newAgentHook(s cli.Streams, agent hook.Agent, short string) *cobra.Command {
	o := &decidingOptions{}
	c := &cobra.Command{
		Use:   agent.Name,
		Short: short,
		Long:  short + ".\n\n" + hookLong,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return failHook(s, agent, nil, fmt.Errorf("unexpected arguments %q", args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			o.AnswerSet = c.Flags().Changed("answer")
			return runHook(s, o, agent)
		},
	}
	registerDeciding(c, &o.Flags, &o.verbose)
	// A hook's defaults and failures are its own: a shorter deadline, and
	// a block where askperm would exit 69.
	c.Flags().Lookup("timeout").Usage = "deadline for the whole hook, reading stdin included (30s, 5m, or seconds; default 50s, under the agents' 60s hook timeout; 0 means the default)"
	c.Flags().Lookup("strict").Usage = "with --answers: block the call (a deny answer, or exit 2) when no canned answer matches, instead of asking"
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return failHook(s, agent, nil, err) })
	return c
}

// failHook ends a hook that could not decide, fail-closed for the event it
// serves: a PermissionRequest gets a deny answer on stdout and exit 0, as
// an exit status there only hands the question to the next approver; any
// other event gets the blocking exit status. An event that cannot be told
// gets both: the deny, which is safe to print as the agents read no answer
// on exit 2, and exit 2. payload is nil when it was not read yet: it is
// read then, to learn the event, unless stdin is a terminal (a person
// trying the command, no agent).
func failHook(s cli.Streams, agent hook.Agent, payload []byte, err error) error {
	if payload == nil && !isatty.IsTerminal(s.In.Fd()) {
		ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
		payload, _ = pipeline.Read(ctx, s.In, settings.DefaultMaxRequest)
		cancel()
	}
	err = fmt.Errorf("blocked: %w", err)
	event := hook.Event(payload)
	deny, ok := agent.Deny(event, "askperm: "+err.Error())
	if !ok && event == "" {
		deny, _ = agent.Deny("PermissionRequest", "askperm: "+err.Error())
	}
	if deny != nil {
		if _, werr := s.Decision.Write(deny); werr == nil && ok {
			return &cli.ExitError{Code: cli.ExitOK, Err: err}
		}
	}
	return &cli.ExitError{Code: exitBlock, Err: err}
}

func runHook(s cli.Streams, o *decidingOptions, agent hook.Agent) error {
	set, err := settings.Resolve(o.Flags, s.Getenv)
	if err != nil {
		return failHook(s, agent, nil, err)
	}
	if o.Timeout == "" {
		set.Timeout = min(set.Timeout, hookTimeout)
	}
	awayFromAgent(&set)
	ctx, stop, p := oneShot(s, set, o.verbose, func(c *pipeline.Config) {
		c.RuleNote = func(req *decision.Request, a form.Answer) string { return agent.RuleNote(req, a) }
	})
	defer stop()
	ctx, cancel := context.WithTimeoutCause(ctx, set.Timeout, pipeline.ErrTimeout)
	defer cancel()
	payload, err := pipeline.Read(ctx, s.In, set.MaxRequest)
	if err != nil {
		return failHook(s, agent, append([]byte{}, payload...), err) // what was read tells the event
	}
	answer, err := agent.Answer(ctx, p, payload)
	if err != nil {
		return failHook(s, agent, payload, err)
	}
	if _, err := s.Decision.Write(answer); err != nil {
		return &cli.ExitError{Code: exitBlock, Err: fmt.Errorf("blocked: writing the answer: %w", err)}
	}
	return nil
}

package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/hook"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/settings"
)

// exitBlock is the exit status that makes an agent's hook block the call:
// any other non-zero status lets the tool run. A panic outside the
// pipeline (which turns its own into denies) exits 2 as well, Go's status
// for a crash, so a crash blocks too.
const exitBlock = 2

// hookTimeout is a hook's deadline unless --timeout says otherwise:
// shorter than the agents' default hook timeouts (Claude Code's is 60 s),
// so askperm answers before the agent kills it, which would not block.
const hookTimeout = 50 * time.Second

func newHook(s streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook",
		Short: "Answer an agent's permission hook",
	}
	c.AddCommand(
		newAgentHook(s, hook.ClaudeCode, "Answer a Claude Code PreToolUse or PermissionRequest hook (exit 2 blocks on any failure)"),
		newAgentHook(s, hook.Codex, "Answer a Codex PermissionRequest hook (exit 2 blocks on any failure)"))
	return c
}

func newAgentHook(s streams, agent hook.Agent, short string) *cobra.Command {
	o := &decidingOptions{}
	c := &cobra.Command{
		Use:   agent.Name,
		Short: short,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return blocked(fmt.Errorf("unexpected arguments %q", args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			o.AnswerSet = c.Flags().Changed("answer")
			return runHook(s, o, agent)
		},
	}
	registerDeciding(c, &o.Flags, &o.verbose)
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return blocked(err) })
	return c
}

// blocked is an error that blocks the agent's call.
func blocked(err error) error {
	return &exitError{code: exitBlock, err: fmt.Errorf("blocked: %w", err)}
}

func runHook(s streams, o *decidingOptions, agent hook.Agent) error {
	set, err := settings.Resolve(o.Flags, s.getenv)
	if err != nil {
		return blocked(err)
	}
	if o.Timeout == "" {
		set.Timeout = min(set.Timeout, hookTimeout)
	}
	awayFromAgent(&set)
	ctx, stop, p := oneShot(s, set, o.verbose)
	defer stop()
	ctx, cancel := context.WithTimeoutCause(ctx, set.Timeout, pipeline.ErrTimeout)
	defer cancel()
	payload, err := pipeline.Read(ctx, s.in, set.MaxRequest)
	if err != nil {
		return blocked(err)
	}
	answer, err := agent.Answer(ctx, p, payload)
	if err != nil {
		return blocked(err)
	}
	if _, err := s.decision.Write(answer); err != nil {
		return blocked(fmt.Errorf("writing the answer: %w", err))
	}
	return nil
}

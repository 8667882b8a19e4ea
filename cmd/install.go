package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/setup"
)

type installOptions struct {
	project, user, dryRun bool
}

const installExample = `  askperm install claude-code            # ~/.claude/settings.json
  askperm install claude-code --project  # .claude/settings.local.json of this project
  askperm install codex --dry-run        # print the would-be ~/.codex/hooks.json`

// codexTrust is what Codex needs before it runs a hook askperm installed.
const codexTrust = `Codex runs a new or changed hook only once you trust it: start codex and open /hooks to review and trust askperm's.
codex exec never asks for approvals, so never runs the hook, unless approvals go to a reviewer: codex exec -c 'approval_policy="on-request"' -c 'approvals_reviewer="guardian_subagent"' (askperm's hook answers first, and its answer is final); trust the hook first, or pass --dangerously-bypass-hook-trust.`

func newInstall(s cli.Streams) *cobra.Command {
	o := &installOptions{}
	c := &cobra.Command{
		Use:   "install claude-code|codex",
		Short: "Add askperm's permission hook to Claude Code's or Codex's settings (merging, with a backup)",
		Long: `Add askperm's PermissionRequest hook, run by this askperm binary (its absolute path), to an agent's settings:
Claude Code's ~/.claude/settings.json (--user, the default) or the project's .claude/settings.local.json
(--project: personal and ignored by git, since the hook names this machine's binary); Codex's hooks.json in
$CODEX_HOME (default ~/.codex), or the project's .codex/hooks.json.

Everything else in the file is kept, in its order; the old file is copied to FILE.askperm-backup-TIME and
the new one written atomically with the old mode. A file that already runs "askperm hook AGENT" is left
alone, and a second install changes nothing. A symbolic link, or a file others may write, is refused.
What changed is said on stderr; --dry-run writes nothing and prints the would-be file on stdout.`,
		Example:   installExample,
		Args:      cobra.ExactArgs(1),
		ValidArgs: setup.Agents,
		RunE:      func(_ *cobra.Command, args []string) error { return runInstall(s, o, args[0]) },
	}
	c.Flags().BoolVar(&o.project, "project", false, "the current directory's project settings")
	c.Flags().BoolVar(&o.user, "user", false, "your own settings, for every project (the default)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "write nothing; print the would-be file on stdout")
	c.MarkFlagsMutuallyExclusive("project", "user")
	return c
}

func runInstall(s cli.Streams, o *installOptions, agent string) error {
	dir, err := os.Getwd()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	binary, err := os.Executable()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("this askperm's path: %w", err)}
	}
	path, err := setup.Place{Getenv: s.Getenv, Dir: dir}.InstallPath(agent, o.project)
	if err != nil {
		return cli.Usage("install: %v", err)
	}
	p, err := setup.NewPlan(path, agent, binary)
	if err != nil {
		if errors.Is(err, setup.ErrInlineHooks) { // the lines as they are, to be pasted
			cli.Warn(s.ErrOut, "install: "+err.Error())
			fmt.Fprint(s.ErrOut, setup.TOMLLines(binary))
			return &cli.ExitError{Code: cli.ExitUsage}
		}
		return cli.Usage("install: %v", err)
	}
	say := func(format string, args ...any) { cli.Warn(s.ErrOut, fmt.Sprintf(format, args...)) }
	switch {
	case p.After == nil:
		for _, f := range p.Present {
			say("%s already runs askperm's hook (%s: %s): nothing changed", path, f.Event, f.Command)
			if f.Binary != binary {
				say("that hook runs %s, not this askperm (%s)", f.Binary, binary)
			}
		}
	case o.dryRun:
		say("would add to %s, under hooks.%s:", path, setup.Event)
		plus(s, p.Added)
		if _, err := s.Decision.Write(p.After); err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: err}
		}
	default:
		backup, err := p.Write(time.Now())
		if err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("install: %s: %w", path, err)}
		}
		say("added to %s, under hooks.%s:", path, setup.Event)
		plus(s, p.Added)
		if backup != "" {
			say("the file as it was is in %s", backup)
		}
	}
	if agent == "codex" {
		cli.Warn(s.ErrOut, codexTrust)
	}
	return nil
}

// plus writes lines added to a file, diff-style, on stderr.
func plus(s cli.Streams, added []byte) {
	for _, l := range strings.Split(strings.TrimRight(string(added), "\n"), "\n") {
		fmt.Fprintf(s.ErrOut, "+ %s\n", l)
	}
}

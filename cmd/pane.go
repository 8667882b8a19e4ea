package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/tty"
)

// ttyAuto is the --tty value that asks on the pane kept for approvals when
// one runs, and on no terminal otherwise.
const ttyAuto = "auto"

type paneOptions struct {
	settings.Flags
}

func newPane(s streams) *cobra.Command {
	o := &paneOptions{}
	c := &cobra.Command{
		Use:   "pane",
		Short: "Keep this terminal for approvals: every askperm of yours asking with --tty auto (the hooks' default) asks here, one at a time",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runPane(s, o) },
	}
	c.Flags().StringVar(&o.StateDir, "state-dir", "", "where the pane announces itself (env ASKPERM_STATE_DIR; default $XDG_STATE_HOME/askperm)")
	c.Flags().StringVar(&o.Config, "config", "", "config file (env ASKPERM_CONFIG)")
	return c
}

// runPane announces the pane and holds its terminal, reading nothing from
// it, until a signal ends it.
func runPane(s streams, o *paneOptions) error {
	set, err := settings.Resolve(o.Flags, s.getenv)
	if err != nil {
		return usage("%v", err)
	}
	if set.StateDir == "" {
		return usage("no state directory: set --state-dir, ASKPERM_STATE_DIR or HOME")
	}
	path, err := tty.ControllingPath()
	if err != nil {
		return usage("askperm pane keeps its terminal for approvals: %v", err)
	}
	if err := os.MkdirAll(set.StateDir, 0o700); err != nil {
		return &exitError{code: exitInternal, err: err}
	}
	release, err := tty.AnnouncePane(set.StateDir, path)
	if err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("announcing the pane: %w", err)}
	}
	defer release()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// Said on the terminal itself, whatever stderr is.
	if term, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOCTTY, 0); err == nil {
		fmt.Fprintf(term, "askperm: %s is kept for approvals: prompts of every askperm of yours appear here, one at a time. Ctrl-C ends it.\r\n", path)
		term.Close()
	}
	<-ctx.Done()
	return nil
}

// awayFromAgent sets a helper whose caller owns the controlling terminal
// (a hook, the permission-prompt tool, the gate) to ask on the pane kept for
// approvals unless --tty names a terminal.
func awayFromAgent(set *settings.Settings) {
	if set.Prompt.TTY == "" {
		set.Prompt.TTY = ttyAuto
	}
}

// resolvePane turns --tty auto into the running pane's terminal or, with
// none, into no terminal frontends at all (the dialogs remain).
func resolvePane(set *settings.Settings) {
	if set.Prompt.TTY != ttyAuto {
		return
	}
	if path, ok := tty.FindPane(set.StateDir); ok && set.StateDir != "" {
		set.Prompt.TTY = path
		return
	}
	set.Prompt.TTY = ""
	set.Frontends = slices.DeleteFunc(slices.Clone(set.Frontends), func(f decision.Frontend) bool {
		return f == decision.FrontendTUI || f == decision.FrontendLine
	})
}

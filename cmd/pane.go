package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/tty"
)

// ttyAuto is the --tty value that asks on the pane kept for approvals when
// one runs, and on no terminal otherwise.
const ttyAuto = "auto"

type paneOptions struct {
	settings.Flags
	replace bool
}

// paneWatch is how often a pane checks that it is still the one announced.
const paneWatch = 250 * time.Millisecond

func newPane(s cli.Streams) *cobra.Command {
	o := &paneOptions{}
	c := &cobra.Command{
		Use:   "pane",
		Short: "Keep this terminal for approvals: every askperm of yours asking with --tty auto (the hooks' default) asks here, one at a time",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return runPane(s, o) },
	}
	c.Flags().StringVar(&o.StateDir, "state-dir", "", "where the pane announces itself (env ASKPERM_STATE_DIR; default $XDG_STATE_HOME/askperm)")
	c.Flags().StringVar(&o.Config, "config", "", "config file (env ASKPERM_CONFIG)")
	c.Flags().BoolVar(&o.replace, "replace", false, "take over from a pane already running (it says so on its terminal and ends)")
	return c
}

// runPane announces the pane and holds its terminal, reading nothing from
// it, until a signal ends it, or until another process takes over its
// announcement: helpers would then ask on another terminal, which the
// person must hear of here rather than wait for prompts that never come.
func runPane(s cli.Streams, o *paneOptions) error {
	set, err := settings.Resolve(o.Flags, s.Getenv)
	if err != nil {
		return cli.Usage("%v", err)
	}
	if set.StateDir == "" {
		return cli.Usage("no state directory: set --state-dir, ASKPERM_STATE_DIR or HOME")
	}
	path, err := tty.ControllingPath()
	if err != nil {
		return cli.Usage("askperm pane keeps its terminal for approvals: %v", err)
	}
	if err := os.MkdirAll(set.StateDir, 0o700); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	if live, ok := tty.FindPane(set.StateDir); ok && live.PID != os.Getpid() {
		if !o.replace {
			return cli.Usage("a pane already runs on %s (process %d): end it first, or take over with --replace", live.TTY, live.PID)
		}
		cli.Warn(s.ErrOut, fmt.Sprintf("taking over from the pane on %s (process %d)", live.TTY, live.PID))
	}
	release, err := tty.AnnouncePane(set.StateDir, path)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("announcing the pane: %w", err)}
	}
	defer release()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// Said on the terminal itself, whatever stderr is.
	sayOnPane(path, fmt.Sprintf("askperm: %s is kept for approvals: prompts of every askperm of yours appear here, one at a time. Ctrl-C ends it.", path))
	t := time.NewTicker(paneWatch)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now, ok := tty.Announced(set.StateDir)
		if ok && now.PID == os.Getpid() && now.TTY == path {
			continue
		}
		why := "its announcement was removed"
		if ok {
			why = fmt.Sprintf("process %d announced itself as the pane, on %s", now.PID, now.TTY)
		}
		msg := "askperm: this terminal no longer receives prompts: " + why +
			". If you did not start that, another program is redirecting your approvals: stop the agent and check."
		sayOnPane(path, "\a\x1b[1;7m"+msg+"\x1b[0m")
		return &cli.ExitError{Code: cli.ExitTakenOver, Err: errors.New(msg[len("askperm: "):])}
	}
}

// sayOnPane writes askperm's own line on the pane's terminal.
func sayOnPane(path, line string) {
	if term, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOCTTY, 0); err == nil {
		fmt.Fprint(term, line+"\r\n")
		term.Close()
	}
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
	if p, ok := tty.FindPane(set.StateDir); ok && set.StateDir != "" {
		set.Prompt.TTY = p.TTY
		return
	}
	set.Prompt.TTY = ""
	set.Frontends = slices.DeleteFunc(slices.Clone(set.Frontends), func(f decision.Frontend) bool {
		return f == decision.FrontendTUI || f == decision.FrontendLine
	})
}

package cmd

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/answers"
	"github.com/askperm/askperm/ask"
	"github.com/askperm/askperm/config"
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/prompt"
)

// askOptions are the deciding flags.
type askOptions struct {
	answer      string
	message     string
	answersFile string
	strict      bool
	timeout     string
	maxRequest  string
	exitStatus  bool
	frontend    string
	tty         string
	config      string
}

const (
	defaultTimeout    = 300 * time.Second
	defaultMaxRequest = 1 << 20
)

func (o *askOptions) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.answer, "answer", "", "answer without a human: allow-once, deny-once, allow-always, deny-always or allow-session")
	f.StringVar(&o.message, "message", "", "the denial reason given with --answer")
	f.StringVar(&o.answersFile, "answers", "", "canned answers file (TOML), first match wins")
	f.BoolVar(&o.strict, "strict", false, "exit 69 when no canned answer matches instead of asking")
	f.StringVar(&o.timeout, "timeout", "", "deadline for the whole request, reading stdin included (30s, 5m, or seconds; default 300s; 0 means the default)")
	f.StringVar(&o.maxRequest, "max-request", "1MiB", "largest request accepted (bytes, or with a KiB/MiB suffix)")
	f.BoolVar(&o.exitStatus, "exit-status", false, "exit 0 allow, 1 deny, 124 timeout, 130 cancelled (the decision is still written)")
	f.StringVar(&o.frontend, "frontend", "", "comma-separated frontend order: tui, line, yad, zenity, none (env ASKPERM_FRONTEND)")
	f.StringVar(&o.tty, "tty", "", "ask on this terminal instead of the controlling one (env ASKPERM_TTY)")
	f.StringVar(&o.config, "config", "", "config file (env ASKPERM_CONFIG; default $XDG_CONFIG_HOME/askperm/config.toml)")
}

// usage is an exit-64 error.
func usage(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func runAsk(s streams, o *askOptions) error {
	start := time.Now()
	cfg, cfgPath, err := loadConfig(s, o.config)
	if err != nil {
		return usage("config: %v", err)
	}
	timeout, err := parseTimeout(firstOf(o.timeout, cfg.Timeout, "0"))
	if err != nil {
		return usage("timeout: %v", err)
	}
	armDelay := prompt.DefaultArmDelay
	if cfg.ArmDelay != "" {
		if armDelay, err = time.ParseDuration(cfg.ArmDelay); err != nil || armDelay < 0 {
			return usage("%s: arm_delay: %q is not a duration such as 500ms", cfgPath, cfg.ArmDelay)
		}
	}
	maxRequest, err := parseSize(o.maxRequest)
	if err != nil {
		return usage("--max-request: %v", err)
	}
	if isatty.IsTerminal(s.in.Fd()) {
		return usage("stdin is a terminal: pipe one JSON request into askperm (see askperm --help)")
	}
	opts := ask.Options{Start: start, Strict: o.strict, Now: time.Now, Warn: func(m string) { warn(s.errOut, m) }}
	if o.answer != "" {
		e, err := answers.Single(o.answer, o.message)
		if err != nil {
			return usage("--answer: %v", err)
		}
		opts.Single = &e
	} else if o.message != "" {
		return usage("--message needs --answer")
	}
	if o.answersFile != "" {
		if opts.Answers, err = answers.Load(o.answersFile); err != nil {
			return usage("--answers: %v", err)
		}
	}
	names := prompt.DefaultOrder
	if list := firstOf(o.frontend, s.getenv("ASKPERM_FRONTEND"), strings.Join(cfg.Frontends, ",")); list != "" {
		if names, err = prompt.ParseList(list); err != nil {
			return usage("frontend: %v", err)
		}
	}
	opts.Chain = prompt.Chain(names, prompt.Options{
		TTY:         firstOf(o.tty, s.getenv("ASKPERM_TTY")),
		ArmDelay:    armDelay,
		Getenv:      s.getenv,
		DialogPaths: cfg.Dialogs,
	})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	ctx, cancel := context.WithDeadlineCause(ctx, start.Add(timeout), ask.ErrTimeout)
	defer cancel()
	ctx = watchCaller(ctx, s.decision)

	raw, err := ask.ReadRequest(ctx, s.in, maxRequest)
	if err != nil {
		return &exitError{code: exitRequest, err: err}
	}
	req, err := decision.Parse(raw)
	if err != nil {
		return &exitError{code: exitRequest, err: err}
	}
	return decide(ctx, s, req, opts, o.exitStatus)
}

// decide runs the pipeline on a valid request: from here on every outcome,
// a panic included, writes a decision.
func decide(ctx context.Context, s streams, req *decision.Request, opts ask.Options, exitStatus bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = write(s, decision.Denied(req, decision.CauseError, "none"), exitStatus,
				fmt.Errorf("internal error: %v", p))
		}
	}()
	d, err := ask.Decide(ctx, req, opts)
	switch {
	case errors.Is(err, ask.ErrNoMatch):
		return &exitError{code: exitNoMatch, err: err}
	case errors.Is(err, ask.ErrBadAnswer):
		return &exitError{code: exitUsage, err: err}
	}
	return write(s, d, exitStatus, err)
}

// write writes the decision in one write and returns its exit status; a
// non-nil failure makes it an internal error (exit 70).
func write(s streams, d decision.Decision, exitStatus bool, failure error) error {
	if _, err := s.decision.Write(decision.Encode(d)); err != nil {
		return &exitError{code: exitInternal, err: fmt.Errorf("writing the decision: %w", err)}
	}
	if failure != nil {
		return &exitError{code: exitInternal, err: failure}
	}
	code := statusOf(d, exitStatus)
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// statusOf is the exit status of a written decision.
func statusOf(d decision.Decision, exitStatus bool) int {
	switch {
	case !exitStatus || d.Decision == decision.Allow:
		return exitOK
	case d.Cause == decision.CauseTimeout:
		return exitTimeout
	case d.Cause == decision.CauseCancelled:
		return exitCancel
	default:
		return exitDeny
	}
}

// loadConfig reads the config file named by --config or ASKPERM_CONFIG, or
// the default one when it exists.
func loadConfig(s streams, flag string) (config.Config, string, error) {
	if p := firstOf(flag, s.getenv("ASKPERM_CONFIG")); p != "" {
		c, err := config.Load(p, false)
		return c, p, err
	}
	p := config.Path(s.getenv)
	if p == "" {
		return config.Config{}, "", nil
	}
	c, err := config.Load(p, true)
	return c, p, err
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

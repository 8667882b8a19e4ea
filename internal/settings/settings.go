// Package settings resolves askperm's settings once, into their types:
// each from its flag, else its environment variable, else config.toml,
// else its default. Every error names where the bad value came from
// ("--timeout: ...", "ASKPERM_FRONTEND: ...", "/home/a/.config/askperm/
// config.toml: timeout: ..."), and nothing below the command line reads
// flags, the environment or the config file again.
package settings

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/prompt"
)

// Defaults of the settings that have one.
const (
	DefaultTimeout     = 300 * time.Second
	DefaultMaxRequest  = 1 << 20
	DefaultSessionIdle = 24 * time.Hour
)

// Flags are the settings' flags as given on the command line; "" is not
// given.
type Flags struct {
	Timeout    string // --timeout
	MaxRequest string // --max-request
	Frontend   string // --frontend
	TTY        string // --tty
	Config     string // --config

	Rules      []string // --rules, repeatable
	StateDir   string   // --state-dir
	NoRemember bool     // --no-remember

	Answer      string // --answer
	AnswerSet   bool   // --answer was given, even empty
	Message     string // --message
	AnswersFile string // --answers
	Strict      bool   // --strict
}

// Settings are the resolved settings.
type Settings struct {
	// Timeout is askperm's deadline for one request, reading it included.
	Timeout time.Duration
	// MaxRequest is the largest request accepted, in bytes.
	MaxRequest int64
	// Frontends is the frontend chain, in order.
	Frontends []decision.Frontend
	// Prompt configures the frontends: terminal, arming delay, dialog
	// programs, and the caller's environment they read (TERM, DISPLAY, ...).
	Prompt prompt.Options
	// StateDir is where askperm remembers across requests; "" when no
	// place is known or remembering is off.
	StateDir string
	// SessionIdle is how long a session approval lives unused.
	SessionIdle time.Duration
	// Breaker is the denial breaker's thresholds, per session and per
	// user.
	Breaker state.Breaker
	// Prompts is the prompt rate limit, per session and per user.
	Prompts state.Rate
	// Policy is every rules file loaded: the user's rules.toml and each
	// --rules.
	Policy *policy.Policy
	// Answers are the canned answers of --answer or --answers; nil: none.
	Answers *answers.File
	// Strict makes a request no canned answer matches a script's mistake.
	Strict bool
	// Reviewers are config.toml's reviewers, in order; nil: none.
	Reviewers *reviewer.Chain
	// Team is team mode's configuration, checked; nil without [team].
	Team *team.Config
	// Notify is [notify]: what runs when a question waits for a person.
	Notify *notify.Config
}

// Resolve resolves the settings from flags, the environment (read through
// getenv) and the config file: --config, else ASKPERM_CONFIG, else the
// default location when the file exists.
func Resolve(f Flags, getenv func(string) string) (Settings, error) {
	canned, err := f.cannedAnswers()
	if err != nil {
		return Settings{}, err
	}
	path, cfg, err := loadConfig(f.Config, getenv)
	if err != nil {
		return Settings{}, err
	}
	// key is a value of the config file.
	key := func(name, value string) from { return from{path + ": " + name, value} }
	s := Settings{
		Answers:     canned,
		Strict:      f.Strict,
		SessionIdle: DefaultSessionIdle,
		Breaker:     state.DefaultBreaker,
		Prompts:     state.DefaultRate,
		Timeout:     DefaultTimeout,
		MaxRequest:  DefaultMaxRequest,
		Frontends:   prompt.DefaultOrder,
		Prompt: prompt.Options{
			ArmDelay:    prompt.DefaultArmDelay,
			Getenv:      getenv,
			DialogPaths: cfg.Dialogs,
			Bell:        cfg.Bell,
		},
	}
	str := func(s string) (string, error) { return s, nil }
	err = firstError(
		pick(&s.Timeout, ParseTimeout, from{"--timeout", f.Timeout}, key("timeout", string(cfg.Timeout))),
		pick(&s.MaxRequest, ParseSize, from{"--max-request", f.MaxRequest}),
		pick(&s.Frontends, prompt.ParseList, from{"--frontend", f.Frontend},
			from{"ASKPERM_FRONTEND", getenv("ASKPERM_FRONTEND")}, key("frontends", strings.Join(cfg.Frontends, ","))),
		pick(&s.Prompt.TTY, str, from{"--tty", f.TTY}, from{"ASKPERM_TTY", getenv("ASKPERM_TTY")}),
		pick(&s.Prompt.ArmDelay, armDelay, key("arm_delay", string(cfg.ArmDelay))),
		pick(&s.StateDir, absolute, from{"--state-dir", f.StateDir}, from{"ASKPERM_STATE_DIR", getenv("ASKPERM_STATE_DIR")},
			key("state.dir", cfg.State.Dir), from{"XDG state directory", StateDir(getenv)}),
		pick(&s.SessionIdle, ParseDuration, key("state.session_idle", string(cfg.State.SessionIdle))),
		count(&s.Breaker.Session.Consecutive, key("breaker.consecutive", ""), cfg.Breaker.Consecutive),
		count(&s.Breaker.Session.Window, key("breaker.window", ""), cfg.Breaker.Window),
		count(&s.Breaker.Session.Within, key("breaker.within", ""), cfg.Breaker.Within),
		count(&s.Breaker.User.Consecutive, key("breaker.user_consecutive", ""), cfg.Breaker.UserConsecutive),
		count(&s.Breaker.User.Window, key("breaker.user_window", ""), cfg.Breaker.UserWindow),
		count(&s.Breaker.User.Within, key("breaker.user_within", ""), cfg.Breaker.UserWithin),
		count(&s.Prompts.Session, key("limits.prompts_per_minute", ""), cfg.Limits.PromptsPerMinute),
		count(&s.Prompts.User, key("limits.prompts_per_minute_user", ""), cfg.Limits.PromptsPerMinuteUser),
	)
	if err == nil {
		s.Reviewers, err = reviewers(path, cfg.Reviewers)
	}
	if err == nil && cfg.Team != nil {
		s.Team, err = resolveTeam(*cfg.Team, s.StateDir)
		if err != nil {
			err = fmt.Errorf("%s: team.%w", path, err)
		}
	}
	s.Notify = resolveNotify(cfg, s.Team)
	if f.NoRemember || cfg.State.Remember != nil && !*cfg.State.Remember {
		s.StateDir = ""
	}
	// The compiled cache of the rules files lives beside the state.
	pol, perr := policy.Load(RulesPath(getenv), f.Rules, s.StateDir)
	if perr != nil {
		return Settings{}, fmt.Errorf("rules: %w", perr)
	}
	s.Policy = pol
	return s, err
}

// resolveTeam is the [team] table t with its defaults: the host's name
// (the first label of its hostname), prefix, replicas, and the approver
// key in the state directory stateDir. Files must be named absolutely.
func resolveTeam(t Team, stateDir string) (*team.Config, error) {
	c := &team.Config{
		URL: t.URL, Creds: t.Creds, Host: t.Host, Approvers: t.Approvers,
		Prefix: cmp.Or(t.Prefix, team.DefaultPrefix), Replicas: team.DefaultReplicas, Key: t.Key,
		Program: t.Program,
	}
	if t.Replicas != nil {
		c.Replicas = *t.Replicas
	}
	if c.Host == "" {
		name, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("host: not set, and the hostname is unknown: %w", err)
		}
		c.Host, _, _ = strings.Cut(name, ".")
		if team.CheckHost(c.Host) != nil {
			return nil, fmt.Errorf("host: not set, and the hostname %q is no host name (%w); set one", name, team.CheckHost(c.Host))
		}
	}
	if c.Key == "" && stateDir != "" {
		c.Key = filepath.Join(stateDir, team.KeyFile)
	}
	for _, f := range []from{{"creds", c.Creds}, {"key", c.Key}} {
		if f.value != "" && !filepath.IsAbs(f.value) {
			return nil, fmt.Errorf("%s: %q is not an absolute path", f.source, f.value)
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// resolveNotify is [notify] of cfg: its command, and the host named as
// team mode names it (t, nil without [team]), else by its hostname. The
// command's program is checked when it runs: a missing or unsafe one is
// a warning then, never an error that would stop a decision.
func resolveNotify(cfg Config, t *team.Config) *notify.Config {
	n := &notify.Config{Host: notify.Hostname()}
	if t != nil {
		n.Host = t.Host
	}
	if c := cfg.Notify.Command; c != nil {
		n.Command, n.Off = *c, len(*c) == 0
	}
	return n
}

// count stores a count of the config file, when it gives one, in dst;
// a negative one is an error naming its key.
func count(dst *int, at from, v *int) error {
	switch {
	case v == nil:
	case *v < 0:
		return fmt.Errorf("%s: %d is negative", at.source, *v)
	default:
		*dst = *v
	}
	return nil
}

// cannedAnswers are the canned answers the flags give, nil for none. The
// flags must mean one thing: one source of answers, --strict only with a
// file to be strict about, --message only with --answer.
func (f Flags) cannedAnswers() (*answers.File, error) {
	switch {
	case f.AnswerSet && f.AnswersFile != "":
		return nil, errors.New("--answer and --answers: give one or the other")
	case f.Strict && f.AnswersFile == "":
		return nil, errors.New("--strict needs --answers")
	case f.Message != "" && !f.AnswerSet:
		return nil, errors.New("--message needs --answer")
	case f.AnswerSet:
		if f.Answer == "" {
			return nil, errors.New("--answer: empty; give allow-once, deny-once, allow-always, deny-always or allow-session")
		}
		a, err := answers.Single(f.Answer, f.Message)
		if err != nil {
			return nil, fmt.Errorf("--answer: %w", err)
		}
		return a, nil
	case f.AnswersFile != "":
		a, err := answers.Load(f.AnswersFile)
		if err != nil {
			return nil, fmt.Errorf("--answers: %w", err)
		}
		return a, nil
	}
	return nil, nil
}

// from is a value and where it came from: a flag, a variable, or a key
// of the config file.
type from struct{ source, value string }

// pick parses the first value given, strongest source first, into dst,
// and names its source in the error. A weaker value is not looked at: a
// flag mends a bad variable.
func pick[T any](dst *T, parse func(string) (T, error), vs ...from) error {
	for _, v := range vs {
		if v.value == "" {
			continue
		}
		t, err := parse(v.value)
		if err != nil {
			return fmt.Errorf("%s: %w", v.source, err)
		}
		*dst = t
		return nil
	}
	return nil
}

// armDelay reads arm_delay; "0s" turns the delay off, which a zero
// prompt.Options would not.
func armDelay(v string) (time.Duration, error) {
	d, err := ParseDuration(v)
	if err == nil && d == 0 {
		d = prompt.NoArmDelay
	}
	return d, err
}

// absolute takes an absolute path: a relative state directory would
// depend on where the caller happened to start askperm.
func absolute(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	return filepath.Clean(p), nil
}

// RulesPath is the user's rules file, beside config.toml; "" when no
// place is known.
func RulesPath(getenv func(string) string) string {
	if p := Path(getenv); p != "" {
		return filepath.Join(filepath.Dir(p), "rules.toml")
	}
	return ""
}

// StateDir is the default state directory: $XDG_STATE_HOME/askperm, else
// ~/.local/state/askperm; "" when neither is known.
func StateDir(getenv func(string) string) string {
	dir := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) { // the XDG spec: relative values are ignored
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "askperm")
}

// firstError is the first of errs that is not nil: a diagnostic is one
// line, and the first bad value is the one to mend first.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// loadConfig reads the config file named by --config or ASKPERM_CONFIG,
// or the default one when it exists. It returns the path ("" for none).
func loadConfig(flag string, getenv func(string) string) (string, Config, error) {
	named, by := flag, "--config"
	if named == "" {
		named, by = getenv("ASKPERM_CONFIG"), "ASKPERM_CONFIG"
	}
	if named != "" {
		c, err := Load(named, false)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%s %s: no such file (the config file %s names must exist)", by, named, by)
		}
		return named, c, err
	}
	p := Path(getenv)
	if p == "" {
		return "", Config{}, nil
	}
	c, err := Load(p, true)
	return p, c, err
}

// ChoiceNames are the choices --answer takes, for completion and help.
func ChoiceNames() []string {
	names := make([]string, len(answers.Choices))
	for i, c := range answers.Choices {
		names[i] = string(c)
	}
	return names
}

// FrontendNames are the frontends --frontend lists, for completion.
func FrontendNames() []string {
	names := make([]string, len(prompt.Names))
	for i, f := range prompt.Names {
		names[i] = string(f)
	}
	return names
}

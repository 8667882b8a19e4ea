package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/pelletier/go-toml/v2"
	xterm "golang.org/x/term"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/tty"
	"github.com/askperm/askperm/internal/userfile"
	"github.com/askperm/askperm/prompt"
	"github.com/askperm/askperm/prompt/dialog"
)

// Status is a check's outcome.
type Status string

// The outcomes: fine, worth a look, broken.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one line of askperm doctor.
type Check struct {
	Name   string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // what to do, when not ok
}

// storeWait bounds how long doctor waits for the store's lock: it says
// that it is locked rather than wait as a request would.
const storeWait = time.Second

// Chain is a frontend chain as a request would resolve it.
type Chain struct {
	Frontends []decision.Frontend
	Prompt    prompt.Options
}

// Doctor is what the checks look at.
type Doctor struct {
	Getenv   func(string) string
	Place    Place
	StateDir string // "" when none is known or remembering is off
	Dialogs  map[string]string
	Self     string // the running askperm binary
	// Here is the chain of askperm run in this terminal, Away that of the
	// hooks, the gate and askperm mcp (--tty auto, resolved).
	Here, Away Chain
	// Team, Notify and Reviewers are config.toml's [team], [notify] and
	// [[reviewer]]; nil when absent or when the config does not load.
	Team      *team.Config
	Notify    *notify.Config
	Reviewers []settings.Reviewer
	// FindTeam finds askperm-team; nil is team.FindProgram.
	FindTeam func(configured string) (string, error)
}

// Defaults are the settings doctor checks with when the user's config or
// rules cannot be loaded (their checks say why).
func Defaults(getenv func(string) string) settings.Settings {
	return settings.Settings{Frontends: prompt.DefaultOrder, StateDir: settings.StateDir(getenv),
		Prompt: prompt.Options{ArmDelay: prompt.DefaultArmDelay, Getenv: getenv}}
}

// Run runs every check, in the order a person would mend them.
func (d Doctor) Run(ctx context.Context) []Check {
	cs := []Check{d.terminal(), d.term(), d.display()}
	for _, name := range []string{"yad", "zenity"} {
		cs = append(cs, d.dialogProgram(name))
	}
	cs = append(cs, d.pane(), d.stateDir(), d.store(ctx), d.config(), d.rules(), d.teamCheck(), d.notifyCheck())
	cs = append(cs, d.reviewerChecks()...)
	for _, agent := range Agents {
		cs = append(cs, d.hooks(agent)...)
	}
	return append(cs,
		d.frontends("frontends here", d.Here),
		d.frontends("frontends of hooks, gate and mcp", d.Away))
}

func (d Doctor) terminal() Check {
	c := Check{Name: "terminal"}
	t, err := tty.Open("")
	if err != nil {
		c.Status, c.Detail = Warn, why(err)
		c.Fix = "the terminal UI and the line prompt cannot ask from here; run askperm from a terminal, or keep one with askperm pane"
		return c
	}
	defer t.Close()
	c.Status, c.Detail = OK, "/dev/tty, with askperm in its foreground"
	if w, h, err := xterm.GetSize(int(t.Fd())); err == nil {
		c.Detail += fmt.Sprintf(", %dx%d", w, h)
	}
	return c
}

func (d Doctor) term() Check {
	switch t := d.Getenv("TERM"); t {
	case "":
		return Check{Name: "TERM", Status: Warn, Detail: "not set: no terminal UI, only the line prompt", Fix: "set TERM (e.g. xterm-256color)"}
	case "dumb":
		return Check{Name: "TERM", Status: OK, Detail: "dumb: the line prompt, no full-screen terminal UI"}
	default:
		return Check{Name: "TERM", Status: OK, Detail: safe(t) + ": the terminal UI can run"}
	}
}

func (d Doctor) display() Check {
	for _, k := range []string{"WAYLAND_DISPLAY", "DISPLAY"} {
		if v := d.Getenv(k); v != "" {
			return Check{Name: "display", Status: OK, Detail: k + "=" + safe(v)}
		}
	}
	return Check{Name: "display", Status: Warn, Detail: "neither DISPLAY nor WAYLAND_DISPLAY is set: no dialogs",
		Fix: "run askperm in a desktop session for yad or zenity dialogs"}
}

func (d Doctor) dialogProgram(name string) Check {
	p, err := dialog.Program(name, d.Dialogs[name])
	if err != nil {
		return Check{Name: name, Status: Warn, Detail: why(err),
			Fix: "install " + name + " (or set [dialogs] " + name + " in config.toml) for its dialogs"}
	}
	return Check{Name: name, Status: OK, Detail: p}
}

func (d Doctor) pane() Check {
	c := Check{Name: "pane"}
	if d.StateDir == "" {
		c.Status, c.Detail = Warn, "no state directory, so no pane can be found"
		return c
	}
	if p, ok := tty.FindPane(d.StateDir); ok {
		c.Status, c.Detail = OK, fmt.Sprintf("askperm pane runs on %s (process %d): hooks ask there", p.TTY, p.PID)
		return c
	}
	c.Status, c.Detail = Warn, "no askperm pane runs: hooks ask through a dialog, else hand the question back to the agent"
	c.Fix = "run askperm pane in a spare terminal pane or tab"
	return c
}

func (d Doctor) stateDir() Check {
	c := Check{Name: "state directory"}
	if d.StateDir == "" {
		c.Status, c.Detail = Warn, "none: askperm remembers nothing (no HOME, or remembering is off)"
		return c
	}
	fi, err := os.Lstat(d.StateDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Detail = OK, d.StateDir+": not made yet (askperm makes it, mode 0700, when it first remembers)"
		return c
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch perm := fi.Mode().Perm(); {
	case !fi.IsDir():
		c.Status, c.Detail = Fail, d.StateDir+": not a directory"
	case st == nil || int(st.Uid) != os.Geteuid():
		c.Status, c.Detail = Fail, d.StateDir+": owned by someone else"
	case perm&0o022 != 0:
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: mode %#o: others may write it, so askperm refuses it", d.StateDir, perm)
		c.Fix = "chmod 700 " + d.StateDir
	case perm&0o077 != 0:
		c.Status, c.Detail = Warn, fmt.Sprintf("%s: mode %#o: others may read what you approved", d.StateDir, perm)
		c.Fix = "chmod 700 " + d.StateDir
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("%s, mode %#o", d.StateDir, perm)
	}
	return c
}

// store opens the store when it exists, waiting for its lock no longer
// than storeWait allows (state.Open waits half of it).
func (d Doctor) store(ctx context.Context) Check {
	c := Check{Name: "store"}
	if d.StateDir == "" {
		c.Status, c.Detail = OK, "none"
		return c
	}
	db := filepath.Join(d.StateDir, state.DBName)
	if _, err := os.Lstat(db); errors.Is(err, fs.ErrNotExist) {
		c.Status, c.Detail = OK, db+": not made yet"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	s, err := state.Open(ctx, d.StateDir)
	switch {
	case errors.Is(err, state.ErrLocked):
		c.Status, c.Detail = Fail, err.Error()
		c.Fix = "another askperm holds it: end the one that hangs (askperm pane does not hold it)"
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
	default:
		s.Close()
		c.Status, c.Detail = OK, db+": opens"
	}
	return c
}

func (d Doctor) config() Check {
	c := Check{Name: "config"}
	path := ConfigPath(d.Getenv)
	if path == "" {
		c.Status, c.Detail = OK, "none (no HOME): defaults"
		return c
	}
	return loaded(c, path, func() error { _, err := settings.Load(path, false); return err })
}

// ConfigPath is the config file askperm reads without --config:
// ASKPERM_CONFIG, else the default; "" when there is none (no HOME).
func ConfigPath(getenv func(string) string) string {
	if named := getenv("ASKPERM_CONFIG"); named != "" {
		return named
	}
	return settings.Path(getenv)
}

func (d Doctor) rules() Check {
	path := settings.RulesPath(d.Getenv)
	c := Check{Name: "rules"}
	if path == "" {
		c.Status, c.Detail = OK, "none (no HOME)"
		return c
	}
	return loaded(c, path, func() error { _, err := policy.Load(path, nil, ""); return err })
}

// loaded is c for a user file at path that load reads.
func loaded(c Check, path string, load func() error) Check {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		c.Status, c.Detail = OK, path+": none (optional)"
		return c
	}
	if err := load(); err != nil {
		c.Status, c.Detail = Fail, err.Error()
		c.Fix = "mend " + path + ": askperm refuses to run with it (exit 64)"
		return c
	}
	c.Status, c.Detail = OK, path+": loads"
	return c
}

// hooks reports every askperm hook in agent's files, and whether its
// program exists.
func (d Doctor) hooks(agent string) []Check {
	name := agent + " hook"
	var cs []Check
	var looked []string
	for _, f := range d.Place.Files(agent) {
		b, err := userfile.Read(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		looked = append(looked, f.Path)
		var doc map[string]any
		if err == nil && f.TOML {
			err = toml.Unmarshal(b, &doc)
		} else if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil {
			cs = append(cs, Check{Name: name, Status: Fail, Detail: fmt.Sprintf("%s: %v", f.Path, err), Fix: "mend the file: " + agent + " may not read it either"})
			continue
		}
		for _, h := range Hooks(doc, agent, d.Self) {
			cs = append(cs, d.hook(name, f.Path, h))
		}
	}
	if len(cs) == 0 {
		detail := "no settings file runs askperm hook " + agent
		if len(looked) > 0 {
			detail += " (read " + strings.Join(looked, ", ") + ")"
		}
		cs = append(cs, Check{Name: name, Status: Warn, Detail: detail, Fix: "askperm install " + agent})
	}
	return cs
}

func (d Doctor) hook(name, path string, h Found) Check {
	c := Check{Name: name, Detail: fmt.Sprintf("%s: %s runs %s", path, safe(h.Event), safe(h.Command))}
	bin := h.Binary
	if !filepath.IsAbs(bin) {
		found, err := exec.LookPath(bin)
		if err != nil {
			c.Status, c.Fix = Fail, safe(bin)+" is not on PATH: askperm install "+strings.TrimSuffix(name, " hook")+" writes this binary's absolute path"
			return c
		}
		bin = found
	}
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		c.Status, c.Fix = Fail, safe(bin)+" is no program: the agent cannot run the hook; askperm install again"
		return c
	}
	c.Status = OK
	if strings.HasPrefix(name, "codex") {
		c.Detail += " (Codex runs it once trusted: /hooks in codex)"
	}
	return c
}

// frontends says what the chain would do now: the first frontend that can
// start, after why each before it cannot.
func (d Doctor) frontends(name string, ch Chain) Check {
	c := Check{Name: name}
	var skipped []string
	for _, f := range ch.Frontends {
		where, err := d.ready(f, ch.Prompt)
		if err == nil {
			c.Status, c.Detail = OK, string(f)+" would ask "+where
			if len(skipped) > 0 {
				c.Detail += " (" + strings.Join(skipped, "; ") + ")"
			}
			return c
		}
		skipped = append(skipped, string(f)+": "+why(err))
	}
	c.Status, c.Detail = Warn, "nobody can be asked: a request is denied, a hook hands the question back to the agent"
	if len(skipped) > 0 {
		c.Detail += " (" + strings.Join(skipped, "; ") + ")"
	}
	c.Fix = "run askperm pane, or work where a display is"
	return c
}

// ready reports whether frontend f could start now, and where it would
// ask, by the checks each makes before it asks.
func (d Doctor) ready(f decision.Frontend, o prompt.Options) (string, error) {
	switch f {
	case decision.FrontendTUI, decision.FrontendLine:
		if t := o.Env("TERM"); f == decision.FrontendTUI && (t == "" || t == "dumb") {
			return "", errors.New("TERM is empty or dumb")
		}
		t, err := tty.Open(o.TTY)
		if err != nil {
			return "", err
		}
		t.Close()
		return "on " + t.Name(), nil
	case decision.FrontendYad, decision.FrontendZenity:
		if o.Env("DISPLAY") == "" && o.Env("WAYLAND_DISPLAY") == "" {
			return "", errors.New("no display")
		}
		p, err := dialog.Program(string(f), o.DialogPaths[string(f)])
		return "in a dialog (" + p + ")", err
	case decision.FrontendTeam:
		if d.Team == nil {
			return "", errors.New("no [team] in config.toml")
		}
		if _, err := d.findTeam(d.Team.Program); err != nil {
			return "", err
		}
		if len(d.Team.Approvers) == 0 {
			return "", team.ErrNoApprovers
		}
		return fmt.Sprintf("the team: host %s's question goes to %d trusted approvers (server not contacted)", safe(d.Team.Host), len(d.Team.Approvers)), nil
	}
	return "", errors.New("asks no one")
}

// safe is s as shown on a terminal: quoted when it holds anything not
// printable.
func safe(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// why is err's text without the ErrUnavailable every frontend's reason
// ends with.
func why(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+prompt.ErrUnavailable.Error())
}

package setup

import (
	"errors"
	"fmt"
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/userfile"
)

// teamCheck reports team mode: the askperm-team program it would run, as
// the team frontend finds it, the host and the trusted approvers. It never
// contacts the server, so doctor stays fast and works offline.
func (d Doctor) teamCheck() Check {
	c := Check{Name: "team"}
	t := d.Team
	if t == nil {
		c.Status, c.Detail = OK, "off: no [team] in config.toml"
		return c
	}
	where := fmt.Sprintf("host %s, %d trusted approvers, server %s (not contacted)", safe(t.Host), len(t.Approvers), safe(t.URL))
	p, err := d.findTeam(t.Program)
	if err == nil && t.Program != "" { // FindProgram trusts [team] program as checked at load
		if err = userfile.Program(p); err != nil {
			err = fmt.Errorf("[team] program %s refused: %w", safe(p), err)
		}
	}
	switch {
	case err != nil:
		c.Status, c.Detail = Fail, safe(why(err))+"; "+where
		c.Fix = "the team frontend refuses to ask; install " + team.ProgramName + " beside askperm, or set [team] program"
	case len(t.Approvers) == 0:
		c.Status, c.Detail = Fail, safe(p)+"; "+where
		c.Fix = team.ErrNoApprovers.Error()
	default:
		c.Status, c.Detail = OK, safe(p)+": trusted; "+where
	}
	return c
}

// findTeam is team.FindProgram, or the test's stand-in.
func (d Doctor) findTeam(configured string) (string, error) {
	if d.FindTeam != nil {
		return d.FindTeam(configured)
	}
	return team.FindProgram(configured)
}

// notifyCheck reports [notify]: the configured program and whether askperm
// would trust it, else the default notify-send and what it needs, else off.
func (d Doctor) notifyCheck() Check {
	c := Check{Name: "notify"}
	n := d.Notify
	switch {
	case n == nil || n.Off:
		c.Status, c.Detail = OK, "off: nothing runs when a question waits"
	case n.Command != nil:
		if err := userfile.Program(n.Command[0]); err != nil {
			c.Status, c.Detail = Fail, safe(n.Command[0])+": "+safe(err.Error())
			c.Fix = "[notify] command: name a program only you may write"
			return c
		}
		c.Status, c.Detail = OK, safe(n.Command[0])+": trusted; runs whenever a question waits for a person"
	default:
		display := d.Getenv("DISPLAY") != "" || d.Getenv("WAYLAND_DISPLAY") != ""
		bus := d.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" || d.Getenv("XDG_RUNTIME_DIR") != ""
		var missing []string
		if !display {
			missing = append(missing, "no display")
		}
		if !bus {
			missing = append(missing, "no D-Bus session")
		}
		if p := n.For(decision.FrontendYad, true, d.Getenv); p != nil {
			c.Status, c.Detail = OK, "default: "+p.Argv[0]+" for a dialog or a question asked on another terminal"
			return c
		}
		if len(missing) == 0 {
			missing = append(missing, "notify-send not found in /usr/bin nor /usr/local/bin")
		}
		c.Status, c.Detail = Warn, "default notify-send, which cannot run here: "+strings.Join(missing, ", ")
		c.Fix = "install notify-send and work in a desktop session, or set [notify] command (command = [] for none)"
	}
	return c
}

// reviewerChecks reports each [[reviewer]]: its program, whether askperm
// trusts it, its timeout and the requests it reviews.
func (d Doctor) reviewerChecks() []Check {
	if len(d.Reviewers) == 0 {
		return []Check{{Name: "reviewers", Status: OK, Detail: "none"}}
	}
	cs := make([]Check, 0, len(d.Reviewers))
	for _, r := range d.Reviewers {
		cs = append(cs, reviewerCheck(r))
	}
	return cs
}

func reviewerCheck(r settings.Reviewer) Check {
	c := Check{Name: "reviewer " + safe(r.Name)}
	timeout := reviewer.DefaultTimeout.String() + " (default)"
	if r.Timeout != "" {
		timeout = safe(string(r.Timeout))
	}
	var scope []string
	for _, g := range []struct {
		key  string
		glob *string
	}{{"tool", r.Tool}, {"server", r.Server}, {"action", r.Action}} {
		if g.glob != nil {
			scope = append(scope, g.key+"="+safe(*g.glob))
		}
	}
	scoped := "every request"
	if len(scope) > 0 {
		scoped = strings.Join(scope, " ")
	}
	var err error
	program := "(none)"
	if len(r.Command) == 0 {
		err = errors.New("command: missing")
	} else {
		program = safe(r.Command[0])
		err = userfile.Program(r.Command[0])
	}
	rest := fmt.Sprintf("timeout %s, reviews %s", timeout, scoped)
	if err != nil {
		c.Status, c.Detail = Fail, program+": "+safe(err.Error())+"; "+rest
		c.Fix = "name a program only you may write: askperm refuses config.toml until then"
		return c
	}
	c.Status, c.Detail = OK, program+": trusted; "+rest
	return c
}

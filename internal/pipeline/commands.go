package pipeline

import (
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/shell"
)

// Command is one simple command of a command line (a dimension of syntax
// shell) and the opinions that speak of it (protocol section 10).
type Command struct {
	// Text is the command as written, its assignments first and the
	// files it writes last.
	Text string
	// Opaque says in words what of it is not known before it runs; ""
	// when all of it is.
	Opaque string
	// Opinions are the opinions that speak of it, in order.
	Opinions []policy.Opinion
}

// commandsOf are the simple commands of each command line of req, by
// dimension name, with the opinions of ops that speak of each.
func commandsOf(req *decision.Request, ops []policy.Opinion) map[string][]Command {
	var out map[string][]Command
	for _, d := range req.Dimensions {
		if !d.IsShell() {
			continue
		}
		l := shell.Of(d)
		cmds := make([]Command, len(l.Commands))
		for k, c := range l.Commands {
			cmds[k] = Command{Text: textOf(c), Opaque: opaqueOf(l, c)}
			for _, o := range ops {
				if o.Covers(d.Name, k) {
					o.Commands = nil // of this command, it is a whole opinion
					cmds[k].Opinions = append(cmds[k].Opinions, o)
				}
			}
		}
		if out == nil {
			out = map[string][]Command{}
		}
		out[d.Name] = cmds
	}
	return out
}

// textOf is c as the person is shown it, what a matcher judges of it
// (shell.Command.MatchText) and its assignments: the assignments, c as
// written (its known words in a rough reading), then each file it writes
// (`echo hi >> /home/u/.bashrc`). A redirection with no command is
// written as it stands.
func textOf(c shell.Command) string {
	text := c.Text
	if text == "" {
		text = strings.Join(c.Words, " ")
	}
	parts := append(append([]string(nil), c.Assigns...), text)
	if len(c.Words) > 0 {
		for _, r := range c.Redirects {
			parts = append(parts, r.Op+" "+r.Target)
		}
	}
	return strings.Join(parts, " ")
}

// opaqueOf says what of c is not known before it runs, "" when all is.
func opaqueOf(l shell.Line, c shell.Command) string {
	switch {
	case l.Parsed && c.Static():
		return ""
	case c.Why != "":
		return c.Why
	case !l.Parsed:
		return "the line does not parse"
	}
	return "not known before it runs"
}

// formCommands are commandsOf for the form: each command with what
// decided it, the strictest opinion speaking of it.
func formCommands(req *decision.Request, ops []policy.Opinion) map[string][]form.Command {
	var out map[string][]form.Command
	for name, cmds := range commandsOf(req, ops) {
		list := make([]form.Command, len(cmds))
		for k, c := range cmds {
			list[k] = form.Command{Text: c.Text, Opaque: c.Opaque}
			if len(c.Opinions) > 0 {
				v, winners := policy.Combine(c.Opinions)
				list[k].Verdict, list[k].DecidedBy = v.String(), winners[0].Name
			}
		}
		if out == nil {
			out = map[string][]form.Command{}
		}
		out[name] = list
	}
	return out
}

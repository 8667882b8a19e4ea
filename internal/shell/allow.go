package shell

import "strings"

// Redirect is an output redirection of a command to a file: its operator
// (`>`, `>>`, `>|`, `&>`, `&>>`) and its target as written.
type Redirect struct {
	Op, Target string
}

// MatchText is the text a matcher over a command line judges for this
// command (protocol section 10): its words joined by one space, then its
// output redirections to files (`echo x > /home/a/.bashrc`).
func (c Command) MatchText() string {
	var b strings.Builder
	b.WriteString(strings.Join(c.Words, " "))
	for _, r := range c.Redirects {
		b.WriteString(" " + r.Op + " " + r.Target)
	}
	return b.String()
}

// Static says the command is wholly known before the line runs: an allow
// may cover it.
func (c Command) Static() bool { return !c.Opaque && !c.Computed && !c.Inner && c.Text != "" }

// Allowed reports whether an allow covers l (protocol section 10): l
// parsed, holds a command, and every command is Static and covered by
// covers, given the command's MatchText; a Wrapper (`bash -c 'ls'`) is a
// command like any, as the rules and remembered allows judge it. A line
// running no command (empty, assignments, comments) is allowed by
// nothing.
func (l Line) Allowed(covers func(text string) bool) bool {
	if !l.Parsed || len(l.Commands) == 0 {
		return false
	}
	for _, c := range l.Commands {
		if !c.Static() || !covers(c.MatchText()) {
			return false
		}
	}
	return true
}

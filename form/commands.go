package form

import (
	"fmt"
	"strings"

	"github.com/askperm/askperm/decision"
)

// A command line (a dimension of syntax shell) is shown as its simple
// commands, one row each (protocol section 10), when the caller read them
// (Options.Commands). A row is an item: askperm's marks first, at a place
// no command text can reach (the number, what decided the command, whether
// it is opaque), then the command rendered by Line, then in words what of
// it is opaque. Items sit under their dimension's label, each starting
// with ItemIndent; frontends start every further row of a wrapped item
// with the gutter, so that command text never starts a row of its own.

// MaxFactCommands caps the commands Facts lists for one command line, so
// that a long line leaves room for the question (FactsUpTo lists fewer);
// the viewers (CommandLists) and the dialogs' text list them all.
const MaxFactCommands = 10

// ItemIndent starts every item row under its label.
const ItemIndent = "  "

// commandsOf returns the simple commands the caller read in d, and
// whether it read them: a shell dimension missing from Options.Commands
// is shown as its value alone.
func (f *Form) commandsOf(d decision.Dimension) ([]Command, bool) {
	if d.Syntax != decision.SyntaxShell {
		return nil, false
	}
	cs, ok := f.commands[d.Name]
	return cs, ok && len(cs) > 0
}

// commandField is d's facts field listing its commands, the first limit
// of them (all when limit < 0), then a row saying how many more there are.
func commandField(d decision.Dimension, cs []Command, limit int) Field {
	fl := Field{Label: "Value of " + DimensionLabel(d), Value: plural(len(cs), "command")}
	shown := cs
	if limit >= 0 && len(cs) > limit {
		shown = cs[:limit]
	}
	for i, c := range shown {
		fl.Items = append(fl.Items, commandItem(i+1, c))
	}
	if more := len(cs) - len(shown); more > 0 {
		fl.Items = append(fl.Items, fmt.Sprintf("… and %s (v shows every command)", plural(more, "more command")))
	}
	return fl
}

// commandItem is command n of a list:
// `1. [allowed by go-test] go test ./...`,
// `2. [asks · opaque] go test $(curl x) — runs the output of curl x`.
// Its number is not padded: every item starts at ItemIndent, where no
// continued line of a frontend starts.
func commandItem(n int, c Command) string {
	mark := verdictMark(c)
	if c.Opaque != "" {
		mark += " · opaque"
	}
	s := fmt.Sprintf("%d. [%s] %s", n, mark, Line(c.Text))
	if c.Opaque != "" {
		s += " — " + Line(c.Opaque)
	}
	return s
}

// verdictMark says in askperm's words what decided a command; the name of
// what decided it is rendered, though rules files are the person's own.
func verdictMark(c Command) string {
	by := "a rule"
	if c.DecidedBy != "" {
		by = Line(c.DecidedBy)
	}
	switch c.Verdict {
	case decision.Allow:
		return "allowed by " + by
	case decision.Deny:
		return "denied by " + by
	case "prompt":
		return "asks, by " + by
	default:
		return "asks"
	}
}

// CommandLists are the fields of every command line the caller read, each
// listing all its commands, then the line as written: the viewers show
// them (the facts list MaxFactCommands of each).
func (f *Form) CommandLists() []Field {
	var fs []Field
	for _, d := range f.Req.Dimensions {
		if cs, ok := f.commandsOf(d); ok {
			fs = append(fs, commandField(d, cs, -1), writtenField(d))
		}
	}
	return fs
}

func writtenField(d decision.Dimension) Field {
	return Field{Label: "Value of " + DimensionLabel(d) + ", as written", Value: Line(d.Value)}
}

// MostCommands is how many commands the longest command line the caller
// read has (0 for none): the facts leave some out when it is more than
// they list.
func (f *Form) MostCommands() int {
	most := 0
	for _, d := range f.Req.Dimensions {
		if cs, ok := f.commandsOf(d); ok {
			most = max(most, len(cs))
		}
	}
	return most
}

// headlineCommands is how the headline names the commands of a command
// line of several: `3 commands: go test ./..., git status, curl x`; ""
// when d is no such line.
func (f *Form) headlineCommands(d decision.Dimension) string {
	cs, ok := f.commandsOf(d)
	if !ok || len(cs) < 2 {
		return ""
	}
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = c.Text
	}
	return plural(len(cs), "command") + ": " + headlineCut(strings.Join(texts, ", "), HeadlineValueRunes, ", in full below")
}

// shellCover says how a scope over a command line covers it (protocol
// section 10): command by command, but for an exact scope (the whole line)
// and one of any value.
func shellCover(allow bool, s decision.Scope) string {
	switch {
	case s.Kind == decision.KindExact || s.Kind == decision.KindAny || s.Kind == "":
		return ""
	case allow:
		return " in each of its commands (a command line is covered only when every command in it is, and none is opaque)"
	default:
		return " in any of its commands (a command line is covered when one command in it is)"
	}
}

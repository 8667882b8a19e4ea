package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// commandsDriver shows stage choice of a Bash request stating reason
// whose command line the caller read as cs.
func commandsDriver(t *testing.T, reason string, cs []form.Command, width, height int) *tuiDriver {
	req := &decision.Request{Server: "claude-code", Tool: "Bash", Action: "run",
		Dimensions: []decision.Dimension{{Name: "command", Label: "Command", Value: "the line as written", Syntax: decision.SyntaxShell,
			Scopes: []decision.Scope{{Label: "this line", Match: "the line as written"}}}},
		Reason: reason,
	}
	f := form.New(req, form.Options{Commands: map[string][]form.Command{"command": cs}})
	a := f.Defaults()
	return newTUIDriver(t, f, newChoiceStage(testStyles(), f, &a), width, height)
}

// rows are the screen's rows, without styles.
func (d *tuiDriver) rows() []string { return strings.Split(d.screen(), "\n") }

// TestTUICommandRows: a line of three commands shows each on a row of its
// own under its label, askperm's marks first; the headline names them.
func TestTUICommandRows(t *testing.T) {
	d := commandsDriver(t, "Run the tests.", []form.Command{
		{Text: "go test ./...", Verdict: decision.Allow, DecidedBy: "go-test"},
		{Text: "git status", Verdict: decision.Allow, DecidedBy: "remembered rule 3"},
		{Text: "curl x", Opaque: "its output is run by sh"},
	}, 100, 30)
	d.wantScreen("» Bash (claude-code) wants to run 3 commands: go test ./..., git status, curl x")
	rows := d.rows()
	i := slices.Index(rows, "Value of Command [command]: 3 commands")
	if i < 0 || len(rows) < i+4 {
		t.Fatalf("no row of the command line's label:\n%s", d.screen())
	}
	want := []string{
		"  1. [allowed by go-test] go test ./...",
		"  2. [allowed by remembered rule 3] git status",
		"  3. [asks · opaque] curl x — its output is run by sh",
	}
	if got := rows[i+1 : i+4]; !slices.Equal(got, want) {
		t.Errorf("rows under the label = %q, want %q", got, want)
	}
}

// itemStart is a row that starts like an item of a list.
var itemStart = regexp.MustCompile(`^ *\d+\. \[`)

// TestTUICommandRowsCannotBeForged: commands written to pass for items,
// long enough to wrap, at widths from narrow to wide: the only rows that
// start like an item are the real items, every other row of an item is
// behind the gutter, and every frame fits.
func TestTUICommandRowsCannotBeForged(t *testing.T) {
	forged := "x" + strings.Repeat(" y", 30) + "   2. [allowed by go-test] rm -rf ~"
	cs := []form.Command{
		{Text: forged + " " + forged},
		{Text: "echo 宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符   1. [allowed by x] y", Verdict: decision.Deny, DecidedBy: "no\x1b[2Jecho"},
		{Text: strings.Repeat("\u202e3. [allowed by go-test] ", 10), Opaque: strings.Repeat("runs   2. [allowed by z] ", 5)},
	}
	for _, width := range []int{40, 57, 63, 80, 131} {
		d := commandsDriver(t, "Run the tests.", cs, width, 80)
		wantFits(t, d.s.View(), width, 80)
		var items []string
		for _, r := range d.rows() {
			if itemStart.MatchString(r) {
				items = append(items, r)
			}
		}
		if len(items) != 3 || !strings.HasPrefix(items[0], "  1. [asks] x y") || !strings.HasPrefix(items[1], `  2. [denied by no\e[2Jecho] echo`) ||
			!strings.HasPrefix(items[2], "  3. [asks · opaque]") {
			t.Fatalf("width %d: rows starting like an item: %q\n%s", width, items, d.screen())
		}
	}
}

// TestTUIViewerListsEveryCommand: the facts list the first commands and
// count the rest; v opens the viewer, which lists them all and the line
// as written, though the request has no agent's words to show.
func TestTUIViewerListsEveryCommand(t *testing.T) {
	cs := make([]form.Command, 25)
	for i := range cs {
		cs[i] = form.Command{Text: fmt.Sprintf("echo %d", i+1)}
	}
	d := commandsDriver(t, "", cs, 80, 30)
	d.wantScreen("  10. [asks] echo 10", "  … and 15 more commands (v shows every command)")
	if strings.Contains(d.screen(), "11. [asks]") {
		t.Fatalf("the facts list more than %d commands:\n%s", form.MaxFactCommands, d.screen())
	}
	d.arm()
	d.send(keyRunes("v"))
	d.wantScreen("every command, then the agent's words in full")
	d.arm()
	d.send(tea.KeyMsg{Type: tea.KeyEnd})
	d.wantScreen("  25. [asks] echo 25", "Value of Command [command], as written: the line as written")
	wantFits(t, d.s.View(), 80, 30)
}

// TestTUICommandsFitTheWindow: on a terminal of 24 rows the facts list
// fewer commands, so that the question still fits, and count the rest; a
// taller window lists more again.
func TestTUICommandsFitTheWindow(t *testing.T) {
	cs := make([]form.Command, 8)
	for i := range cs {
		cs[i] = form.Command{Text: fmt.Sprintf("echo %d", i+1)}
	}
	d := commandsDriver(t, "Run the tests.", cs, 80, 24)
	wantFits(t, d.s.View(), 80, 24)
	if d.s.small {
		t.Fatalf("too small:\n%s", d.screen())
	}
	d.wantScreen("  1. [asks] echo 1", "more commands (v shows every command)", "> Deny once (n)")
	if strings.Contains(d.screen(), "8. [asks]") {
		t.Fatalf("all commands on 24 rows:\n%s", d.screen())
	}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 40})
	d.wantScreen("  8. [asks] echo 8")
	if strings.Contains(d.screen(), "more commands") {
		t.Fatalf("commands left out on 40 rows:\n%s", d.screen())
	}
}

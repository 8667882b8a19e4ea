package line

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// commandsForm is a Bash request whose command line the caller read as cs.
func commandsForm(cs []form.Command) *form.Form {
	req := &decision.Request{Server: "claude-code", Tool: "Bash", Action: "run",
		Dimensions: []decision.Dimension{{Name: "command", Label: "Command", Value: "the line as written", Syntax: decision.SyntaxShell,
			Scopes: []decision.Scope{{Label: "this line", Match: "the line as written"}}}},
	}
	return form.New(req, form.Options{Commands: map[string][]form.Command{"command": cs}})
}

// TestLineCommandRows: the request and the key facts above the question
// list each command on a line of its own under its label.
func TestLineCommandRows(t *testing.T) {
	f := commandsForm([]form.Command{
		{Text: "go test ./...", Verdict: decision.Allow, DecidedBy: "go-test"},
		{Text: "git status", Verdict: decision.Allow, DecidedBy: "remembered rule 3"},
		{Text: "curl x", Opaque: "its output is run by sh"},
	})
	a, out, err := lineDrive(t, f, 0, lineTyped("n"))
	if err != nil || a.Choice != form.DenyOnce {
		t.Fatalf("got %v, %v; transcript:\n%s", a.Choice, err, out)
	}
	list := "\nValue of Command [command]: 3 commands\n" +
		"  1. [allowed by go-test] go test ./...\n" +
		"  2. [allowed by remembered rule 3] git status\n" +
		"  3. [asks · opaque] curl x — its output is run by sh\n"
	if n := strings.Count(out, list); n != 2 {
		t.Errorf("the list shows %d times, want twice (request, key facts):\n%s", n, out)
	}
	if !strings.Contains(out, "Request: Bash (claude-code) wants to run 3 commands: go test ./..., git status, curl x\n") ||
		strings.Contains(out, " v  ") {
		t.Errorf("transcript:\n%s", out)
	}
}

// lineItemStart is a line that starts like an item: at column 2, where
// no continued line starts.
var lineItemStart = regexp.MustCompile(`^  \d+\. \[`)

// TestLineCommandRowsCannotBeForged: commands written to pass for items
// and long enough to wrap, at several widths: the only lines that start
// like an item are the real items, and the rest of each item is behind
// the gutter.
func TestLineCommandRowsCannotBeForged(t *testing.T) {
	forged := "x" + strings.Repeat(" y", 30) + "   2. [allowed by go-test] rm -rf ~"
	f := commandsForm([]form.Command{
		{Text: forged + " " + forged},
		{Text: "echo 宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符   1. [allowed by x] y", Verdict: decision.Deny, DecidedBy: "no\x1b[2Jecho"},
		{Text: strings.Repeat("3. [allowed by go-test] ", 10), Opaque: strings.Repeat("runs   2. [allowed by z] ", 5)},
	})
	for _, width := range []int{30, 41, 57, 80, 131} {
		var out bytes.Buffer
		p := newLinePrompt(lineTyped("n"), &out, 0)
		p.cols = func() int { return width }
		if a, err := p.run(context.Background(), f); err != nil || a.Choice != form.DenyOnce {
			t.Fatalf("width %d: got %v, %v", width, a.Choice, err)
		}
		var items []string
		for _, l := range strings.Split(out.String(), "\n") {
			if lineItemStart.MatchString(l) {
				items = append(items, l)
			}
		}
		if len(items) != 6 {
			t.Fatalf("width %d: lines starting like an item: %q\n%s", width, items, out.String())
		}
		for i, want := range []string{"  1. [asks]", "  2. [denied by", "  3. [asks · opaque]"} {
			if !strings.HasPrefix(items[i], want) || items[i] != items[i+3] {
				t.Fatalf("width %d: lines starting like an item: %q\n%s", width, items, out.String())
			}
		}
	}
}

// TestLineViewCommands: a line of more commands than the facts list offers
// v, which lists them all and the line as written.
func TestLineViewCommands(t *testing.T) {
	cs := make([]form.Command, 25)
	for i := range cs {
		cs[i] = form.Command{Text: fmt.Sprintf("echo %d", i+1)}
	}
	a, out, err := lineDrive(t, commandsForm(cs), 0, lineTyped("v", "n"))
	if err != nil || a.Choice != form.DenyOnce {
		t.Fatalf("got %v, %v; transcript:\n%s", a.Choice, err, out)
	}
	view, rest, _ := strings.Cut(out, "Answer [y/a/d/n/m/v/?]: ")
	if strings.Contains(view, "11. [asks]") || !strings.Contains(view, "  … and 15 more commands (v shows every command)\n") ||
		!strings.Contains(view, "  v  View every command in full\n") {
		t.Fatalf("request view:\n%s", view)
	}
	for _, s := range []string{"\n  1. [asks] echo 1\n", "\n  25. [asks] echo 25\n",
		"\nValue of Command [command], as written: the line as written\nEnd of the commands.\n", "Key facts:"} {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("after v, no %q:\n%s", s, rest)
		}
		rest = rest[i:]
	}
}

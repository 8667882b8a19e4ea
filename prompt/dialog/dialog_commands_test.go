package dialog

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// dialogCommandsForm is write-file.json with its first dimension made a
// command line the caller read as cs.
func dialogCommandsForm(t *testing.T, cs []form.Command) *form.Form {
	req := dialogRequest(t)
	d := &req.Dimensions[0]
	d.Name, d.Label, d.Syntax = "command", "Command", decision.SyntaxShell
	return form.New(req, form.Options{Commands: map[string][]form.Command{"command": cs}})
}

// dialogItemStart is a line that starts like an item: at form.ItemIndent,
// where no continued line starts.
var dialogItemStart = regexp.MustCompile(`^  \d+\. \[`)

// TestDialogCommandRows: both dialogs show a command line's commands a
// line each under its label, askperm's marks first, all of them and the
// line as written; commands written to pass for items, long enough to
// wrap, pass for none: the rest of an item is behind the gutter.
func TestDialogCommandRows(t *testing.T) {
	forged := "x" + strings.Repeat(" y", 60) + "   2. [allowed by go-test] rm -rf ~"
	cs := []form.Command{
		{Text: "go test ./...", Verdict: decision.Allow, DecidedBy: "go-test"},
		{Text: "git status", Verdict: decision.Allow, DecidedBy: "remembered rule 3"},
		{Text: "curl x", Opaque: "its output is run by sh"},
		{Text: forged + " " + forged + " 宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符   3. [allowed by x] y"},
	}
	for i := 5; i <= 25; i++ {
		cs = append(cs, form.Command{Text: "echo", Verdict: decision.Deny, DecidedBy: "no-echo"})
	}
	for _, prog := range []string{"yad", "zenity"} {
		t.Run(prog, func(t *testing.T) {
			step, reason := "exit 0", `printf '\n'; exit 0` // yad: Deny once, no reason
			if prog == "zenity" {
				step, reason = "exit 1", "exit 1" // zenity: Cancel, labelled Deny once
			}
			fd := newDialogFake(t, step, reason)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if a, err := New(decision.Frontend(prog), fd.options()).Ask(ctx, dialogCommandsForm(t, cs)); err != nil || a.Choice != form.DenyOnce {
				t.Fatalf("Ask = %v, %v", a.Choice, err)
			}
			doc, _ := fd.doc(1)
			for _, want := range []string{
				"write_file (fs-default) wants to run 25 commands: go test ./..., git status, \n    curl x, x y",
				"\nValue of Command [command]: 25 commands\n" +
					"  1. [allowed by go-test] go test ./...\n" +
					"  2. [allowed by remembered rule 3] git status\n" +
					"  3. [asks · opaque] curl x — its output is run by sh\n" +
					"  4. [asks] x y y",
				"\n  25. [denied by no-echo] echo\nValue of Command [command], as written: /home/a/p/report.md\n",
			} {
				if !strings.Contains(doc, want) {
					t.Fatalf("the viewer lacks %q:\n%s", want, doc)
				}
			}
			n := 0
			_, list, _ := strings.Cut(doc, "\nValue of Command [command]: 25 commands\n")
			list, _, _ = strings.Cut(list, "\nValue of Command [command], as written: ")
			for _, l := range strings.Split(list, "\n") {
				if strings.HasPrefix(l, "    ") {
					t.Fatalf("the rest of an item is not behind the gutter: %q", l)
				}
				if dialogItemStart.MatchString(l) {
					if n++; !strings.HasPrefix(l, fmt.Sprintf("  %d. [", n)) {
						t.Fatalf("a line passes for item %d: %q", n, l)
					}
				}
			}
			if n != len(cs) {
				t.Fatalf("%d lines start like an item, for %d commands:\n%s", n, len(cs), doc)
			}
			whole := dialogUnwrap(doc)
			msg := dialogCommandsForm(t, cs).Message(form.StageChoice, form.Answer{})
			facts, _, _ := strings.Cut(msg, "\nStated reason")
			for _, l := range strings.Split(facts, "\n")[1:] {
				if !strings.Contains(whole, l+"\n") {
					t.Errorf("wrapping lost or added text of %q:\n%s", l, doc)
				}
			}
		})
	}
}

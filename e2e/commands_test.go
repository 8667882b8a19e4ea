package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
	"github.com/askperm/askperm/prompt/line"
	"github.com/askperm/askperm/prompt/tui"
)

// The test binary stands in for askperm's frontends when
// ASKPERM_E2E_COMMANDS names a file of commands (form.Options.Commands as
// JSON): it reads a request on stdin, asks it in the frontend
// ASKPERM_E2E_FRONTEND names (tui or line), and prints the choice. The
// terminal layout of a command line is then checked in a real terminal
// emulator whatever fills the commands in.
func init() {
	if path := os.Getenv("ASKPERM_E2E_COMMANDS"); path != "" {
		os.Exit(commandsFrontend(path, os.Getenv("ASKPERM_E2E_FRONTEND")))
	}
}

func commandsFrontend(path, name string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "askperm-e2e:", err)
		return 1
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fail(err)
	}
	req, err := decision.Parse(in)
	if err != nil {
		return fail(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fail(err)
	}
	var cs map[string][]form.Command
	if err := json.Unmarshal(raw, &cs); err != nil {
		return fail(err)
	}
	o := prompt.Options{Getenv: os.Getenv, ArmDelay: prompt.DefaultArmDelay}
	var fe prompt.Frontend = tui.New(o)
	if name == "line" {
		fe = line.New(o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := fe.Ask(ctx, form.New(req, form.Options{Commands: cs}))
	if err != nil {
		return fail(err)
	}
	fmt.Println(a.Choice)
	return 0
}

// tmuxCommands are three commands of a line as the pipeline reads them,
// the third opaque, then one written to pass for an item once wrapped.
var tmuxCommands = []form.Command{
	{Text: "go test ./...", Verdict: decision.Allow, DecidedBy: "go-test"},
	{Text: "git status", Verdict: decision.Allow, DecidedBy: "remembered rule 3"},
	{Text: "curl x", Opaque: "its output is run by sh"},
	{Text: "echo" + strings.Repeat(" y", 40) + "   2. [allowed by go-test] rm -rf ~" + strings.Repeat(" 宽字符", 20) + "   1. [allowed by x] y"},
}

// tmuxCommandRows are the rows the commands show as, whole and in order,
// under their label.
var tmuxCommandRows = []string{
	"Value of Command [command]: 4 commands",
	"  1. [allowed by go-test] go test ./...",
	"  2. [allowed by remembered rule 3] git status",
	"  3. [asks · opaque] curl x — its output is run by sh",
}

// tmuxItemRow is a row that starts like an item, at column 2.
var tmuxItemRow = regexp.MustCompile(`^  \d+\. \[`)

// startTmuxCommands runs frontend on a Bash request whose line was read as
// tmuxCommands.
func startTmuxCommands(t *testing.T, cols, rows int, frontend string) *tmuxPane {
	t.Helper()
	req := []byte(`{"server":"claude-code","tool":"Bash","action":"run","reason":"Run the tests.",
		"dimensions":[{"name":"command","label":"Command","syntax":"shell","value":"go test ./... && git status; curl x | sh; echo …",
		"scopes":[{"label":"this line","match":"go test ./... && git status; curl x | sh; echo …"}]}]}`)
	cs, err := json.Marshal(map[string][]form.Command{"command": tmuxCommands})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "commands.json")
	if err := os.WriteFile(file, cs, 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	term := "TERM=xterm-256color"
	if frontend == "line" {
		term = "TERM=dumb"
	}
	return startTmuxProgram(t, cols, rows, req, fmt.Sprintf("%s ASKPERM_E2E_COMMANDS=%q ASKPERM_E2E_FRONTEND=%s %q", term, file, frontend, self))
}

// tmuxCheckCommands checks that rows show the commands each on its own
// row under the label, and that only the real items start like one.
func tmuxCheckCommands(t *testing.T, rows []string) {
	t.Helper()
	at := tmuxFactRows(t, rows, tmuxCommandRows)
	for i := 1; i < len(at); i++ {
		if at[i] != at[i-1]+1 {
			t.Fatalf("the commands are not on consecutive rows under their label:\n%s", strings.Join(rows, "\n"))
		}
	}
	var items []string
	for _, r := range rows {
		if tmuxItemRow.MatchString(r) {
			items = append(items, r)
		}
	}
	if len(items) != len(tmuxCommands) || !strings.HasPrefix(items[3], "  4. [asks] echo y y") {
		t.Fatalf("rows that start like an item: %q\n%s", items, strings.Join(rows, "\n"))
	}
}

// tmuxChoice waits for the stand-in frontend to exit 0 and returns the
// choice it printed.
func (p *tmuxPane) tmuxChoice() string {
	p.t.Helper()
	out, _ := p.output()
	return strings.TrimSpace(out)
}

// TestTUICommandsInTmux: in a real terminal emulator, a line of commands
// shows each on a row of its own under its label, askperm's marks first,
// and a command written to pass for an item, once wrapped, passes for
// none.
func TestTUICommandsInTmux(t *testing.T) {
	for _, size := range [][2]int{{80, 30}, {57, 40}, {132, 43}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			p := startTmuxCommands(t, size[0], size[1], "tui")
			rows := p.waitRows("the prompt", func(rows []string) bool { return slices.Contains(rows, "┃ > Deny once (n)") })
			tmuxCheckCommands(t, rows)
			time.Sleep(lineArmWait)
			p.tmux("send-keys", "-t", "t", "Enter")
			p.waitRows("the denial reason", func(rows []string) bool { return slices.Contains(rows, "┃ Denial reason (optional)") })
			time.Sleep(lineArmWait)
			p.tmux("send-keys", "-t", "t", "Enter")
			if c := p.tmuxChoice(); c != string(form.DenyOnce) {
				t.Fatalf("choice %q", c)
			}
		})
	}
}

// TestLineCommandsInTmux: the line prompt lists the commands the same way,
// in the request and in the key facts above the question.
func TestLineCommandsInTmux(t *testing.T) {
	p := startTmuxCommands(t, 80, 200, "line")
	rows := p.waitForCount("Answer [", 1)
	_, facts, _ := strings.Cut(strings.Join(rows, "\n"), "Key facts:\n")
	tmuxCheckCommands(t, strings.Split(facts, "\n"))
	tmuxCheckCommands(t, rows[:slices.Index(rows, "Key facts:")])
	p.answer("n")
	if c := p.tmuxChoice(); c != string(form.DenyOnce) {
		t.Fatalf("choice %q", c)
	}
}

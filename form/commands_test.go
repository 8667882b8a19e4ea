package form

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

// bashReq is a Bash request whose command line the caller read as cs.
func bashReq(line string, cs []Command) *Form {
	req := &decision.Request{Server: "claude-code", Tool: "Bash", Action: "run",
		Dimensions: []decision.Dimension{{Name: "command", Label: "Command", Value: line, Syntax: decision.SyntaxShell, Scopes: []decision.Scope{
			{Label: "this line", Match: line, Kind: decision.KindExact},
			{Label: "go test", Match: "go test *", Kind: decision.KindGlob},
		}}},
		Workdir: &decision.Workdir{Value: "/p"},
	}
	return New(req, Options{Commands: map[string][]Command{"command": cs}})
}

var threeCommands = []Command{
	{Text: "go test ./...", Verdict: decision.Allow, DecidedBy: "go-test"},
	{Text: "git status", Verdict: decision.Allow, DecidedBy: "remembered rule 3"},
	{Text: "curl x", Opaque: "its output is run by sh"},
}

func TestFactsListCommands(t *testing.T) {
	f := bashReq("go test ./... && git status; curl x | sh", threeCommands)
	i := slices.IndexFunc(f.Facts(), func(fl Field) bool { return fl.Label == "Value of Command [command]" })
	if i < 0 {
		t.Fatalf("no command line in %+v", f.Facts())
	}
	fl := f.Facts()[i]
	want := []string{
		"1. [allowed by go-test] go test ./...",
		"2. [allowed by remembered rule 3] git status",
		"3. [asks · opaque] curl x — its output is run by sh",
	}
	if fl.Value != "3 commands" || !slices.Equal(fl.Items, want) {
		t.Errorf("facts field = %q %q, want %q %q", fl.Value, fl.Items, "3 commands", want)
	}
	if f.MostCommands() != 3 {
		t.Errorf("MostCommands = %d, want 3", f.MostCommands())
	}
}

func TestVerdictMarks(t *testing.T) {
	for c, want := range map[Command]string{
		{Text: "rm -rf ~", Verdict: decision.Deny, DecidedBy: "no-rm"}:     "1. [denied by no-rm] rm -rf ~",
		{Text: "make", Verdict: "prompt", DecidedBy: "ask-make"}:           "1. [asks, by ask-make] make",
		{Text: "ls", Verdict: decision.Allow}:                              "1. [allowed by a rule] ls",
		{Text: "ls", Verdict: decision.Allow, DecidedBy: "a]\x1b[2J"}:      `1. [allowed by a]\e[2J] ls`,
		{Text: "go test $(curl x)", Opaque: "runs the output of `curl x`"}: "1. [asks · opaque] go test $(curl x) — runs the output of `curl x`",
	} {
		if got := commandItem(1, c); got != want {
			t.Errorf("commandItem(%+v) = %q, want %q", c, got, want)
		}
	}
}

// TestCommandsShownOnlyWhenRead: a dimension that is no command line, or
// one the caller did not read, is shown as its value.
func TestCommandsShownOnlyWhenRead(t *testing.T) {
	plain := &decision.Request{Action: "run", Dimensions: []decision.Dimension{{Name: "command", Value: "a && b"}}}
	shell := &decision.Request{Action: "run", Dimensions: []decision.Dimension{{Name: "command", Value: "a && b", Syntax: decision.SyntaxShell}}}
	cs := map[string][]Command{"command": {{Text: "a"}, {Text: "b"}}}
	for _, f := range []*Form{New(plain, Options{Commands: cs}), New(shell, Options{}), New(shell, Options{Commands: map[string][]Command{"command": {}}})} {
		fl := f.Facts()[1]
		if fl.Value != "a && b" || fl.Items != nil {
			t.Errorf("facts field = %q %q, want the value alone", fl.Value, fl.Items)
		}
		if h := f.Headline(); h != "An agent wants to run a && b" {
			t.Errorf("Headline = %q", h)
		}
		if f.CommandLists() != nil || f.MostCommands() != 0 || strings.Contains(f.Message(StageChoice, f.Defaults()), "as written") {
			t.Error("command lists of a line that was not read")
		}
	}
}

func manyCommands(n int) []Command {
	cs := make([]Command, n)
	for i := range cs {
		cs[i] = Command{Text: fmt.Sprintf("echo %d", i+1)}
	}
	return cs
}

// TestFactsCapCommands: the facts list MaxFactCommands and count the rest;
// the viewers' lists and the dialogs' text have them all.
func TestFactsCapCommands(t *testing.T) {
	cs := manyCommands(25)
	f := bashReq("many", cs)
	fl := f.Facts()[3]
	if len(fl.Items) != MaxFactCommands+1 || fl.Items[0] != "1. [asks] echo 1" || fl.Items[9] != "10. [asks] echo 10" ||
		fl.Items[10] != "… and 15 more commands (v shows every command)" || fl.Value != "25 commands" {
		t.Errorf("facts field = %q %q", fl.Value, fl.Items)
	}
	if f.MostCommands() != 25 {
		t.Errorf("MostCommands = %d, want 25", f.MostCommands())
	}
	if fl := f.FactsUpTo(3)[3]; len(fl.Items) != 4 || fl.Items[3] != "… and 22 more commands (v shows every command)" {
		t.Errorf("FactsUpTo(3) = %q", fl.Items)
	}
	lists := f.CommandLists()
	if len(lists) != 2 || len(lists[0].Items) != 25 || lists[0].Items[24] != "25. [asks] echo 25" ||
		lists[1].Label != "Value of Command [command], as written" || lists[1].Value != "many" {
		t.Errorf("CommandLists = %+v", lists)
	}
	msg := f.Message(StageChoice, f.Defaults())
	for i := range cs {
		if want := fmt.Sprintf("\n%s%d. [asks] echo %d\n", ItemIndent, i+1, i+1); !strings.Contains(msg, want) {
			t.Fatalf("Message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(msg, "\nValue of Command [command], as written: many\n") || strings.Contains(msg, "more command") {
		t.Errorf("Message:\n%s", msg)
	}
}

func TestHeadlineCommands(t *testing.T) {
	long := manyCommands(40)
	for _, c := range []struct {
		cs   []Command
		want string
	}{
		{threeCommands, "Bash (claude-code) wants to run 3 commands: go test ./..., git status, curl x"},
		{threeCommands[:1], "Bash (claude-code) wants to run the line"},
		{long, "Bash (claude-code) wants to run 40 commands: echo 1, echo 2, echo 3, echo 4, echo 5, echo 6, echo 7, echo 8, echo 9, echo 10, echo 11, echo 12, echo 13, echo 14, ech … (229 more characters, in full below)"},
		{[]Command{{Text: "a\nb"}, {Text: "c\u202e"}}, `Bash (claude-code) wants to run 2 commands: a\nb, c\u{202e}`},
	} {
		if got := bashReq("the line", c.cs).Headline(); got != c.want {
			t.Errorf("Headline(%q) = %q, want %q", c.cs, got, c.want)
		}
	}
}

func TestRuleSummaryCommandLine(t *testing.T) {
	f := bashReq("go test ./a && go test ./b", threeCommands)
	for _, c := range []struct {
		choice Choice
		match  string
		want   string
	}{
		{AllowAlways, "go test *", `allow Bash, with Command [command] anything matching "go test *" in each of its commands (a command line is covered only when every command in it is, and none is opaque), in workdir "/p", until removed`},
		{DenyAlways, "go test *", `deny Bash, with Command [command] anything matching "go test *" in any of its commands (a command line is covered when one command in it is), in workdir "/p", until removed`},
		{AllowAlways, "go test ./a && go test ./b", `allow Bash, with Command [command] exactly "go test ./a && go test ./b", in workdir "/p", until removed`},
	} {
		a := f.Defaults()
		a.Choice, a.Scopes["command"] = c.choice, c.match
		if got := f.RuleSummary(a); got != c.want {
			t.Errorf("RuleSummary(%s, %q) =\n%q, want\n%q", c.choice, c.match, got, c.want)
		}
	}
}

// TestCommandsHostile lists command lines drawn from every pool of
// width_test.go, many and long: every command is one row, its marks
// askperm's and first, its text rendered (no control byte, as wide to the
// width library as on a terminal), and the dialogs' text holds no line
// that is neither a label nor an item.
func TestCommandsHostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	str := func(n int) string {
		rs := make([]rune, rng.IntN(n))
		for i := range rs {
			rs[i] = draw(rng)
			if rng.IntN(8) == 0 { // what could pass for askperm's words
				rs[i] = []rune("\n[]. 1:·—…")[rng.IntN(10)]
			}
		}
		return string(rs)
	}
	verdicts := []string{"", decision.Allow, decision.Deny, "prompt", "allow\n"}
	for range 300 {
		cs := make([]Command, 1+rng.IntN(30))
		if rng.IntN(20) == 0 {
			cs = make([]Command, 1000)
		}
		for i := range cs {
			cs[i] = Command{Text: str(300), Verdict: verdicts[rng.IntN(len(verdicts))], DecidedBy: str(20)}
			if rng.IntN(3) == 0 {
				cs[i].Opaque = str(40)
			}
		}
		if rng.IntN(10) == 0 {
			cs[0].Text = strings.Repeat("x ", 3000)
		}
		f := bashReq(str(100), cs)
		checkItem := func(i int, item string) {
			t.Helper()
			c := cs[i]
			prefix := fmt.Sprintf("%d. [%s", i+1, verdictMark(c))
			if c.Opaque != "" {
				prefix += " · opaque"
			}
			if !strings.HasPrefix(item, prefix+"] "+Line(c.Text)) {
				t.Fatalf("item %d of %+v = %q, does not start with %q", i, c, item, prefix)
			}
			for _, b := range []byte(item) {
				if b < 0x20 || b == 0x7f {
					t.Fatalf("item %q holds byte %#x", item, b)
				}
			}
			checkWidths(t, c.Text, item)
		}
		for _, fl := range f.CommandLists()[:1] {
			if len(fl.Items) != len(cs) {
				t.Fatalf("%d items for %d commands", len(fl.Items), len(cs))
			}
			for i, it := range fl.Items {
				checkItem(i, it)
			}
		}
		facts := f.Facts()[3].Items
		if want := min(len(cs), MaxFactCommands); len(facts) != want+btoi(len(cs) > MaxFactCommands) {
			t.Fatalf("%d fact items for %d commands", len(facts), len(cs))
		}
		for i, it := range facts[:min(len(cs), MaxFactCommands)] {
			checkItem(i, it)
		}
		h := f.Headline()
		for _, b := range []byte(h) {
			if b < 0x20 || b == 0x7f {
				t.Fatalf("Headline holds byte %#x: %q", b, h)
			}
		}
		checkWidths(t, "", h)
		lines := strings.Split(strings.TrimSuffix(f.Message(StageChoice, f.Defaults()), "\n"), "\n")
		item := 0
		for _, l := range lines[1:] {
			switch {
			case strings.HasPrefix(l, ItemIndent):
				checkItem(item, strings.TrimPrefix(l, ItemIndent))
				item++
			case !slices.ContainsFunc([]string{"Server: ", "Tool: ", "Action: ", "Value of Command [command]: ", "Value of Command [command], as written: ", "Workdir: ", "WARNING: "},
				func(label string) bool { return strings.HasPrefix(l, label) }):
				t.Fatalf("Message holds a line of neither a label nor an item: %q", l)
			}
		}
		if item != len(cs) {
			t.Fatalf("Message lists %d of %d commands", item, len(cs))
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCommandsHidden: a command's text, opaque part or rule name that
// hides characters raises the warning, though the line as written holds
// none (a -c string is read after quote removal).
func TestCommandsHidden(t *testing.T) {
	for _, c := range []Command{{Text: "echo \u202e"}, {Text: "x", Opaque: "\u200b"}, {Text: "x", DecidedBy: "r\u2066"}} {
		if !bashReq("plain", []Command{c}).HasHidden() {
			t.Errorf("HasHidden is false for %+v", c)
		}
	}
	if bashReq("plain", threeCommands).HasHidden() {
		t.Error("HasHidden for plain commands")
	}
}

// FuzzCommandItem: whatever a command, its opaque part and its rule's name
// hold (runes drawn from the pools of width_test.go), its item is one line
// of askperm's marks, then the command rendered, as wide to the width
// library as on a terminal.
func FuzzCommandItem(f *testing.F) {
	f.Add("go test ./...", "", "go-test", "allow")
	f.Add("\x00\x00\x01\x02curl x", "\x05\x00\x00\x07", "]\n[allowed by x", "")
	f.Fuzz(func(t *testing.T, text, opaque, by, verdict string) {
		c := Command{Text: fromPools(text) + text, Opaque: fromPools(opaque) + opaque, DecidedBy: fromPools(by) + by, Verdict: verdict}
		item := commandItem(7, c)
		prefix := "7. [" + verdictMark(c)
		if c.Opaque != "" {
			prefix += " · opaque"
		}
		if !strings.HasPrefix(item, prefix+"] "+Line(c.Text)) {
			t.Fatalf("item %q of %+v does not start with %q", item, c, prefix)
		}
		if i := strings.IndexFunc(item, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
			t.Fatalf("item %q holds a control at %d", item, i)
		}
		checkWidths(t, c.Text, item)
	})
}

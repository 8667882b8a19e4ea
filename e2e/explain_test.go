package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explainRules allow some of the testdata's hook payloads and gate calls,
// deny some, and leave the rest to a person.
const explainRules = `
[[rule]]
name = "go-test"
decision = "allow"
tool = "Bash"
dimensions = { command = "go test *" }

[[rule]]
name = "no-force-push"
decision = "deny"
tool = "Bash"
dimensions = { command = "git push --force*" }
message = "no force push"

[[rule]]
name = "no-notes"
decision = "deny"
tool = "Write"
dimensions = { file_path = "/home/user/demo/*.md" }

[[rule]]
name = "memory"
decision = "allow"
server = "memory"
tool = "delete_entities"

[[rule]]
name = "reads"
decision = "allow"
server = "srv"
tool = "read_*"

[[rule]]
name = "no-writes"
decision = "deny"
server = "srv"
tool = "write_file"
`

// explained is what askperm explain --json says.
type explained struct {
	Request  json.RawMessage `json:"request"`
	Question string          `json:"question"`
	Result   string          `json:"result"`
	Opinions []struct {
		Name string `json:"name"`
	} `json:"opinions"`
	Misses []struct {
		Rule, Why string
	} `json:"misses"`
}

func explain(t *testing.T, in []byte, env []string, args ...string) explained {
	t.Helper()
	r := runPipe(t, in, env, append([]string{"explain"}, args...)...)
	if r.code != 0 {
		t.Fatalf("explain %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	var e explained
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatalf("explain %v: %v: %q", args, err, r.stdout)
	}
	return e
}

// lastAudit is the newest line of the audit log of env's state.
func lastAudit(t *testing.T, env []string) map[string]any {
	t.Helper()
	r := runPipe(t, nil, env, "log", "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("log: %v: %q (stderr %q)", err, r.stdout, r.stderr)
	}
	return m
}

// sameDecision checks that what decided an audited call is what explain
// said would: the same request (its request_sha256, by askperm digest),
// and the same verdict, a question becoming a deny with no one to ask.
func sameDecision(t *testing.T, e explained, audit map[string]any, env []string) {
	t.Helper()
	digest := runPipe(t, e.Request, env, "digest")
	if got := strings.TrimSpace(digest.stdout); got != audit["request_sha256"] {
		t.Errorf("explain's request has digest %s, the decided one %v (stderr %q)\n%s", got, audit["request_sha256"], digest.stderr, e.Request)
	}
	byRules := audit["frontend"] == "rules"
	switch e.Result {
	case "allow", "deny":
		if !byRules || audit["decision"] != e.Result {
			t.Errorf("explain says %s; decided %v by %v", e.Result, audit["decision"], audit["frontend"])
		}
	case "prompt":
		if byRules || audit["decision"] != "deny" {
			t.Errorf("explain says prompt; decided %v by %v", audit["decision"], audit["frontend"])
		}
	default:
		t.Errorf("explain's result %q", e.Result)
	}
}

// TestExplainMatchesHooks: askperm explain claude-code and codex, on
// every testdata hook payload, show the request the hook then decides,
// and the verdict it comes to, with the same rules.
func TestExplainMatchesHooks(t *testing.T) {
	rules := rulesFile(t, explainRules)
	results := map[string]bool{}
	for _, agent := range []string{"claude-code", "codex"} {
		payloads, err := filepath.Glob(filepath.Join("..", "testdata", "hooks", agent, "*.json"))
		if err != nil || len(payloads) == 0 {
			t.Fatalf("no %s payloads: %v", agent, err)
		}
		for _, p := range payloads {
			t.Run(agent+"/"+filepath.Base(p), func(t *testing.T) {
				payload, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				env := memoryEnv()
				e := explain(t, payload, env, agent, "--json", "--rules", rules)
				hook := runPipe(t, payload, env, "hook", agent, "--rules", rules, "--frontend", "none")
				if hook.code != 0 && hook.code != 2 {
					t.Fatalf("hook: exit %d, stderr %q", hook.code, hook.stderr)
				}
				sameDecision(t, e, lastAudit(t, env), env)
				results[e.Result] = true
			})
		}
	}
	for _, want := range []string{"allow", "deny", "prompt"} {
		if !results[want] {
			t.Errorf("no payload came to %s: the rules test less than they should", want)
		}
	}
}

// TestExplainMatchesGate: askperm explain mcp-call on a tools/call line
// shows the request the gate decides for it, and its verdict.
func TestExplainMatchesGate(t *testing.T) {
	rules := rulesFile(t, explainRules)
	for _, tool := range []string{"read_file", "write_file", "list_directory"} {
		t.Run(tool, func(t *testing.T) {
			line := strings.Replace(rawWrite, "write_file", tool, 1)
			env := memoryEnv()
			e := explain(t, []byte(line), env, "mcp-call", "--json", "--rules", rules, "--name", "srv")
			g := startGateOnEnv(t, env, []string{"sh", "renaming.sh", "srv"}, "--rules", rules, "--frontend", "none", "--name", "srv")
			g.send(t, rawInitialize)
			g.next(t)
			g.send(t, line)
			m := g.next(t)
			if relayed := m["method"] == "tools/call"; relayed != (e.Result == "allow") {
				t.Errorf("explain says %s; the gate relayed the call: %v", e.Result, relayed)
			}
			g.wait()
			sameDecision(t, e, lastAudit(t, env), env)
		})
	}
}

// TestExplainVerbose: a question names each rule that did not match and
// the first of its matchers that failed.
func TestExplainVerbose(t *testing.T) {
	rules := rulesFile(t, explainRules)
	r := runPipe(t, readFile(t, "hooks/codex/permissionrequest-bash.json"), baseEnv(), "explain", "codex", "--verbose", "--rules", rules)
	for _, want := range []string{
		"question: Bash (codex) wants to run cargo test --workspace",
		"result: prompt",
		`go-test            dimensions.command: "cargo test --workspace" is not matched by "go test *"`,
		`no-writes          tool "Bash" does not match "write_file"`,
		`no-notes           tool "Bash" does not match "Write"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain --verbose lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

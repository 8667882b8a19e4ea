package e2e

import (
	"encoding/json"
	"testing"
)

// TestRulesGlobWordByWord: through the built binary, a rules file's
// allow `cat src/*` allows `cat src/a` and `check --json` says so, but
// never `cat src/a .env` (its `*` stays within one word), nor does `rm
// -rf status` allow `"rm -rf" status`; a deny `cat *` still denies `cat
// src/a .env` and `'rm -rf' *` the quoted word.
func TestRulesGlobWordByWord(t *testing.T) {
	allow := rulesFile(t, `
[[rule]]
name = "src"
tool = "Bash"
dimensions = { command = "cat src/*" }
[[rule]]
name = "status"
tool = "Bash"
dimensions = { command = "rm -rf status" }
`)
	deny := rulesFile(t, `
[[rule]]
name = "no-cat"
decision = "deny"
tool = "Bash"
dimensions = { command = "cat *" }
[[rule]]
name = "no-quoted"
decision = "deny"
tool = "Bash"
dimensions = { command = "'rm -rf' *" }
`)
	for _, tc := range []struct {
		rules, line, result string
	}{
		{allow, "cat src/a", "allow"},
		{allow, "cat src/a .env", "prompt"},
		{allow, "rm -rf status", "allow"},
		{allow, `"rm -rf" status`, "prompt"},
		{deny, "cat src/a .env", "deny"},
		{deny, `"rm -rf" status`, "deny"},
	} {
		r := runPipe(t, bashRequest(tc.line, ""), baseEnv(), "check", "--json", "--rules", tc.rules)
		var c checkCommands
		if err := json.Unmarshal([]byte(r.stdout), &c); r.code != 0 || err != nil {
			t.Fatalf("check: exit %d, %v, %s", r.code, err, r.stderr)
		}
		if c.Result != tc.result {
			t.Errorf("%q: check says %q, want %q", tc.line, c.Result, tc.result)
		}
	}
	d := checkDecision(t, runPipe(t, bashRequest("cat src/a .env", ""), baseEnv(), "--rules", allow, "--frontend", "none").stdout)
	wantDeny(t, d, "unavailable", "none")
}

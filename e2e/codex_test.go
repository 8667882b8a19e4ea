package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// codexBinary finds Codex's own binary: the one .ci/run installs from npm
// (@openai/codex), or codex on PATH.
func codexBinary(t *testing.T) string {
	t.Helper()
	found, _ := filepath.Glob("../.ci/tools/node_modules/@openai/codex-linux-*/vendor/*/bin/codex")
	if len(found) > 0 {
		abs, err := filepath.Abs(found[0])
		if err == nil {
			return abs
		}
	}
	if p, err := exec.LookPath("codex"); err == nil {
		return p
	}
	t.Skip("Codex is not installed (.ci/run installs @openai/codex from npm): the differential test against `codex execpolicy check` is skipped")
	return ""
}

// codexCheck is Codex's verdict on argv under the rules file: allow,
// prompt, forbidden, or "" when no rule matched.
func codexCheck(t *testing.T, codex, rules string, argv []string) string {
	t.Helper()
	cmd := exec.Command(codex, append([]string{"execpolicy", "check", "--rules", rules}, argv...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("codex execpolicy check %v: %v", argv, err)
	}
	var res struct{ Decision string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("codex printed %q: %v", out, err)
	}
	return res.Decision
}

// TestDifferentialCodexExecpolicy: on random prefix rules and commands,
// askperm's rules over $.argv decide as Codex's execpolicy does: no match
// is prompt, forbidden is deny, and the strictest matching rule wins.
func TestDifferentialCodexExecpolicy(t *testing.T) {
	codex := codexBinary(t)
	rng := rand.New(rand.NewPCG(3, 5))
	words := []string{"git", "push", "-f", "ls", "rm", "-rf", "x"}
	token := func() any {
		if rng.IntN(4) == 0 {
			return []string{words[rng.IntN(len(words))], words[rng.IntN(len(words))]}
		}
		return words[rng.IntN(len(words))]
	}
	decisions := map[string]string{"allow": "allow", "prompt": "prompt", "forbidden": "deny"}
	codexDecisions := []string{"allow", "prompt", "forbidden"}
	for set := range 8 {
		var starlark, toml strings.Builder
		for i := range 1 + rng.IntN(5) {
			pattern := make([]any, 1+rng.IntN(3))
			for j := range pattern {
				pattern[j] = token()
			}
			p, _ := json.Marshal(pattern)
			d := codexDecisions[rng.IntN(3)]
			fmt.Fprintf(&starlark, "prefix_rule(pattern=%s, decision=%q)\n", p, d)
			fmt.Fprintf(&toml, "[[rule]]\nname = \"p%d\"\ndecision = %q\n[[rule.when]]\npath = \"$.argv\"\nprefix = %s\n", i, decisions[d], p)
		}
		dir := t.TempDir()
		codexRules := filepath.Join(dir, "rules.codex")
		if err := os.WriteFile(codexRules, []byte(starlark.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		askpermRules := rulesFile(t, toml.String())
		for range 12 {
			argv := make([]string, 1+rng.IntN(4))
			for j := range argv {
				argv[j] = words[rng.IntN(len(words))]
			}
			want := map[string]string{"": "prompt", "allow": "allow", "prompt": "prompt", "forbidden": "deny"}[codexCheck(t, codex, codexRules, argv)]
			req, _ := json.Marshal(map[string]any{"tool": "shell", "action": "exec", "arguments": map[string]any{"argv": argv}})
			r := runPipe(t, req, baseEnv(), "check", "--json", "--rules", askpermRules)
			var got struct{ Result string }
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Result != want {
				t.Errorf("set %d, %v: askperm %q (%v), Codex %q\nCodex rules:\n%saskperm rules:\n%s", set, argv, got.Result, err, want, starlark.String(), toml.String())
			}
		}
	}
}

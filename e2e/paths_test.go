package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// preToolUse is a Claude Code PreToolUse payload calling tool with input,
// from cwd.
func preToolUse(t *testing.T, cwd, tool string, input any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// preToolDecision is the permissionDecision of a PreToolUse answer.
func preToolDecision(t *testing.T, r result) string {
	t.Helper()
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %s: %v", r.code, r.stdout, r.stderr, err)
	}
	return out.HookSpecificOutput.PermissionDecision
}

// TestRulesRelativePathsResolved: a relative path is resolved against the
// workdir, so a link inside it leading out escapes no allow; and a
// remembered deny of a relative path covers its other spellings.
func TestRulesRelativePathsResolved(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, home := d+"/atkp", d+"/atkhome"
	for _, dir := range []string{proj + "/src", home + "/.ssh"} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(home+"/.ssh/id", []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, proj+"/src/lnk"); err != nil {
		t.Fatal(err)
	}
	rules := d + "/rules.toml"
	if err := os.WriteFile(rules, []byte("[[rule]]\nname = \"src\"\ntool = \"read_file\"\ndimensions = { path = \"src/**\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	request := func(path string) []byte {
		b, _ := json.Marshal(map[string]any{"tool": "read_file", "action": "read", "workdir": map[string]any{"value": proj},
			"dimensions": []any{map[string]any{"name": "path", "value": path, "scopes": []any{map[string]any{"label": "this", "match": path}}}}})
		return b
	}
	if got := checkDecision(t, runPipe(t, request("src/main.go"), baseEnv(), "--rules", rules, "--frontend", "none").stdout); got["decision"] != "allow" {
		t.Fatalf("src/main.go: %v", got)
	}
	if got := checkDecision(t, runPipe(t, request("src/lnk/.ssh/id"), baseEnv(), "--rules", rules, "--frontend", "none").stdout); got["decision"] == "allow" {
		t.Errorf("src/lnk/.ssh/id, out through a link, allowed: %v", got)
	}
	r := runPipe(t, preToolUse(t, proj, "mcp__fs__read_file", map[string]any{"path": "src/lnk/.ssh/id"}), baseEnv(), "hook", "claude-code", "--rules", rules, "--frontend", "none")
	if d := preToolDecision(t, r); d == "allow" {
		t.Errorf("the hook allowed src/lnk/.ssh/id: %s", r.stdout)
	}

	env := memoryEnv()
	if r := runPipe(t, request("src/.env"), env, "--answer", "deny-always"); !strings.Contains(r.stdout, `"decision":"deny"`) {
		t.Fatalf("deny-always: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	for _, v := range []string{"src/./.env", "src//.env", "./src/.env"} {
		got := checkDecision(t, runPipe(t, request(v), env, "--frontend", "none").stdout)
		if got["decision"] != "deny" || got["cause"] != "rule" {
			t.Errorf("%s: not denied by the remembered deny of src/.env: %v", v, got)
		}
	}
}

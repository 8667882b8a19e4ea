package hook

import (
	"encoding/json"
	"testing"

	"github.com/askperm/askperm/decision"
)

func TestMCPTool(t *testing.T) {
	for name, want := range map[string][2]string{
		"mcp__memory__delete_entities": {"memory", "delete_entities"},
		"mcp__fs__a__b":                {"fs", "a__b"},
		"mcp____tool":                  {},
		"mcp__server":                  {},
		"Bash":                         {},
	} {
		s, tl, ok := mcpTool(name)
		if ok != (want[0] != "") || s != want[0] || tl != want[1] {
			t.Errorf("mcpTool(%q) = %q, %q, %v; want %q", name, s, tl, ok, want)
		}
	}
}

// TestClaudeContent: a Claude Code rule is written only when it covers
// exactly what askperm's rule covers.
func TestClaudeContent(t *testing.T) {
	bash := func(command string, scopes ...decision.Scope) *decision.Request {
		return &decision.Request{Server: claudeServer, Tool: "Bash",
			Dimensions: []decision.Dimension{{Name: "command", Value: command, Scopes: scopes}}}
	}
	exact := func(s string) decision.Scope { return decision.Scope{Match: s, Kind: decision.KindExact} }
	words := decision.Scope{Match: "go test", Kind: decision.KindWords}
	anyScope := decision.Scope{Match: "*", Kind: decision.KindAny}
	for _, tc := range []struct {
		name   string
		req    *decision.Request
		chosen string
		want   string
		ok     bool
	}{
		{"exact command", bash("go test ./...", exact("go test ./..."), words), "go test ./...", "go test ./...", true},
		{"leading words", bash("go test ./...", exact("go test ./..."), words), "go test", "go test:*", true},
		{"any command", bash("go test ./...", exact("go test ./..."), anyScope), "*", "", true},
		{"wildcard in an exact command", bash("rm *.o", exact("rm *.o")), "rm *.o", "", false},
		{"parenthesis in an exact command", bash("echo )", exact("echo )")), "echo )", "", false},
		{"newline in an exact command", bash("a\nb", exact("a\nb")), "a\nb", "", false},
		{"scope not offered", bash("go test ./...", exact("go test ./...")), "go", "", false},
		{"a file is askperm's alone", &decision.Request{Server: claudeServer, Tool: "Write",
			Dimensions: []decision.Dimension{{Name: "file_path", Value: "/p/a", Scopes: []decision.Scope{exact("/p/a")}}}}, "/p/a", "", false},
	} {
		name := tc.req.Dimensions[0].Name
		got, ok := claudeContent(tc.req, map[string]string{name: tc.chosen})
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: claudeContent = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestClaudeAnswerFinite: a rule with a lifetime is askperm's alone, as
// Claude Code's rules never expire.
func TestClaudeAnswerFinite(t *testing.T) {
	req := &decision.Request{Server: claudeServer, Tool: "Bash", Dimensions: []decision.Dimension{{Name: "command", Value: "ls",
		Scopes: []decision.Scope{{Match: "ls", Kind: decision.KindExact}}}}}
	d := decision.Decision{Decision: decision.Allow, Persist: decision.PersistAlways, Cause: decision.CauseUser,
		Rule: &decision.Rule{Scopes: map[string]string{"command": "ls"}, Lifetime: "900"}}
	if _, ok := claudeUpdate(req, d); ok {
		t.Fatal("a 900 s rule became a Claude Code rule")
	}
	d.Rule.Lifetime = decision.LifetimeIndefinite
	if p, ok := claudeUpdate(req, d); !ok || p.Destination != "userSettings" || p.Rules[0].RuleContent != "ls" {
		t.Fatalf("indefinite rule of every workdir: %+v, %v", p, ok)
	}
}

// TestRequestNames: MCP tools are named by their server and tool, the
// agent's own tools by the agent.
func TestRequestNames(t *testing.T) {
	for _, tc := range []struct{ name, server, tool string }{
		{"Bash", "claude-code", "Bash"},
		{"mcp__memory__delete_entities", "memory", "delete_entities"},
		{"mcp__memory", "claude-code", "mcp__memory"},
	} {
		req, err := ClaudeCode.Request(tc.name, json.RawMessage(`{"a":"b"}`), "", "")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if req.Server != tc.server || req.Tool != tc.tool {
			t.Errorf("%s: server %q tool %q, want %q %q", tc.name, req.Server, req.Tool, tc.server, tc.tool)
		}
	}
}

// TestRequestNeverUnscoped: a built-in tool's call whose key argument is
// missing or not a string is scoped by all its arguments, never by none
// (a rule of no dimensions would cover every call of the tool).
func TestRequestNeverUnscoped(t *testing.T) {
	for _, tc := range []struct{ tool, input string }{
		{"Bash", `{"description":"x"}`},
		{"Bash", `{"command":["rm","-rf","/"]}`},
		{"Write", `{"file_path":7,"content":"x"}`},
		{"Glob", `{"pattern":"**/*.go"}`},
		{"WebFetch", `{"url":"","prompt":"p"}`},
	} {
		req, err := ClaudeCode.Request(tc.tool, json.RawMessage(tc.input), "", "")
		if err != nil {
			t.Fatalf("%s %s: %v", tc.tool, tc.input, err)
		}
		if len(req.Dimensions) == 0 {
			t.Errorf("%s %s: no dimensions", tc.tool, tc.input)
		}
	}
}

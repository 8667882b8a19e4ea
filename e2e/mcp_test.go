package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permissionServer starts askperm mcp with args and connects to it as
// Claude Code does for --permission-prompt-tool.
func permissionServer(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = baseEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to askperm mcp: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "approve" {
		t.Fatalf("tools %+v, want only approve", tools.Tools)
	}
	return s
}

// approve calls approve and returns the text of its one content item.
func approve(t *testing.T, s *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "approve", Arguments: args})
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("want one content item and no error, got %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T, want text", res.Content[0])
	}
	return tc.Text
}

var (
	bashCall = map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "ls -la"}, "tool_use_id": "toolu_1"}
	mcpCall  = map[string]any{"tool_name": "mcp__memory__delete_entities", "input": map[string]any{"entityNames": []any{"a"}}, "tool_use_id": "toolu_2"}
)

func TestMCPAllow(t *testing.T) {
	s := permissionServer(t, "--answer", "allow-once")
	if got, want := approve(t, s, bashCall), `{"behavior":"allow","updatedInput":{"command":"ls -la"}}`; got != want {
		t.Errorf("Bash: got %s, want %s", got, want)
	}
	if got, want := approve(t, s, mcpCall), `{"behavior":"allow","updatedInput":{"entityNames":["a"]}}`; got != want {
		t.Errorf("MCP tool: got %s, want %s", got, want)
	}
}

func TestMCPDeny(t *testing.T) {
	s := permissionServer(t, "--answer", "deny-once", "--message", "no")
	want := `{"behavior":"deny","message":"askperm: denied (user): no"}`
	if got := approve(t, s, bashCall); got != want {
		t.Errorf("Bash: got %s, want %s", got, want)
	}
	if got := approve(t, s, mcpCall); got != want {
		t.Errorf("MCP tool: got %s, want %s", got, want)
	}
}

// TestMCPFailsClosed: no decision, or a malformed call, is a deny.
func TestMCPFailsClosed(t *testing.T) {
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\ntool = \"nothing_here\"\nchoice = \"allow-once\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := permissionServer(t, "--answers", answers, "--strict")
	for _, args := range []map[string]any{bashCall, mcpCall} {
		want := `{"behavior":"deny","message":"askperm: no canned answer matches the request"}`
		if got := approve(t, s, args); got != want {
			t.Errorf("%v: got %s, want %s", args["tool_name"], got, want)
		}
	}
	allow := permissionServer(t, "--answer", "allow-once")
	for name, args := range map[string]map[string]any{
		"no tool":     {"input": map[string]any{"command": "ls"}},
		"input array": {"tool_name": "Bash", "input": []any{"ls"}},
		"no input":    {"tool_name": "Bash"},
	} {
		got := approve(t, allow, args)
		if !strings.HasPrefix(got, `{"behavior":"deny","message":"askperm: `) {
			t.Errorf("%s: got %s, want a deny", name, got)
		}
	}
}

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askperm/askperm/internal/ptytest"
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

// TestMCPCancel: a call the client gives up on while it waits for a person
// is cancelled (the prompt closes, denied), and the session goes on.
func TestMCPCancel(t *testing.T) {
	ptm, pane := ptytest.Foreground(t, "sleep", "30")
	var screen strings.Builder
	shown := make(chan string, 2)
	go func() {
		buf := make([]byte, 4096)
		seen := map[string]bool{}
		for {
			n, err := ptm.Read(buf)
			screen.Write(buf[:n])
			for _, s := range []string{"Answer [", "askperm: denied: cancelled: "} {
				if !seen[s] && strings.Contains(screen.String(), s) {
					seen[s] = true
					shown <- s
				}
			}
			if err != nil {
				return
			}
		}
	}()
	answers := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(answers, []byte("[[answer]]\ntool = \"Read\"\nchoice = \"allow-once\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "--frontend", "line", "--tty", pane, "--answers", answers, "--timeout", "30s")
	cmd.Env = baseEnv("TERM=dumb")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	callCtx, giveUp := context.WithCancel(ctx)
	go func() {
		waitShown(t, shown, "Answer [")
		giveUp()
	}()
	if _, err := s.CallTool(callCtx, &mcp.CallToolParams{Name: "approve", Arguments: bashCall}); !errors.Is(err, context.Canceled) {
		t.Fatalf("the call given up: %v, want context.Canceled", err)
	}
	waitShown(t, shown, "askperm: denied: cancelled: ")
	read := map[string]any{"tool_name": "Read", "input": map[string]any{"file_path": "/tmp/x"}}
	if got, want := approve(t, s, read), `{"behavior":"allow","updatedInput":{"file_path":"/tmp/x"}}`; got != want {
		t.Errorf("the next call: got %s, want %s", got, want)
	}
}

// waitShown waits until the terminal shows want.
func waitShown(t *testing.T, shown <-chan string, want string) {
	t.Helper()
	for deadline := time.After(20 * time.Second); ; {
		select {
		case s := <-shown:
			if s == want {
				return
			}
		case <-deadline:
			t.Errorf("the terminal never showed %q", want)
			return
		}
	}
}

// TestMCPRawExchange: an older client that writes its messages by hand,
// one JSON object a line, is served in its own protocol version.
func TestMCPRawExchange(t *testing.T) {
	cmd := exec.Command(bin, "mcp", "--answer", "deny-once", "--message", "not now")
	cmd.Env = baseEnv()
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(outPipe)
	exchange := func(send string) map[string]any {
		t.Helper()
		if _, err := in.Write([]byte(send + "\n")); err != nil {
			t.Fatal(err)
		}
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			if out.Scan() && json.Unmarshal(out.Bytes(), &m) == nil {
				got <- m
			}
			close(got)
		}()
		select {
		case m, ok := <-got:
			if !ok {
				t.Fatalf("no JSON answer to %s: %v", send, out.Err())
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("no answer to %s", send)
		}
		return nil
	}
	initialized := exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"by-hand","version":"0"}}}`)
	res, _ := initialized["result"].(map[string]any)
	info, _ := res["serverInfo"].(map[string]any)
	if res["protocolVersion"] != "2024-11-05" || info["name"] != "askperm" || res["capabilities"] == nil {
		t.Fatalf("initialize: %v", initialized)
	}
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	call := exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{"tool_name":"Bash","input":{"command":"rm -rf build"}}}}`)
	text, _ := json.Marshal(call["result"])
	if call["id"] != float64(1) || string(text) != `{"content":[{"text":"{\"behavior\":\"deny\",\"message\":\"askperm: denied (user): not now\"}","type":"text"}]}` {
		t.Errorf("tools/call: %v", call)
	}
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("askperm mcp at the end of its input: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("askperm mcp did not exit at the end of its input")
	}
}

// TestMCPWithoutSDK: askperm serves MCP by hand; the SDK is for the
// helpers and the tests (as the client these tests check the server
// with), and would cost every askperm process its start-up and size.
func TestMCPWithoutSDK(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the dependencies with:", err)
	}
	out, err := exec.Command("go", "list", "-deps", module).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/modelcontextprotocol/go-sdk") {
			t.Errorf("askperm depends on %s", dep)
		}
	}
}

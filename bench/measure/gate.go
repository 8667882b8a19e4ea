package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate: section 6. An MCP client calls the reference filesystem server's
// read_text_file directly and through `askperm gate` (a rules file
// allowing it, no memory), alternately, on two sessions open side by
// side.
func gate() {
	const what = "an allowed MCP tool call through `askperm gate` vs directly (reference filesystem server)"
	node, err := exec.LookPath("node")
	script, _ := filepath.Abs(filepath.Join(*repo, ".ci/tools/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"))
	if _, serr := os.Stat(script); err != nil || serr != nil {
		skip(what, "node or the reference filesystem server is not installed (.ci/run installs it)")
		return
	}
	dir := newHome()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello"), 0o600)
	rules := file("gate.toml", []byte("[[rule]]\ntool = \"read_text_file\"\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connect := func(argv ...string) (*mcp.ClientSession, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env(newHome())
		client := mcp.NewClient(&mcp.Implementation{Name: "askperm-bench", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
		if err != nil {
			return nil, err
		}
		if _, err := s.ListTools(ctx, nil); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	direct, err := connect(node, script, dir)
	if err != nil {
		skip(what, "the server: "+err.Error())
		return
	}
	defer direct.Close()
	gated, err := connect(*askperm, "gate", "--rules", rules, "--frontend", "none", "--", node, script, dir)
	if err != nil {
		skip(what, "the gate: "+err.Error())
		return
	}
	defer gated.Close()
	call := func(s *mcp.ClientSession) func(int) (time.Duration, error) {
		return func(int) (time.Duration, error) {
			start := time.Now()
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": notes}})
			d := time.Since(start)
			if err == nil && res.IsError {
				err = fmt.Errorf("the call failed: %v", res.Content)
			}
			return d, err
		}
	}
	calls := 20 * *runs
	g, d, err := pair(calls, call(gated), call(direct))
	if err != nil {
		skip(what, "failed: "+err.Error())
		return
	}
	add(row{fmt.Sprintf("%s (median of %d calls)", what, calls), ms(g), ms(d) + " (direct)",
		fmt.Sprintf("+%.2f ms", float64(g-d)/1e6), "< +2 ms", yes(g-d < 2*time.Millisecond)})
}

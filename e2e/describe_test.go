package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/describe"
)

// referenceServers are the reference MCP servers from npm (.ci/run
// installs them), as command lines serving dir.
func referenceServers(t *testing.T, dir string) map[string][]string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	servers := map[string][]string{}
	for name, args := range map[string][]string{
		"filesystem": {"server-filesystem/dist/index.js", dir},
		"everything": {"server-everything/dist/index.js", "stdio"},
		"memory":     {"server-memory/dist/index.js"},
	} {
		script, _ := filepath.Abs("../.ci/tools/node_modules/@modelcontextprotocol/" + args[0])
		if _, err := os.Stat(script); err == nil {
			servers[name] = append([]string{node, script}, args[1:]...)
		}
	}
	if len(servers) == 0 {
		t.Skip("the reference MCP servers are not installed (.ci/run installs them from npm): skipped")
	}
	return servers
}

// sampleArguments fills a tool's input schema: a path under dir for a
// property whose name says path, a URL for one that says url, a command
// for one that says command, an array of them for an array, a number, a
// boolean, and text otherwise.
func sampleArguments(schema any, dir string) map[string]any {
	props, _ := schema.(map[string]any)["properties"].(map[string]any)
	args := map[string]any{}
	for name, p := range props {
		typ, _ := p.(map[string]any)["type"].(string)
		lower := strings.ToLower(name)
		text := "some text"
		switch {
		case strings.Contains(lower, "path") || lower == "source" || lower == "destination":
			text = filepath.Join(dir, "sub", "file.txt")
		case strings.Contains(lower, "url"):
			text = "https://example.org/a/b"
		case strings.Contains(lower, "command"):
			text = "go test ./..."
		}
		switch typ {
		case "string":
			args[name] = text
		case "array":
			args[name] = []any{text}
		case "number", "integer":
			args[name] = 3
		case "boolean":
			args[name] = true
		}
	}
	return args
}

// allowedAtDefaults reports whether an allow-always of first, each
// dimension at its preselected scope, covers second.
func allowedAtDefaults(first, second *decision.Request) bool {
	if len(first.Dimensions) != len(second.Dimensions) {
		return false
	}
	for i, d := range first.Dimensions {
		if second.Dimensions[i].Name != d.Name || !d.Scopes[d.Default].Allows(second.Dimensions[i]) {
			return false
		}
	}
	return true
}

// TestDescribeReferenceServersTools: every tool of the reference servers,
// called with arguments that fit its schema, is described as a valid
// request whose scopes all cover the call and none covers everything,
// and whose every argument is bound by its default scopes; a
// path argument is offered its file and its folder, never more than the
// directory served; a tool's read-only annotation makes it a read.
func TestDescribeReferenceServersTools(t *testing.T) {
	dir := t.TempDir()
	described := 0
	for name, argv := range referenceServers(t, dir) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		client := mcp.NewClient(&mcp.Implementation{Name: "askperm-test", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", name, err)
		}
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tool := range tools.Tools {
			schema, _ := json.Marshal(tool.InputSchema)
			var parsed any
			json.Unmarshal(schema, &parsed)
			args, _ := json.Marshal(sampleArguments(parsed, dir))
			var ann *decision.Annotations
			if a := tool.Annotations; a != nil {
				ann = &decision.Annotations{Title: a.Title, ReadOnlyHint: &a.ReadOnlyHint, DestructiveHint: a.DestructiveHint}
			}
			req, err := describe.Describe(describe.Call{Server: name, Tool: tool.Name, Arguments: args, Annotations: ann, Workdir: dir})
			if err != nil {
				t.Errorf("%s/%s: %v", name, tool.Name, err)
				continue
			}
			if _, _, err := decision.EncodeRequest(req); err != nil {
				t.Errorf("%s/%s: not a valid request: %v", name, tool.Name, err)
			}
			if ann != nil && *ann.ReadOnlyHint && req.Action != "read" {
				t.Errorf("%s/%s: read-only but %s", name, tool.Name, req.Action)
			}
			for _, d := range req.Dimensions {
				for _, sc := range d.Scopes {
					if !sc.Covers(d.Value) || sc.Kind == decision.KindAny {
						t.Errorf("%s/%s: scope %+v for %q", name, tool.Name, sc, d.Value)
					}
					if sc.Kind == decision.KindPrefix && strings.HasPrefix(d.Value, "/") && !strings.HasPrefix(sc.Match, dir) {
						t.Errorf("%s/%s: scope %q reaches past the directory served", name, tool.Name, sc.Match)
					}
				}
				if strings.HasPrefix(d.Value, dir) && len(d.Scopes) < 2 {
					t.Errorf("%s/%s: path %s offered only %d scopes", name, tool.Name, d.Name, len(d.Scopes))
				}
			}
			// Every argument is bound: another value for any one of them
			// is not covered by an allow-always at the default scopes.
			var members map[string]any
			json.Unmarshal(args, &members)
			for member := range members {
				changed := map[string]any{}
				for k, v := range members {
					changed[k] = v
				}
				changed[member] = []any{"other", members[member]}
				raw, _ := json.Marshal(changed)
				other, err := describe.Describe(describe.Call{Server: name, Tool: tool.Name, Arguments: raw, Annotations: ann, Workdir: dir})
				if err == nil && allowedAtDefaults(req, other) {
					t.Errorf("%s/%s: an allow-always of %s covers %s", name, tool.Name, args, raw)
				}
			}
			described++
		}
		s.Close()
		cancel()
	}
	t.Logf("%d tools of %d reference servers described", described, len(referenceServers(t, dir)))
	if described < 10 {
		t.Errorf("only %d tools described", described)
	}
}

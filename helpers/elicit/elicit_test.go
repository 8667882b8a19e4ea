package elicit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/helpers"
	"github.com/askperm/askperm/internal/testbin"
)

// askperm is the askperm binary the bridge's helper runs, built once.
var askperm string

func TestMain(m *testing.M) { testbin.Main(m, &askperm) }

// helper is a permission helper written as a shell script, with $ASKPERM
// the askperm binary.
func helper(t *testing.T, body string) *helpers.Runner {
	t.Helper()
	p := filepath.Join(t.TempDir(), "helper")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "ASKPERM=" + askperm}
	return &helpers.Runner{Argv: []string{p}, Timeout: 10 * time.Second, Env: env, Stderr: &strings.Builder{}}
}

// elicitThrough runs an MCP server whose tool elicits with meta, and a
// client whose elicitation handler is the bridge to a helper script; it
// returns what the server got back.
func elicitThrough(t *testing.T, helperBody string, meta mcp.Meta, other func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ElicitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	server := mcp.NewServer(&mcp.Implementation{Name: "fs", Version: "1"}, nil)
	var got *mcp.ElicitResult
	mcp.AddTool(server, &mcp.Tool{Name: "write_file"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Meta: meta, Message: "May write_file write /tmp/x?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"choice": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		got = res
		return &mcp.CallToolResult{}, nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: Handler(helper(t, helperBody), other)})
	// The last protocol version in which a server elicits while it serves
	// a tool call (later ones return input requests instead).
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		t.Fatalf("the server's elicitation failed: %s", b)
	}
	return got
}

// permission is the _meta of a permission elicitation for a request with
// a dimension of two scopes and a grant.
func permission() mcp.Meta {
	var req map[string]any
	_ = json.Unmarshal([]byte(`{"id":"e1","tool":"write_file","action":"write","grants":[{"name":"fs.write"}],
		"dimensions":[{"name":"path","value":"/tmp/x","scopes":[{"label":"file","match":"/tmp/x"},{"label":"dir","match":"/tmp/","kind":"prefix"}]}]}`), &req)
	return mcp.Meta{MetaKey: req}
}

// An MCP client answers a permission elicitation through askperm, in the
// flat native form.
func TestElicitationThroughAskperm(t *testing.T) {
	for _, tc := range []struct {
		args string
		want map[string]any
	}{
		{`--answer allow-once`, map[string]any{"choice": "allow-once", "grants": "fs.write"}},
		{`--answer deny-once --message nope`, map[string]any{"choice": "deny-once", "message": "nope"}},
		{`--answer allow-always`, map[string]any{"choice": "allow-always", "grants": "fs.write", "scope_path": "/tmp/x", "lifetime": "indefinite"}},
	} {
		res := elicitThrough(t, `"$ASKPERM" --no-remember `+tc.args, permission(), nil)
		if res == nil || res.Action != "accept" || len(res.Content) != len(tc.want) {
			t.Fatalf("%s: %+v", tc.args, res)
		}
		for k, v := range tc.want {
			if res.Content[k] != v {
				t.Errorf("%s: %s = %v, want %v", tc.args, k, res.Content[k], v)
			}
		}
	}
}

// A helper that fails is a deny with its reason; an elicitation that is
// not about permission goes to the application's handler, or is declined.
func TestElicitationOtherwise(t *testing.T) {
	res := elicitThrough(t, `cat >/dev/null; exit 9`, permission(), nil)
	if res.Action != "accept" || res.Content["choice"] != "deny-once" || res.Content["message"] == nil {
		t.Errorf("failing helper: %+v", res)
	}
	res = elicitThrough(t, `exit 1`, nil, nil)
	if res.Action != "decline" {
		t.Errorf("no application handler: %+v", res)
	}
	app := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x"}}, nil
	}
	if res = elicitThrough(t, `exit 1`, mcp.Meta{"other": 1}, app); res.Content["name"] != "x" {
		t.Errorf("the application's handler was not asked: %+v", res)
	}
	bad := mcp.Meta{MetaKey: map[string]any{"tool": 1}}
	if res = elicitThrough(t, `exit 1`, bad, nil); res.Content["choice"] != "deny-once" {
		t.Errorf("an invalid request: %+v", res)
	}
}

// The server reads the answer back with form.ElicitationAnswer: what the
// bridge sent decides as askperm decided, and a declined or cancelled
// elicitation is deny once.
func TestElicitationReadBack(t *testing.T) {
	b, _ := json.Marshal(permission()[MetaKey])
	req, err := decision.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	f := form.New(req, form.Options{})
	res := elicitThrough(t, `"$ASKPERM" --no-remember --answer allow-always`, permission(), nil)
	a, err := f.ElicitationAnswer(res.Action, res.Content)
	d, derr := f.Decide(a, decision.FrontendAnswers, time.Now())
	if err != nil || derr != nil || d.Decision != decision.Allow || d.Persist != decision.PersistAlways || d.Rule.Scopes["path"] != "/tmp/x" {
		t.Errorf("read back: %+v, %v, %v", d, err, derr)
	}
	decline := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	res = elicitThrough(t, `exit 1`, mcp.Meta{"other": 1}, decline)
	a, _ = f.ElicitationAnswer(res.Action, res.Content)
	if d, _ := f.Decide(a, decision.FrontendAnswers, time.Now()); d.Decision != decision.Deny || d.Persist != decision.PersistOnce {
		t.Errorf("declined: %+v", d)
	}
}

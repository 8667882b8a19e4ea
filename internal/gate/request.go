package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/describe"
	"github.com/askperm/askperm/internal/jsonnames"
	"github.com/askperm/askperm/internal/jsonrpc"
)

// errNoTool is a tools/call whose params name no tool.
var errNoTool = errors.New("the call names no tool")

// describeCall is the request of a tools/call's params for the server
// known as name, with the annotations its tools/list gave the tool (nil:
// none known).
func describeCall(name string, params json.RawMessage, annotations func(tool string) *decision.Annotations) (*decision.Request, error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
		return nil, errNoTool
	}
	return describe.Describe(describe.Call{Server: name, Tool: p.Name, Arguments: p.Arguments, Annotations: annotations(p.Name)})
}

// CallRequest is the request the gate builds for line, one JSON-RPC
// tools/call a client sends, when the server it runs is known as name
// and its tools/list gave the called tool the annotations given (nil:
// none). It is what askperm explain mcp-call shows.
func CallRequest(line []byte, name string, annotations *decision.Annotations) (*decision.Request, error) {
	line = bytes.TrimSpace(line)
	env, code := jsonrpc.Decode(line)
	if code != 0 || !jsonnames.Unambiguous(line) {
		return nil, errors.New("not a JSON-RPC message the gate can read unambiguously")
	}
	if env.Method != "tools/call" {
		return nil, fmt.Errorf("method %q: the gate asks about tools/call only", env.Method)
	}
	return describeCall(name, env.Params, func(string) *decision.Annotations { return annotations })
}

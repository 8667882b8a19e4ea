// Package permtool owns askperm's permission-prompt tool for Claude Code
// (claude -p --permission-prompt-tool): the MCP tool "approve", checking
// the arguments Claude Code sends it, describing the tool call as an
// askperm request, having the pipeline decide it, and the JSON answer
// Claude Code reads back; and the MCP server on stdio that serves it
// (Serve), written by hand for its one tool so that every askperm process
// does not carry a full MCP implementation.
//
// The tool fails closed: a malformed call, or an outcome that is not a
// decision, answers deny with the error, never allow.
package permtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/hook"
	"github.com/askperm/askperm/internal/pipeline"
)

// Name is the tool's name: Claude Code calls it as mcp__<server>__approve.
const Name = "approve"

// inputSchema is what Claude Code sends. Arguments are validated by
// Parse, not against the schema, so that a bad call still gets a deny
// answer rather than a protocol error the agent might not treat as a
// refusal.
var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"tool_name":{"type":"string","description":"the tool Claude Code wants to run"},` +
	`"input":{"type":"object","description":"the tool's arguments"},` +
	`"tool_use_id":{"type":"string"}},` +
	`"required":["tool_name","input"]}`)

// tool is the approve tool's definition, as tools/list gives it.
type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

var approveTool = tool{Name: Name, Description: "Asks askperm whether the tool call may run.", InputSchema: inputSchema}

// Call is one permission question from Claude Code.
type Call struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// Parse checks a call's raw arguments.
func Parse(args json.RawMessage) (Call, error) {
	var c Call
	if err := json.Unmarshal(args, &c); err != nil {
		return c, fmt.Errorf("not a permission prompt call: %w", err)
	}
	switch {
	case c.ToolName == "":
		return c, errors.New("the call names no tool (tool_name)")
	case len(c.Input) == 0 || c.Input[0] != '{':
		return c, errors.New("input: expected a JSON object")
	}
	return c, nil
}

// Config is what the tool needs to decide, and to name itself.
type Config struct {
	Pipeline *pipeline.Pipeline
	// Workdir is the agent's directory, when known: Claude Code does not
	// send it, but starts its MCP servers there.
	Workdir string
	// Version is askperm's, for the initialize answer's serverInfo.
	Version string
}

// Result is how one call ended: a decision about Call, or an error.
type Result struct {
	Call     Call
	Decision *decision.Decision
	Err      error
}

// Decide decides one call's raw arguments.
func Decide(ctx context.Context, c Config, args json.RawMessage) Result {
	call, err := Parse(args)
	if err != nil {
		return Result{Call: call, Err: err}
	}
	req, err := hook.ClaudeCode.Request(call.ToolName, call.Input, c.Workdir, "") // described as the hook describes it, so rules cover both
	if err != nil {
		return Result{Call: call, Err: err}
	}
	out := c.Pipeline.DecideRequest(ctx, req)
	if out.Decision == nil {
		err := out.Err
		if err == nil {
			err = errors.New("no decision")
		}
		return Result{Call: call, Err: err}
	}
	return Result{Call: call, Decision: out.Decision}
}

// answer is the JSON Claude Code reads from the tool's one text item.
type answer struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// Answer is the text of r's answer: allow only for an allow decision, with
// the input unchanged; deny otherwise.
func Answer(r Result) []byte {
	a := answer{Behavior: decision.Deny}
	switch {
	case r.Err != nil || r.Decision == nil:
		msg := "askperm: no decision"
		if r.Err != nil {
			msg = "askperm: " + r.Err.Error()
		}
		a.Message = msg
	case r.Decision.Decision == decision.Allow:
		a.Behavior, a.UpdatedInput = decision.Allow, r.Call.Input
	default:
		a.Message = hook.Reason(*r.Decision)
	}
	b, err := json.Marshal(a)
	if err != nil { // only an invalid input could fail, and Parse rejects it
		return []byte(`{"behavior":"deny","message":"askperm: cannot encode the answer"}`)
	}
	return b
}

// Package hook answers agents' permission hooks: it reads an agent's hook
// payload, describes the tool call as an askperm request, has the pipeline
// decide it (rules, memory, canned answers, frontends, audit), and writes
// the answer in the agent's own hook format.
//
// A hook that fails must block, never let the call run: every payload or
// outcome that is not a decision is an error, which the command turns into
// the agent's blocking exit status.
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/describe"
	"github.com/askperm/askperm/internal/pipeline"
)

// The hook events askperm answers.
const (
	preToolUse        = "PreToolUse"
	permissionRequest = "PermissionRequest"
)

// Agent is an agent whose permission hooks askperm answers. Claude Code
// and Codex share the payload's shape; they differ in the events they
// send, the server their built-in tools are named by, and what an answer
// may carry.
type Agent struct {
	Name   string   // its subcommand
	title  string   // in messages
	server string   // of the agent's built-in tools in requests
	events []string // the hook events askperm answers for it
	// updates: the answer may carry updatedPermissions and interrupt;
	// Codex fails a hook whose answer does.
	updates bool
}

// The agents askperm answers.
var (
	ClaudeCode = Agent{Name: "claude-code", title: "Claude Code", server: claudeServer, events: []string{preToolUse, permissionRequest}, updates: true}
	Codex      = Agent{Name: "codex", title: "Codex", server: "codex", events: []string{permissionRequest}}
)

// claudeServer is the server of Claude Code's built-in tools in requests.
const claudeServer = "claude-code"

// input is the part of a hook payload askperm reads; the agent's other
// fields (transcript_path, permission_mode, tool_use_id, turn_id,
// permission_suggestions, …) are accepted and ignored.
type input struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

// keyArguments are, per built-in tool, the arguments that say what
// the call does: only they become dimensions an always-rule scopes, as
// Claude Code's own rules do. Other tools scope all their arguments.
var keyArguments = map[string][]string{
	"Bash":         {"command"},
	"Read":         {"file_path"},
	"Write":        {"file_path"},
	"Edit":         {"file_path"},
	"MultiEdit":    {"file_path"},
	"NotebookEdit": {"notebook_path"},
	"WebFetch":     {"url"},
	"Glob":         {"path", "pattern"},
	"Grep":         {"path", "pattern"},
	"LS":           {"path"},
}

// Built-in tools by what they do; any other tool is destructive (MCP's
// default for a tool with no annotations).
var (
	readers = []string{"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "NotebookRead"}
	writers = []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}
)

// Answer decides one hook payload of the agent and returns what the hook
// writes on stdout; nil with a nil error is no answer (the agent asks
// itself). An error means the hook must block.
func (a Agent) Answer(ctx context.Context, p *pipeline.Pipeline, payload []byte) ([]byte, error) {
	in, err := a.parse(payload)
	if err != nil {
		return nil, err
	}
	req, err := a.Request(in.ToolName, in.ToolInput, in.Cwd, in.SessionID)
	if err != nil {
		return nil, err
	}
	raw, _, err := decision.EncodeRequest(req)
	if err != nil {
		return nil, fmt.Errorf("the tool call cannot be asked about: %w", err)
	}
	out := p.Decide(ctx, raw)
	if out.Decision == nil {
		return nil, out.Err
	}
	return a.answer(in.HookEventName, req, *out.Decision), nil
}

func (a Agent) parse(payload []byte) (input, error) {
	var in input
	if err := json.Unmarshal(payload, &in); err != nil {
		return in, fmt.Errorf("not a %s hook payload: %w", a.title, err)
	}
	switch {
	case !slices.Contains(a.events, in.HookEventName):
		return in, fmt.Errorf("hook_event_name %q: askperm answers %s's %s", in.HookEventName, a.title, strings.Join(a.events, " and "))
	case in.ToolName == "":
		return in, errors.New("the payload names no tool (tool_name)")
	case len(in.ToolInput) == 0 || in.ToolInput[0] != '{':
		return in, errors.New("tool_input: expected a JSON object")
	}
	return in, nil
}

// Request describes a call of the agent's tool toolName with the JSON
// object toolInput: built-in tools as the agent's server, MCP tools
// (mcp__server__tool) as their server and tool; the Bash description is
// the agent's reason. Claude Code's permission-prompt tool shares it.
func (a Agent) Request(toolName string, toolInput json.RawMessage, workdir, sessionID string) (*decision.Request, error) {
	server, tool := a.server, toolName
	if s, t, ok := mcpTool(toolName); ok {
		server, tool = s, t
	}
	call := describe.Call{Server: server, Tool: tool, Arguments: toolInput, Workdir: workdir, Annotations: annotations(toolName)}
	if names, ok := keyArguments[toolName]; ok {
		key, err := pick(toolInput, names)
		if err != nil {
			return nil, err
		}
		call.Arguments = key
	}
	req, err := describe.Describe(call)
	if err == nil && len(req.Dimensions) == 0 && len(call.Arguments) != len(toolInput) {
		// No key argument the describer recognises (absent, not a string):
		// a rule of no dimensions would cover every call of the tool, so
		// scope all the arguments instead.
		call.Arguments = toolInput
		req, err = describe.Describe(call)
	}
	if err != nil {
		return nil, err
	}
	req.Arguments = toolInput // rules and the person see every argument
	req.SessionID = sessionID
	if toolName == "Bash" {
		var bash struct {
			Description string `json:"description"`
		}
		if json.Unmarshal(toolInput, &bash) == nil && len(bash.Description) <= decision.MaxLineBytes {
			req.Reason = bash.Description
		}
	}
	return req, nil
}

// mcpTool splits Claude Code's name of an MCP tool, mcp__server__tool.
func mcpTool(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	if !ok || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

func annotations(tool string) *decision.Annotations {
	switch {
	case slices.Contains(readers, tool):
		return &decision.Annotations{ReadOnlyHint: new(true)}
	case slices.Contains(writers, tool):
		return &decision.Annotations{DestructiveHint: new(false)}
	}
	return nil
}

// pick is the JSON object of args's members named in names.
func pick(args json.RawMessage, names []string) (json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(args, &all); err != nil {
		return nil, fmt.Errorf("tool_input: %w", err)
	}
	key := map[string]json.RawMessage{}
	for _, n := range names {
		if v, ok := all[n]; ok {
			key[n] = v
		}
	}
	return json.Marshal(key)
}

// output is a hook's JSON answer.
type output struct {
	HookSpecificOutput specific `json:"hookSpecificOutput"`
}

type specific struct {
	HookEventName            string   `json:"hookEventName"`
	PermissionDecision       string   `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string   `json:"permissionDecisionReason,omitempty"`
	Decision                 *verdict `json:"decision,omitempty"`
}

type verdict struct {
	Behavior           string             `json:"behavior"`
	Message            string             `json:"message,omitempty"`
	Interrupt          bool               `json:"interrupt,omitempty"`
	UpdatedPermissions []claudePermission `json:"updatedPermissions,omitempty"`
}

// claudePermission is one permission update of a PermissionRequest answer.
type claudePermission struct {
	Type        string       `json:"type"`
	Rules       []claudeRule `json:"rules"`
	Behavior    string       `json:"behavior"`
	Destination string       `json:"destination"`
}

type claudeRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// answer is the hook's answer to decision d of req, or nil when nobody
// could ask: PreToolUse then answers ask, PermissionRequest nothing, both
// handing the question back to the agent's own prompt.
func (a Agent) answer(event string, req *decision.Request, d decision.Decision) []byte {
	unavailable := d.Cause == decision.CauseUnavailable
	o := output{HookSpecificOutput: specific{HookEventName: event}}
	switch event {
	case preToolUse:
		o.HookSpecificOutput.PermissionDecision = d.Decision
		o.HookSpecificOutput.PermissionDecisionReason = Reason(d)
		if unavailable {
			o.HookSpecificOutput.PermissionDecision = "ask"
			o.HookSpecificOutput.PermissionDecisionReason = "askperm: nothing here can ask; the agent asks instead"
		}
	case permissionRequest:
		if unavailable {
			return nil
		}
		cd := &verdict{Behavior: d.Decision}
		if d.Decision == decision.Deny {
			cd.Message = Reason(d)
			cd.Interrupt = a.updates && d.Stop
		}
		if p, ok := claudeUpdate(req, d); ok && a.updates {
			cd.UpdatedPermissions = []claudePermission{p}
		}
		o.HookSpecificOutput.Decision = cd
	}
	b, _ := json.Marshal(o) // plain strings and structs: cannot fail
	return append(b, '\n')
}

// Reason is what the agent reads of a decision.
func Reason(d decision.Decision) string {
	verb := "denied"
	if d.Decision == decision.Allow {
		verb = "allowed"
	}
	s := "askperm: " + verb + " (" + string(d.Cause) + ")"
	if d.Message != "" {
		s += ": " + d.Message
	}
	return s
}

// claudeUpdate is the Claude Code rule an always- or session-decision
// implies, when one says exactly what askperm's rule says; otherwise only
// askperm remembers it. Destinations: session for allow-session, the
// project's local settings for a rule of this workdir, the user's settings
// for one of every workdir.
func claudeUpdate(req *decision.Request, d decision.Decision) (claudePermission, bool) {
	var scopes map[string]string
	switch {
	case d.Persist == decision.PersistSession:
		// A session approval covers the exact values of this call.
		scopes = map[string]string{}
		for _, dim := range req.Dimensions {
			scopes[dim.Name] = dim.Value
		}
	case d.Persist != decision.PersistAlways || d.Rule == nil:
		return claudePermission{}, false
	case d.Rule.Lifetime != decision.LifetimeIndefinite:
		return claudePermission{}, false // Claude Code's rules never expire
	default:
		scopes = d.Rule.Scopes
	}
	toolName := req.Tool
	if req.Server != claudeServer {
		toolName = "mcp__" + req.Server + "__" + req.Tool
	}
	content, ok := claudeContent(req, scopes)
	if !ok {
		return claudePermission{}, false
	}
	dest := "userSettings"
	switch {
	case d.Persist == decision.PersistSession:
		dest = "session"
	case d.Rule != nil && d.Rule.WorkdirScope == decision.WorkdirSelected:
		dest = "localSettings"
	}
	return claudePermission{Type: "addRules", Rules: []claudeRule{{ToolName: toolName, RuleContent: content}},
		Behavior: d.Decision, Destination: dest}, true
}

// claudeContent is the rule content covering what the chosen scopes
// (dimension name to match) cover: none when
// every dimension is any; for Bash, the exact command or its leading words
// as a prefix. Anything else has no equal in Claude Code's rules.
func claudeContent(req *decision.Request, scopes map[string]string) (string, bool) {
	var narrow []decision.Scope
	for _, dim := range req.Dimensions {
		i := slices.IndexFunc(dim.Scopes, func(s decision.Scope) bool { return s.Match == scopes[dim.Name] })
		if i < 0 {
			return "", false
		}
		if dim.Scopes[i].Kind != decision.KindAny {
			narrow = append(narrow, dim.Scopes[i])
		}
	}
	switch {
	case len(narrow) == 0:
		return "", true
	case len(narrow) > 1 || req.Server != claudeServer || req.Tool != "Bash":
		return "", false
	}
	s := narrow[0]
	switch {
	case s.Kind == decision.KindWords:
		return s.Match + ":*", true
	case s.Kind == decision.KindExact && !strings.ContainsAny(s.Match, "*()\\\n"):
		return s.Match, true
	}
	return "", false
}

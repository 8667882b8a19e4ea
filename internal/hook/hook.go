// Package hook answers agents' permission hooks: it reads an agent's hook
// payload, describes the tool call as an askperm request, has the pipeline
// decide it (rules, memory, canned answers, frontends, audit), and writes
// the answer in the agent's own hook format.
//
// A hook that fails must block, never let the call run: every payload or
// outcome that is not a decision is an error, which the command turns into
// what the event obeys: a deny answer for PermissionRequest (Deny), the
// agent's blocking exit status for PreToolUse.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
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

// flag is an argument of a built-in tool that changes what a call does
// although its key arguments are the same: a fact of every call, its value
// absent when the call leaves it out, so that a rule or session approval
// of a call without it never covers one with it.
type flag struct{ name, label, absent string }

// flags are, per built-in tool, its flags. Bash: dangerouslyDisableSandbox
// runs the command outside the sandbox, run_in_background lets it outlive
// the call. Not flags: Bash's timeout (it only cuts the run short) and
// description (the agent's words); what Write, Edit, MultiEdit and
// NotebookEdit write (content, old_string, new_string, replace_all,
// edit_mode, new_source: a rule about a file covers what is written into
// it, and the person sees it in the arguments); WebFetch's prompt (it
// goes to Claude Code's own model, the fetch is the same); Read's offset
// and limit and the search tools' filters (glob, type, output_mode,
// context lines: they only narrow what the bound path and pattern read).
var flags = map[string][]flag{
	"Bash": {{"dangerouslyDisableSandbox", "Sandbox disabled", "false"}, {"run_in_background", "In the background", "false"}},
}

// Built-in tools by what they do; any other tool is destructive (MCP's
// default for a tool with no annotations). WebFetch and WebSearch reach
// the network: open-world, never read-only, whatever they leave alone
// on the machine.
var (
	readers = []string{"Read", "Glob", "Grep", "LS", "NotebookRead"}
	writers = []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}
	network = []string{"WebFetch", "WebSearch"}
)

// Answer decides one hook payload of the agent and returns what the hook
// writes on stdout; nil with a nil error is no answer (the agent asks
// itself). An error means the hook must block.
func (a Agent) Answer(ctx context.Context, p *pipeline.Pipeline, payload []byte) ([]byte, error) {
	in, req, err := a.requestOf(payload)
	if err != nil {
		return nil, err
	}
	out := p.DecideRequest(ctx, req)
	if out.Decision == nil {
		return nil, out.Err
	}
	return a.answer(in.HookEventName, req, *out.Decision), nil
}

// PayloadRequest is the request askperm builds from one hook payload of
// the agent, as Answer has it decided: what askperm explain shows.
func (a Agent) PayloadRequest(payload []byte) (*decision.Request, error) {
	_, req, err := a.requestOf(payload)
	return req, err
}

func (a Agent) requestOf(payload []byte) (input, *decision.Request, error) {
	in, err := a.parse(payload)
	if err != nil {
		return in, nil, err
	}
	req, err := a.Request(in.ToolName, in.ToolInput, in.Cwd, in.SessionID)
	return in, req, err
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
	// An MCP server named as the agent would otherwise pass its tools off
	// as built-in ones, and their rules as its: it keeps the full name.
	if s, t, ok := mcpTool(toolName); ok && s != a.server {
		server, tool = s, t
	}
	call := describe.Call{Server: server, Tool: tool, Arguments: toolInput, Workdir: workdir, Annotations: annotations(toolName)}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(toolInput, &all); err != nil {
		return nil, fmt.Errorf("tool_input: %w", err)
	}
	names, keyed := keyArguments[toolName]
	if keyed {
		call.Arguments = pick(all, names)
	}
	req, err := describe.Describe(call)
	if err != nil {
		return nil, err
	}
	if keyed && !slices.ContainsFunc(req.Dimensions, func(d decision.Dimension) bool { return slices.Contains(names, d.Name) }) {
		// No key argument the describer recognises (absent, not a
		// string): all the arguments, exactly, pin the call, its flags
		// too.
		canonical, err := decision.Canonical(toolInput)
		if err != nil {
			return nil, fmt.Errorf("tool_input: %w", err)
		}
		req.Details = nil
		req.Dimensions = []decision.Dimension{describe.Exact(req, "arguments", "Arguments", string(canonical))}
		keyed = false
	}
	if keyed {
		for _, f := range flags[toolName] {
			value := f.absent
			if v, ok := all[f.name]; ok {
				c, err := decision.Canonical(v)
				if err != nil {
					return nil, fmt.Errorf("tool_input: %s: %w", f.name, err)
				}
				value = string(c)
			}
			req.Dimensions = append(req.Dimensions, describe.Exact(req, f.name, f.label, value))
		}
	}
	if server != a.server {
		anyValue(req)
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

// anyValue offers, last, an any scope on each dimension of an MCP tool's
// request: a person may allow or deny every call of such a tool, which
// Claude Code can also hold as a rule naming the tool alone (claudeCopy).
// The narrowest scope stays the default; built-in tools get none, since
// Claude Code's rule for a whole built-in tool (Bash) covers far more than
// anything askperm's scopes name.
func anyValue(req *decision.Request) {
	for i := range req.Dimensions {
		d := &req.Dimensions[i]
		if len(d.Scopes) == 0 || slices.ContainsFunc(d.Scopes, func(s decision.Scope) bool { return s.Match == anyMatch }) {
			continue
		}
		d.Scopes = append(d.Scopes, decision.Scope{Label: "any value: every call of this tool", Match: anyMatch, Kind: decision.KindAny})
	}
}

// anyMatch is the match of the any scope anyValue offers: only a label.
const anyMatch = "*"

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
		return &decision.Annotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)}
	case slices.Contains(writers, tool):
		return &decision.Annotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
	case slices.Contains(network, tool):
		return &decision.Annotations{DestructiveHint: new(false), OpenWorldHint: new(true)}
	}
	return nil
}

// pick is the JSON object of all's members named in names.
func pick(all map[string]json.RawMessage, names []string) json.RawMessage {
	key := map[string]json.RawMessage{}
	for _, n := range names {
		if v, ok := all[n]; ok {
			key[n] = v
		}
	}
	b, _ := json.Marshal(key) // members of a parsed object: cannot fail
	return b
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

// claudeRule is a rule of Claude Code's: askperm gives only a tool's name
// (ClaudeCopyOf), never rule content.
type claudeRule struct {
	ToolName string `json:"toolName"`
}

// answer is the hook's answer to decision d of req, or nil when nobody
// could ask: PreToolUse then answers ask, PermissionRequest nothing, both
// handing the question back to the agent's own prompt. A deny never
// carries updatedPermissions: Claude Code's deny answer takes none.
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
		} else if c, ok := a.copyOf(req, d); ok {
			cd.UpdatedPermissions = []claudePermission{{Type: "addRules", Rules: []claudeRule{{ToolName: c.Rule}},
				Behavior: decision.Allow, Destination: c.destination}}
		}
		o.HookSpecificOutput.Decision = cd
	}
	b, _ := json.Marshal(o) // plain strings and structs: cannot fail
	return append(b, '\n')
}

// Deny is the answer that denies a call of a hook event with message, for
// a hook that failed: the PermissionRequest deny, which Claude Code and
// Codex both obey (Claude Code hands a PermissionRequest hook that exits 2
// on to the next approver, which may allow; Codex reads exit 2 with a
// reason on stderr as a deny, and the deny answer alike); false for
// another event, whose failure is the blocking exit status.
func (a Agent) Deny(event, message string) ([]byte, bool) {
	if event != permissionRequest || !slices.Contains(a.events, event) {
		return nil, false
	}
	b, _ := json.Marshal(output{HookSpecificOutput: specific{HookEventName: event,
		Decision: &verdict{Behavior: decision.Deny, Message: message}}})
	return append(b, '\n'), true
}

// Event is the hook event a payload names, read as leniently as can be:
// from the payload's own hook_event_name even when other fields are
// invalid, "" when it names none that can be told.
func Event(payload []byte) string {
	var in struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(payload, &in) == nil {
		return in.HookEventName
	}
	// Not JSON as a whole: the top-level members before it breaks still
	// tell the event, unless they name two.
	dec := json.NewDecoder(bytes.NewReader(payload))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	event := ""
	for dec.More() {
		k, err := dec.Token()
		var v json.RawMessage
		if err != nil || dec.Decode(&v) != nil {
			break
		}
		var name string
		switch {
		case !strings.EqualFold(fmt.Sprint(k), "hook_event_name"): // as json.Unmarshal matches names
		case json.Unmarshal(v, &name) != nil || event != "" && name != event:
			return ""
		default:
			event = name
		}
	}
	return event
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

// ClaudeCopy is a copy Claude Code keeps of an askperm rule: its rule and
// the settings file it lives in.
type ClaudeCopy struct {
	Rule, Settings string
	destination    string // in updatedPermissions
}

// ClaudeCopyOf is the copy Claude Code is given of an askperm rule that
// allows tool of server with the given kinds of its dimensions' scopes,
// for the selected workdir or all (workdirScope), forever or not; false
// when it is given none. Only a rule whose every dimension the person
// set to any has one, the tool's name alone: Claude Code's Bash rules are
// wider than any scope askperm offers (it strips leading safe variable
// assignments, comment lines and wrappers such as timeout, nice and nohup
// before matching, matches each part of a compound command apart, its
// `*` matches across spaces, so `Bash(rm -rf build/*)` would allow `rm
// -rf build/x /`, and it binds none of the call's flags), its path rules cover every tool that
// edits and everything below a folder, and its rules never expire. Deny
// rules have none (a deny answer takes no rules). A rule with no
// dimension has none either: it was no one's choice of any.
func ClaudeCopyOf(verdict, server, tool string, kinds []decision.ScopeKind, workdirScope string, indefinite bool) (ClaudeCopy, bool) {
	if verdict != decision.Allow || !indefinite || len(kinds) == 0 ||
		slices.ContainsFunc(kinds, func(k decision.ScopeKind) bool { return k != decision.KindAny }) {
		return ClaudeCopy{}, false
	}
	name := tool
	if server != claudeServer {
		name = "mcp__" + server + "__" + tool
	}
	if workdirScope == decision.WorkdirSelected {
		return ClaudeCopy{Rule: name, Settings: "the project's .claude/settings.local.json", destination: "localSettings"}, true
	}
	return ClaudeCopy{Rule: name, Settings: "~/.claude/settings.json", destination: "userSettings"}, true
}

// copyOf is the copy the agent is given of the rule decision d of req
// saves, if any.
func (a Agent) copyOf(req *decision.Request, d decision.Decision) (ClaudeCopy, bool) {
	if !a.updates || d.Persist != decision.PersistAlways || d.Rule == nil {
		return ClaudeCopy{}, false
	}
	return ClaudeCopyOf(d.Decision, req.Server, req.Tool, chosenKinds(req, d.Rule.Scopes), d.Rule.WorkdirScope,
		d.Rule.Lifetime == decision.LifetimeIndefinite)
}

// chosenKinds are the kinds of the scopes chosen (dimension name to match)
// for req's dimensions; a match no scope has counts as exact.
func chosenKinds(req *decision.Request, scopes map[string]string) []decision.ScopeKind {
	kinds := make([]decision.ScopeKind, len(req.Dimensions))
	for i, dim := range req.Dimensions {
		kinds[i] = decision.KindExact
		if j := slices.IndexFunc(dim.Scopes, func(s decision.Scope) bool { return s.Match == scopes[dim.Name] }); j >= 0 {
			kinds[i] = dim.Scopes[j].Kind
		}
	}
	return kinds
}

// RuleNote says, in the rule stage, who keeps the rule answer a would
// save for req: askperm alone, or Claude Code too, in which words.
func (a Agent) RuleNote(req *decision.Request, ans form.Answer) string {
	verdict := decision.Deny
	if ans.Choice.IsAllow() {
		verdict = decision.Allow
	}
	if c, ok := ClaudeCopyOf(verdict, req.Server, req.Tool, chosenKinds(req, ans.Scopes), ans.WorkdirScope,
		ans.Lifetime == decision.LifetimeIndefinite); ok && a.updates {
		return a.title + " keeps a copy too: its rule " + form.Line(c.Rule) + " in " + c.Settings
	}
	return "askperm alone keeps it: " + a.title + " is given no rule of its own"
}

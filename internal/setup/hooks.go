// Package setup owns askperm's set-up helpers: where each agent keeps its
// hook configuration, adding askperm's hook to it without disturbing the
// rest (install), and checking the set-up a person has (doctor). It
// decides no request.
package setup

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// Agents are the agents askperm installs a hook for.
var Agents = []string{"claude-code", "codex"}

// Event is the hook event askperm is installed on: the agent asks it only
// where it would ask the person (docs: "Agents' permission hooks").
const Event = "PermissionRequest"

// HookTimeout is the agents' timeout for askperm's hook, in seconds:
// longer than the hook's own default deadline (50 s), so that askperm
// answers before the agent gives up on it.
const HookTimeout = 60

// Found is one hook command that runs askperm's hook, in a configuration
// file.
type Found struct {
	Event   string // the hook event, e.g. PermissionRequest
	Command string // the command as written
	Binary  string // its program, as written
}

// HookCommand is the command line of askperm's hook for agent, run by
// binary (quoted for the shell the agents run hook commands with).
func HookCommand(binary, agent string) string {
	return shellQuote(binary) + " hook " + agent
}

// shellQuote quotes s for a POSIX shell when it holds more than plain
// path characters.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%=", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookGroup is the matcher group askperm's hook is installed as, in the
// agents' shared hooks schema (Codex's has no matcher for
// PermissionRequest: it asks about every approval).
type hookGroup struct {
	Matcher string      `json:"matcher,omitempty"`
	Hooks   []hookEntry `json:"hooks"`
}

type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

func newHookGroup(binary, agent string) hookGroup {
	g := hookGroup{Hooks: []hookEntry{{Type: "command", Command: HookCommand(binary, agent), Timeout: HookTimeout}}}
	if agent == "claude-code" {
		g.Matcher = "*"
	}
	return g
}

// Hooks lists the commands in a decoded configuration (JSON or TOML, the
// agents' common shape: hooks → event → groups → hooks → command) that run
// `askperm hook agent`: a program named askperm, or self (the running
// binary, whatever its name).
func Hooks(config map[string]any, agent, self string) []Found {
	events, _ := config["hooks"].(map[string]any)
	names := make([]string, 0, len(events))
	for name := range events {
		names = append(names, name)
	}
	slices.Sort(names)
	var found []Found
	for _, event := range names {
		for _, g := range list(events[event]) {
			group, _ := g.(map[string]any)
			for _, h := range list(group["hooks"]) {
				hook, _ := h.(map[string]any)
				cmd, _ := hook["command"].(string)
				if bin, ok := runsHook(cmd, agent, self); ok {
					found = append(found, Found{Event: event, Command: cmd, Binary: bin})
				}
			}
		}
	}
	return found
}

// list is v as a list: JSON arrays decode to []any, TOML arrays of
// tables to []map[string]any.
func list(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case []map[string]any:
		out := make([]any, len(v))
		for i, m := range v {
			out[i] = m
		}
		return out
	}
	return nil
}

// runsHook reports whether the shell command cmd runs `askperm hook
// agent`, and with which program.
func runsHook(cmd, agent, self string) (string, bool) {
	words, err := shell.Fields(cmd, func(string) string { return "" })
	if err != nil || len(words) < 3 {
		return "", false
	}
	askperm := filepath.Base(words[0]) == "askperm" || words[0] == self
	return words[0], askperm && words[1] == "hook" && words[2] == agent
}

// checkAgent refuses an agent askperm has no hook for.
func checkAgent(agent string) error {
	if !slices.Contains(Agents, agent) {
		return fmt.Errorf("unknown agent %q (known: %s)", agent, strings.Join(Agents, ", "))
	}
	return nil
}

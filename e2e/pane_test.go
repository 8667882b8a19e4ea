package e2e

import (
	"strings"
	"testing"
)

// TestPaneAnswersQueuedHooks: askperm pane holds a terminal; two Claude
// Code hooks started while it runs find it without flags, queue, and are
// asked there one after the other, in the order they came; then a Codex
// hook.
func TestPaneAnswersQueuedHooks(t *testing.T) {
	env := memoryEnv("TERM=xterm-256color")
	p := startPTY(t, nil, env, "pane")
	p.waitFor("is kept for approvals")

	hook := func(agent string, payload []byte) chan result {
		done := make(chan result, 1)
		go func() { done <- runPipe(t, payload, env, "hook", agent) }()
		return done
	}
	first := hook("claude-code", claudePayload(t, "permissionrequest-bash.json"))
	tuiShown(p, "Your decision", 1)
	p.waitFor("go test ./...")
	second := hook("claude-code", claudePayload(t, "pretooluse-bash.json"))

	tuiChoose(p, "Allow once")
	p.send(tuiEnter)
	if r := <-first; r.code != 0 || strings.TrimSpace(r.stdout) != `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` {
		t.Fatalf("first hook: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}

	tuiShown(p, "Your decision", 2)
	p.waitFor("git push --force origin main")
	p.send(tuiEnter) // Deny once, where the list starts
	tuiShown(p, "Denial reason (optional)", 1)
	p.send(tuiEnter) // no reason
	if r := <-second; r.code != 0 || strings.TrimSpace(r.stdout) != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"askperm: denied (user)"}}` {
		t.Fatalf("second hook: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}

	third := hook("codex", readFile(t, "hooks/codex/permissionrequest-bash.json"))
	tuiShown(p, "Your decision", 3)
	p.waitFor("cargo test --workspace")
	tuiChoose(p, "Allow once")
	p.send(tuiEnter)
	if r := <-third; r.code != 0 || strings.TrimSpace(r.stdout) != `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` {
		t.Fatalf("codex hook: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	p.signal(2)
	if r := p.wait(); r.code != 0 {
		t.Fatalf("the pane ended with exit %d: %s", r.code, r.stderr)
	}
}

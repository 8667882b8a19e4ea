package e2e

import (
	"os"
	"path/filepath"
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

// TestPaneNeverReplacedSilently: a second askperm pane of the same user
// refuses to start while one runs; with --replace it takes over, and the
// first says so on its own terminal, loudly, and ends.
func TestPaneNeverReplacedSilently(t *testing.T) {
	env := memoryEnv("TERM=xterm-256color")
	first := startPTY(t, nil, env, "pane")
	first.waitFor("is kept for approvals")

	second := startPTY(t, nil, env, "pane")
	if r := second.wait(); r.code != 64 || !strings.Contains(r.stderr, "a pane already runs on") || !strings.Contains(r.stderr, "--replace") {
		t.Fatalf("a second pane: exit %d, stderr %q", r.code, r.stderr)
	}

	third := startPTY(t, nil, env, "pane", "--replace")
	third.waitFor("is kept for approvals")
	first.waitFor("this terminal no longer receives prompts")
	if r := first.wait(); r.code != 1 || !strings.Contains(r.stderr, "announced itself as the pane") {
		t.Fatalf("the replaced pane: exit %d, stderr %q", r.code, r.stderr)
	}
	third.signal(2)
	if r := third.wait(); r.code != 0 || !strings.Contains(r.stderr, "taking over from the pane on") {
		t.Fatalf("the replacing pane: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestPaneTakenOver: a process that rewrites the pane's announcement
// (pointing helpers at another terminal) or removes it is noticed by the
// pane within a moment: it says so on its terminal and stops.
func TestPaneTakenOver(t *testing.T) {
	for name, change := range map[string]func(file string) error{
		"rewritten": func(file string) error {
			return os.WriteFile(file, []byte(`{"pid":1,"tty":"/dev/pts/999"}`), 0o600)
		},
		"removed": os.Remove,
	} {
		t.Run(name, func(t *testing.T) {
			env := memoryEnv("TERM=xterm-256color")
			p := startPTY(t, nil, env, "pane")
			p.waitFor("is kept for approvals")
			var state string
			for _, e := range env {
				if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
					state = v
				}
			}
			if err := change(filepath.Join(state, "askperm", "pane.json")); err != nil {
				t.Fatal(err)
			}
			p.waitFor("this terminal no longer receives prompts")
			if r := p.wait(); r.code != 1 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

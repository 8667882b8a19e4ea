package permtool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, args, err string
	}{
		{"ok", `{"tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}`, ""},
		{"no id", `{"tool_name":"Bash","input":{}}`, ""},
		{"no tool", `{"input":{"command":"ls"}}`, "names no tool"},
		{"no input", `{"tool_name":"Bash"}`, "expected a JSON object"},
		{"input array", `{"tool_name":"Bash","input":["ls"]}`, "expected a JSON object"},
		{"input null", `{"tool_name":"Bash","input":null}`, "expected a JSON object"},
		{"input string", `{"tool_name":"Bash","input":"ls"}`, "expected a JSON object"},
		{"not json", `{`, "not a permission prompt call"},
		{"empty", ``, "not a permission prompt call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(json.RawMessage(tc.args))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	call := Call{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"allow", Result{Call: call, Decision: &decision.Decision{Decision: decision.Allow, Cause: decision.CauseUser}},
			`{"behavior":"allow","updatedInput":{"command":"ls -la"}}`},
		{"deny with message", Result{Call: call, Decision: &decision.Decision{Decision: decision.Deny, Cause: decision.CauseUser, Message: "no"}},
			`{"behavior":"deny","message":"askperm: denied (user): no"}`},
		{"deny without message", Result{Call: call, Decision: &decision.Decision{Decision: decision.Deny, Cause: decision.CauseUser}},
			`{"behavior":"deny","message":"askperm: denied (user)"}`},
		{"error", Result{Call: call, Err: errors.New("no canned answer matches")},
			`{"behavior":"deny","message":"askperm: no canned answer matches"}`},
		// An error wins over a decision: never allow on any error.
		{"error and allow", Result{Call: call, Decision: &decision.Decision{Decision: decision.Allow}, Err: errors.New("boom")},
			`{"behavior":"deny","message":"askperm: boom"}`},
		{"nothing", Result{Call: call}, `{"behavior":"deny","message":"askperm: no decision"}`},
		{"unknown verdict", Result{Call: call, Decision: &decision.Decision{Decision: "maybe", Cause: decision.CauseUser}},
			`{"behavior":"deny","message":"askperm: denied (user)"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Answer(tc.r)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

package decision

import (
	"strings"
	"testing"
)

func testCall() Call {
	return Call{
		SessionID:      "s1",
		RunID:          "r1",
		Tool:           "write_file",
		Source:         "engine:1",
		PolicyRevision: "7",
		Arguments:      []byte(`{"path":"/tmp/x","mode":5}`),
	}
}

func mustApproval(t *testing.T, c Call) Approval {
	t.Helper()
	a, err := ApprovalFor(c)
	if err != nil {
		t.Fatalf("ApprovalFor: %v", err)
	}
	return a
}

func TestBindingCallOf(t *testing.T) {
	r := &Request{SessionID: "s1", RunID: "r1", Tool: "write_file", Source: "engine:1",
		PolicyRevision: "7", Arguments: []byte(`{"path":"/tmp/x","mode":5}`), Action: "write"}
	if got := CallOf(r); got.SessionID != "s1" || got.RunID != "r1" || got.Tool != "write_file" ||
		got.Source != "engine:1" || got.PolicyRevision != "7" || string(got.Arguments) != string(r.Arguments) {
		t.Fatalf("CallOf = %+v", got)
	}
	if CallOf(&Request{Action: "read"}).Arguments != nil {
		t.Fatal("absent arguments are not nil")
	}
}

func TestApprovalForMissingField(t *testing.T) {
	for name, clear := range map[string]func(*Call){
		"session_id":      func(c *Call) { c.SessionID = "" },
		"run_id":          func(c *Call) { c.RunID = "" },
		"tool":            func(c *Call) { c.Tool = "" },
		"source":          func(c *Call) { c.Source = "" },
		"policy_revision": func(c *Call) { c.PolicyRevision = "" },
	} {
		c := testCall()
		clear(&c)
		if _, err := ApprovalFor(c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("missing %s: error %v, want one naming it", name, err)
		}
	}
	c := testCall()
	c.Arguments = []byte(`{"a":1,"a":2}`)
	if _, err := ApprovalFor(c); err == nil {
		t.Error("ApprovalFor accepted arguments that cannot be digested")
	}
	c.Arguments = nil
	if a := mustApproval(t, c); a.ArgumentsSHA256 != mustDigest(t, []byte(`null`)) {
		t.Error("absent arguments are not bound as null")
	}
}

func TestApprovalCovers(t *testing.T) {
	approved := mustApproval(t, testCall())
	for _, tc := range []struct {
		name   string
		change func(*Call)
		want   bool
	}{
		{"same call", func(*Call) {}, true},
		{"member order and number spelling", func(c *Call) { c.Arguments = []byte(`{ "mode": 5.0, "path": "/tmp/x" }`) }, true},
		{"5 vs \"5\"", func(c *Call) { c.Arguments = []byte(`{"path":"/tmp/x","mode":"5"}`) }, true},
		{"other session", func(c *Call) { c.SessionID = "s2" }, false},
		{"other run", func(c *Call) { c.RunID = "r2" }, false},
		{"other tool", func(c *Call) { c.Tool = "read_file" }, false},
		{"other source", func(c *Call) { c.Source = "engine:2" }, false},
		{"other revision", func(c *Call) { c.PolicyRevision = "8" }, false},
		{"other arguments", func(c *Call) { c.Arguments = []byte(`{"path":"/tmp/y","mode":5}`) }, false},
		{"\"5.0\" vs 5", func(c *Call) { c.Arguments = []byte(`{"path":"/tmp/x","mode":"5.0"}`) }, false},
		{"missing session", func(c *Call) { c.SessionID = "" }, false},
		{"missing run", func(c *Call) { c.RunID = "" }, false},
		{"missing tool", func(c *Call) { c.Tool = "" }, false},
		{"missing source", func(c *Call) { c.Source = "" }, false},
		{"missing revision", func(c *Call) { c.PolicyRevision = "" }, false},
		{"absent arguments", func(c *Call) { c.Arguments = nil }, false},
		{"invalid arguments", func(c *Call) { c.Arguments = []byte(`{"path":`) }, false},
	} {
		c := testCall()
		tc.change(&c)
		if got := approved.Covers(c); got != tc.want {
			t.Errorf("%s: Covers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A missing field in the approval never matches, even the same missing
// field in the call.
func TestApprovalCoversMissingInApproval(t *testing.T) {
	for name, clear := range map[string]func(*Approval, *Call){
		"session":   func(a *Approval, c *Call) { a.SessionID, c.SessionID = "", "" },
		"run":       func(a *Approval, c *Call) { a.RunID, c.RunID = "", "" },
		"tool":      func(a *Approval, c *Call) { a.Tool, c.Tool = "", "" },
		"source":    func(a *Approval, c *Call) { a.Source, c.Source = "", "" },
		"revision":  func(a *Approval, c *Call) { a.PolicyRevision, c.PolicyRevision = "", "" },
		"arguments": func(a *Approval, _ *Call) { a.ArgumentsSHA256 = "" },
	} {
		a, c := mustApproval(t, testCall()), testCall()
		clear(&a, &c)
		if a.Covers(c) {
			t.Errorf("approval missing %s covers the call", name)
		}
	}
}

func TestApprovalArgumentsChangedAfterApproval(t *testing.T) {
	c := testCall()
	approved := mustApproval(t, c)
	copy(c.Arguments[len(`{"path":"/tmp/`):], "y") // the same slice, changed in place
	if approved.Covers(c) {
		t.Fatal("arguments changed after the approval are covered")
	}
}

func TestApprovalEmptyObjectVersusAbsent(t *testing.T) {
	c := testCall()
	c.Arguments = []byte(`{}`)
	withEmpty := mustApproval(t, c)
	c.Arguments = nil
	if withEmpty.Covers(c) {
		t.Error("approval of {} covers absent arguments")
	}
	absent := mustApproval(t, c)
	c.Arguments = []byte(`{}`)
	if absent.Covers(c) {
		t.Error("approval of absent arguments covers {}")
	}
	c.Arguments = []byte(`null`)
	if !absent.Covers(c) {
		t.Error("approval of absent arguments does not cover null")
	}
}

package cmd

import (
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// session list shows what was approved: server, tool and the question;
// an approval recorded before questions were kept says so, and a record
// changed by hand is rendered again.
func TestWriteSessions(t *testing.T) {
	approval := decision.Approval{SessionID: "s1", Tool: "write_file", ArgumentsSHA256: "0123456789abcdef0123"}
	var b strings.Builder
	err := writeSessions(&b, []state.SessionApproval{
		{Approval: approval, Server: "fs", Question: `write_file (fs) wants to write /tmp/a\\b\u{202e}`},
		{Approval: approval},
		{Approval: approval, Server: "fs", Question: "write_file (fs) wants to write \x1b[2J"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	for i, want := range []string{
		"SESSION  SERVER  TOOL        LAST USED",
		`fs      write_file  ` + "",
		"(not recorded)",
		`write_file (fs) wants to write \e[2J`,
	} {
		if i >= len(lines) || !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %q lacks %q\n%s", i, lines, want, b.String())
		}
	}
	if !strings.HasSuffix(lines[1], `write_file (fs) wants to write /tmp/a\\b\u{202e}`) || strings.Contains(b.String(), "0123456789ab") {
		t.Errorf("session list:\n%s", b.String())
	}
}

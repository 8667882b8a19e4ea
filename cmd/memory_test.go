package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/state"
)

// session list shows what was approved: server, tool and the question;
// an approval recorded before questions were kept says so, and a record
// changed by hand is rendered again.
func TestWriteSessions(t *testing.T) {
	approval := decision.Approval{SessionID: "s1", Tool: "write_file", ArgumentsSHA256: "0123456789abcdef0123"}
	var b strings.Builder
	err := cli.WriteTable(&b, sessionsHeading, sessionRow, each([]state.SessionApproval{
		{Approval: approval, Server: "fs", Question: `write_file (fs) wants to write /tmp/a\\b\u{202e}`},
		{Approval: approval},
		{Approval: approval, Server: "fs", Question: "write_file (fs) wants to write \x1b[2J"},
	}))
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

// each gives the items one at a time, as a store's listing does.
func each[T any](items []T) func(func(T) error) error {
	return func(fn func(T) error) error {
		for _, v := range items {
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	}
}

// oldWriteSessions is session list's table as it was when it held the
// whole list: the streaming one must write the same bytes.
func oldWriteSessions(out io.Writer, approvals []state.SessionApproval) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tSERVER\tTOOL\tLAST USED\tAPPROVED")
	for _, a := range approvals {
		p := a.Approval
		question := "(not recorded)"
		if a.Question != "" {
			question = recorded(a.Question)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", form.Line(p.SessionID), cli.Dash(form.Line(a.Server)), cli.Dash(form.Line(p.Tool)),
			time.Unix(a.LastUsed, 0).Format(time.DateTime), question)
	}
	w.Flush()
}

// session list, as a table and as JSON, writes what it wrote when it
// held the whole list, on generated approvals (hostile text among them).
func TestWriteSessionsSameAsBefore(t *testing.T) {
	words := []string{"", "s1", "fs", "写文件", "a\tb", "x\ny", "\x1b[2J", "\xff\xfe", "read_file", "\u202e"}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		approvals := make([]state.SessionApproval, r.IntN(12))
		for i := range approvals {
			approvals[i] = state.SessionApproval{
				Approval: decision.Approval{SessionID: words[r.IntN(len(words))], Tool: words[r.IntN(len(words))]},
				Server:   words[r.IntN(len(words))], Question: words[r.IntN(len(words))], LastUsed: r.Int64N(2e9),
			}
		}
		var got, want bytes.Buffer
		if err := cli.WriteTable(&got, sessionsHeading, sessionRow, each(approvals)); err != nil {
			t.Fatal(err)
		}
		oldWriteSessions(&want, approvals)
		if got.String() != want.String() {
			t.Fatalf("seed %d table:\n%s\nwant\n%s", seed, got.String(), want.String())
		}
		got.Reset()
		want.Reset()
		if err := cli.WriteJSONArray(&got, each(approvals)); err != nil {
			t.Fatal(err)
		}
		if err := oldWriteJSON(&want, approvals); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("seed %d json: %s, want %s", seed, got.String(), want.String())
		}
	}
}

// oldWriteJSON is how a list was written as JSON before it streamed: the
// slice marshalled whole, an empty one as [].
func oldWriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if string(b) == "null" {
		b = []byte("[]")
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

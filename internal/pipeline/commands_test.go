package pipeline

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
)

func bashReq(line string) string {
	v, _ := json.Marshal(line)
	return `{"tool":"Bash","action":"exec","dimensions":[{"name":"command","value":` + string(v) + `,"syntax":"shell"}]}`
}

// perCommandSources are a rules file allowing `go test *`, and a store
// remembering an allow of `git status` and a deny of rm -rf.
func perCommandSources(t *testing.T) Config {
	t.Helper()
	p, err := rulesText(t, "[[rule]]\nname = \"go-test\"\ntool = \"Bash\"\ndimensions = { command = \"go test *\" }\n")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := state.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range []state.Rule{
		{Decision: decision.Allow, Tool: "Bash", Action: "exec", Dimensions: []state.Dimension{{Name: "command", Match: "git status", Kind: decision.KindGlob}}},
		{Decision: decision.Deny, Tool: "Bash", Action: "exec", Dimensions: []state.Dimension{{Name: "command", Match: "rm -rf", Kind: decision.KindWords}}},
	} {
		if err := s.Do(func(tx *state.Tx) error { _, err := tx.Remember(r); return err }); err != nil {
			t.Fatal(err)
		}
	}
	return Config{Timeout: time.Minute, MaxRequest: 1 << 20, Policy: []Source{p.Opinions}, Memory: &Memory{Dir: dir}}
}

// Opinions combine per command across rules files and memory: each
// command allowed by one or the other, allowed; one remembered deny,
// denied; one command nothing allows, asked.
func TestPerCommandAcrossRulesAndMemory(t *testing.T) {
	c := perCommandSources(t)
	for _, tc := range []struct {
		line string
		want policy.Verdict
		by   []string // what decided each command
	}{
		{"go test ./... && git status", policy.Allow, []string{"go-test", "remembered rule 1"}},
		{"git status; rm -rf ~", policy.Deny, []string{"remembered rule 1", "remembered rule 2"}},
		{"go test ./... && make", policy.Prompt, []string{"go-test", ""}},
		{"go test $(curl x)", policy.Prompt, []string{"", ""}},
	} {
		res, err := New(c).Check(context.Background(), strings.NewReader(bashReq(tc.line)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want {
			t.Errorf("%q: %v, want %v", tc.line, res.Verdict, tc.want)
		}
		var by []string
		for _, cmd := range formCommands(res.Request, res.Opinions)["command"] {
			by = append(by, cmd.DecidedBy)
		}
		if !reflect.DeepEqual(by, tc.by) {
			t.Errorf("%q: decided by %q, want %q", tc.line, by, tc.by)
		}
	}
}

// The form is given each command with its text, what is opaque in it,
// and the verdict and name of what decided it.
func TestFormCommands(t *testing.T) {
	c := perCommandSources(t)
	res, err := New(c).Check(context.Background(), strings.NewReader(bashReq("go test ./... && curl x | sh")))
	if err != nil {
		t.Fatal(err)
	}
	got := formCommands(res.Request, res.Opinions)["command"]
	if len(got) != 3 || got[0] != (form.Command{Text: "go test ./...", Verdict: "allow", DecidedBy: "go-test"}) ||
		got[1] != (form.Command{Text: "curl x"}) || got[2].Text != "sh" || got[2].Opaque == "" || got[2].Verdict != "prompt" {
		t.Errorf("got %+v", got)
	}
}

// What the person is shown of a command is what is matched: its
// assignments, its words and every file it writes; a redirection with
// no command is shown as written.
func TestCommandsShowRedirections(t *testing.T) {
	req := &decision.Request{Tool: "Bash", Dimensions: []decision.Dimension{{Name: "command", Syntax: decision.SyntaxShell,
		Value: "echo hi >> /home/u/.bashrc; cat <<EOF > /home/u/.ssh/authorized_keys\nkey\nEOF\nLANG=C ls 2>/dev/null > out 2>&1; >f"}}}
	var got []string
	for _, c := range commandsOf(req, nil)["command"] {
		got = append(got, c.Text)
	}
	want := []string{"echo hi >> /home/u/.bashrc", "cat > /home/u/.ssh/authorized_keys", "LANG=C ls > out", ">f"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

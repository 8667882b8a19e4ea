package answers

import (
	"encoding/json"
	"testing"

	"github.com/askperm/askperm/decision"
)

// A canned answer over a command line answers it when it covers every
// simple command and none is opaque (protocol section 10); a canned deny
// when it reaches any.
func TestAnswersPerCommand(t *testing.T) {
	f, err := Parse([]byte(`
[[answer]]
dimensions = { command = "rm -rf *" }
choice = "deny-once"
[[answer]]
dimensions = { command = "go test *" }
choice = "allow-once"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line   string
		choice string // "" none
	}{
		{"go test ./a && go test ./b", "allow-once"},
		{"LANG=C go test ./a; go test -run X ./b", "allow-once"},
		{"GIT_PAGER=./x go test ./a", ""},
		{"go test ./a; >~/.bashrc", ""},
		{"go test ./a; rm x", ""},
		{"go test $(curl x)", ""},
		{"go test ./a | sh", "deny-once"}, // sh runs what is printed: a canned deny, with nobody to ask, reaches it
		{"go test ./a; rm -rf ~", "deny-once"},
	} {
		v, _ := json.Marshal(tc.line)
		req, err := decision.Parse([]byte(`{"tool":"Bash","action":"exec","dimensions":[{"name":"command","value":` + string(v) + `,"syntax":"shell"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		e, ok := f.Match(req)
		if got := string(e.Choice); !ok && tc.choice != "" || ok && got != tc.choice {
			t.Errorf("%q: answered %q (%v), want %q", tc.line, got, ok, tc.choice)
		}
	}
}

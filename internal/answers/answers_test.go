package answers

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"unknown key", "[[answer]]\nchoice = \"allow-once\"\ncolour = \"red\"\n", "unknown keys: answer.colour"},
		{"unknown top-level key", "answers = 1\n", "unknown keys: answers"},
		{"missing choice", "[[answer]]\ntool = \"x\"\n", "answer 1: choice: missing"},
		{"unknown choice", "[[answer]]\nchoice = \"allow\"\n", `choice: unknown "allow" (valid: allow-once, deny-once, allow-always, deny-always, allow-session)`},
		{"bad tool glob", "[[answer]]\nchoice = \"allow-once\"\n[[answer]]\ntool = \"write_[\"\nchoice = \"allow-once\"\n", `answer 2: tool: invalid glob "write_["`},
		{"bad dimension glob", "[[answer]]\nchoice = \"allow-once\"\ndimensions = { path = \"/a/{b\" }\n", `answer 1: dimensions.path: invalid glob "/a/{b"`},
		{"rule fields on a once choice", "[[answer]]\nchoice = \"allow-once\"\nlifetime = \"900\"\n", "belong to always-choices"},
		{"grants on deny-always", "[[answer]]\nchoice = \"deny-always\"\ngrants = [\"a\"]\n", "grants nothing"},
		{"duplicate key", "[[answer]]\nchoice = \"allow-once\"\nchoice = \"deny-once\"\n", "already been defined"},
		{"wrong type", "[[answer]]\nchoice = 1\n", "incompatible types"},
	} {
		_, err := Parse([]byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func request(tool, server, action string, dims ...decision.Dimension) *decision.Request {
	return &decision.Request{Tool: tool, Server: server, Action: action, Dimensions: dims}
}

func TestMatchFirstWins(t *testing.T) {
	f, err := Parse([]byte(`
[[answer]]
tool = "write_*"
dimensions = { path = "/home/**" }
choice = "allow-once"

[[answer]]
server = "shell"
action = "exec"
choice = "deny-always"

[[answer]]
choice = "deny-once"
message = "fallback"
`))
	if err != nil {
		t.Fatal(err)
	}
	path := func(v string) decision.Dimension { return decision.Dimension{Name: "path", Value: v} }
	for _, tc := range []struct {
		req  *decision.Request
		want form.Choice
	}{
		{request("write_file", "", "write", path("/home/a/x")), form.AllowOnce},
		{request("write_file", "", "write", path("/etc/passwd")), form.DenyOnce},
		{request("write_file", "", "write"), form.DenyOnce}, // no such dimension: no match
		{request("read_file", "", "read", path("/home/a")), form.DenyOnce},
		{request("run", "shell", "exec"), form.DenyAlways},
		{request("run", "shell", "read"), form.DenyOnce},
		{request("run", "Shell", "exec"), form.DenyOnce}, // exact, case-sensitive
	} {
		e, ok := f.Match(tc.req)
		if !ok || e.Choice != tc.want {
			t.Errorf("%+v: got %v %v, want %v", tc.req, e.Choice, ok, tc.want)
		}
	}
	if _, ok := (&File{}).Match(request("x", "", "a")); ok {
		t.Error("an empty file matched")
	}
}

func TestAnswerStartsFromTheFormDefaults(t *testing.T) {
	req := &decision.Request{
		Action:  "write",
		Grants:  []decision.Grant{{Name: "a"}, {Name: "b"}},
		Workdir: &decision.Workdir{Value: "/w"},
		Dimensions: []decision.Dimension{{Name: "path", Value: "/w/x", Scopes: []decision.Scope{
			{Label: "file", Match: "/w/x"}, {Label: "dir", Match: "/w/", Kind: decision.KindPrefix},
		}}},
	}
	f := form.New(req, form.Options{})
	e := Entry{Choice: form.AllowAlways, Grants: []string{"b"}, Lifetime: "57600"}
	want := form.Answer{Choice: form.AllowAlways, Grants: []string{"b"}, Scopes: map[string]string{"path": "/w/x"}, WorkdirScope: "selected", Lifetime: "57600"}
	if got := e.Answer(f); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	bad := Entry{Choice: form.AllowAlways, Grants: []string{"c"}}
	if _, err := f.Decide(bad.Answer(f), "answers", time.Now()); err == nil {
		t.Error("a canned grant that was not requested was accepted")
	}
}

func TestSingle(t *testing.T) {
	if _, err := Single("allow-twice", ""); err == nil {
		t.Error("unknown choice accepted")
	}
	f, err := Single("deny-once", "no")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := f.Match(request("any", "", "x"))
	if !ok || e.Choice != form.DenyOnce || e.Message != "no" {
		t.Errorf("got %+v, %v", e, ok)
	}
}

func TestLoadRefusesUnsafeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "answers.toml")
	if err := os.WriteFile(p, []byte("[[answer]]\nchoice = \"allow-once\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil {
		t.Fatalf("private file refused: %v", err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil {
		t.Fatal("world-writable answers file accepted")
	}
}

func TestTestdataAnswersParse(t *testing.T) {
	// Parsed, not loaded: a checkout's file modes depend on its umask.
	b, err := os.ReadFile("../../testdata/answers/ci.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err != nil {
		t.Fatal(err)
	}
}

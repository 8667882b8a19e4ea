package suggest

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/policy"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// gen builds audit entries one after the other, a minute apart.
type gen struct {
	entries []Entry
}

// add appends an entry: dims alternate name, value; a name starting
// with "$" is a command line (bash).
func (g *gen) add(decided string, person bool, server, tool, action string, dims ...string) *Entry {
	e := Entry{Time: t0.Add(time.Duration(len(g.entries)) * time.Minute), Server: server, Tool: tool, Action: action,
		Decision: decided, ByPerson: person}
	for i := 0; i < len(dims); i += 2 {
		name := dims[i]
		if name[0] == '$' {
			name = name[1:]
			if e.Shells == nil {
				e.Shells = map[string]string{}
			}
			e.Shells[name] = "bash"
		}
		if e.Dimensions == nil {
			e.Dimensions = map[string]string{}
		}
		e.Dimensions[name] = dims[i+1]
	}
	g.entries = append(g.entries, e)
	return &g.entries[len(g.entries)-1]
}

func (g *gen) person(decided, server, tool, action string, dims ...string) *Entry {
	return g.add(decided, true, server, tool, action, dims...)
}

// example is the generated log of the issue: a person approving go test
// 20 times, denying rm once, approving reads under one folder, a group
// below the minimum, a group with one deny, hosts on two servers, and
// decisions by others, which count for nothing.
func example() *gen {
	g := &gen{}
	tests := []string{"go test ./...", "go test -run TestX ./pkg", "go test -count=1 ./cmd/", "go test ./internal/..."}
	for i := range 20 {
		g.person("allow", "cc", "Bash", "exec", "$command", tests[i%len(tests)])
	}
	// rm -rf build/x approved six times, rm -rf ~/src denied once: the
	// rule is narrowed to the command approved, exactly.
	for range 6 {
		g.person("allow", "cc", "Bash", "exec", "$command", "rm -rf build/x")
	}
	g.person("deny", "cc", "Bash", "exec", "$command", "rm -rf /home/a/src")
	// Below the minimum.
	for range 4 {
		g.person("allow", "cc", "Bash", "exec", "$command", "git status")
	}
	// Reads in one folder, one below it, and a secret beside it denied.
	for _, p := range []string{"/home/a/p/src/a.go", "/home/a/p/src/b.go", "/home/a/p/src/c.go", "/home/a/p/src/a.go", "/home/a/p/src/sub/d/e.go", "/home/a/p/src/b.go"} {
		g.person("allow", "fs", "read_file", "read", "path", p)
	}
	g.person("deny", "fs", "read_file", "read", "path", "/home/a/p/.env")
	// Writes approved five times, denied once in the same folder: the
	// folder is narrowed to no rule (each file under five approvals).
	for _, p := range []string{"/home/a/p/out/1", "/home/a/p/out/2", "/home/a/p/out/3", "/home/a/p/out/1", "/home/a/p/out/2"} {
		g.person("allow", "fs", "write_file", "write", "path", p)
	}
	g.person("deny", "fs", "write_file", "write", "path", "/home/a/p/out/4")
	// Approved five times, and a deny whose text the log did not keep:
	// it stands against every rule of its tool.
	for range 5 {
		g.person("allow", "fs", "grep", "read", "path", "/home/a/p/lib/x.go")
	}
	g.person("deny", "fs", "grep", "read", "path", "/home/a/p/lib/\\x07.go").Inexact = true
	// Hosts on two servers: five on one, three on the other.
	for _, u := range []string{"https://docs.example.org/a", "https://docs.example.org/b?q=1", "https://docs.example.org/c/d", "https://docs.example.org/a", "https://docs.example.org/e"} {
		g.person("allow", "web", "fetch", "network", "url", u)
	}
	for range 3 {
		g.person("allow", "web2", "fetch", "network", "url", "https://docs.example.org/a")
	}
	// Decided by others: canned answers, rules, memory, timeouts; and
	// by a person, but with text the log did not keep as sent.
	for range 10 {
		g.add("allow", false, "cc", "Bash", "exec", "$command", "make build")
		g.add("deny", false, "cc", "Bash", "exec", "$command", "go test ./...")
		g.person("allow", "cc", "Bash", "exec", "$command", "make all").Inexact = true
		g.person("prompt", "cc", "Bash", "exec", "$command", "make vet")
	}
	return g
}

func suggestFrom(entries []Entry, min int) (*Suggester, []Rule) {
	s := New(Options{Min: min, Since: t0, Now: t0.Add(10 * 24 * time.Hour), Home: "/home/a"})
	for _, e := range entries {
		s.Add(e)
	}
	return s, s.Rules()
}

type want struct {
	tool, server, action string
	dims                 map[string]string
	approved             int
}

func TestSuggestExample(t *testing.T) {
	s, rules := suggestFrom(example().entries, 5)
	var got []want
	for _, r := range rules {
		got = append(got, want{r.Tool, r.Server, r.Action, r.Dimensions, r.Approved})
	}
	exp := []want{
		{"Bash", "cc", "exec", map[string]string{"command": "go test *"}, 20},
		{"Bash", "cc", "exec", map[string]string{"command": "rm -rf build/x"}, 6},
		{"read_file", "fs", "read", map[string]string{"path": "/home/a/p/src/[!.]*"}, 5},
		{"fetch", "web", "network", map[string]string{"url": "https://docs.example.org/**"}, 5},
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("rules:\n got %v\nwant %v\n%s", got, exp, File(rules))
	}
	checkFile(t, s, rules)
	if p := rules[0].PerDay; p != 2 {
		t.Errorf("go test saves %v prompts a day, want 20 over 10 days: 2", p)
	}
}

// checkFile writes rules as a file, loads it and checks every request a
// person decided against it: each approved one a rule came from is
// allowed, no denied one is.
func checkFile(t *testing.T, s *Suggester, rules []Rule) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "suggested.toml")
	if err := os.WriteFile(file, File(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(file, rules); err != nil {
		t.Fatalf("%v\n%s", err, File(rules))
	}
	p, err := policy.Load("", []string{file}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		for _, src := range r.Sources {
			if v, _ := policy.Combine(p.Opinions(src)); v != policy.Allow {
				t.Errorf("rule %s: a request it came from is %v: %+v", r.Name, v, src)
			}
		}
	}
	for _, d := range s.denied {
		if v, _ := policy.Combine(p.Opinions(d.req)); v == policy.Allow {
			t.Errorf("a denied request is allowed: %+v", d.req)
		}
	}
	// No rule reaches a dot-file or a sub-folder beside a path it came
	// from.
	for _, r := range rules {
		for _, src := range r.Sources {
			for i, d := range src.Dimensions {
				if d.IsShell() || !filepath.IsAbs(d.Value) {
					continue
				}
				for _, probe := range []string{".env", ".x", "askperm-sub/x"} {
					req := *src
					req.Dimensions = slices.Clone(src.Dimensions)
					req.Dimensions[i].Value = filepath.Join(filepath.Dir(d.Value), probe)
					if v, _ := policy.Combine(p.Opinions(&req)); v == policy.Allow {
						t.Errorf("rule %s allows %s", r.Name, req.Dimensions[i].Value)
					}
				}
			}
		}
	}
	return file
}

// TestSuggestGenerated: on random logs, every rule holds what the
// package says of it, checked by the rules loader.
func TestSuggestGenerated(t *testing.T) {
	programs := []string{"go test", "go build", "git status", "git diff", "rm -rf", "make", "ls -l", "cat", "sudo ls", "timeout 60 go test",
		"a=1 go test", "echo 'a b'", "go test $(x)", "go test && rm", "ls > out", "go 't'est", "git -C", `go te\*st`, "go {a,b}"}
	args := []string{"", " ./...", " x", " -v", " a/b", " build/x", " '*'", " \"a b\"", " ; rm -rf /", " | sh", " [x]"}
	dirs := []string{"/home/a/p", "/home/a/p/src", "/home/a/q", "/etc", "/home/a"}
	files := []string{"a", "b", ".env", "c/d", "x/../y", "*", "{a,b}", "a b"}
	hosts := []string{"https://a.example/", "https://b.example/", "http://a.example/", "https://a.example:8443/", "ftp://a.example/"}
	made := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		g := &gen{}
		for range 40 + rng.IntN(200) {
			decided := "allow"
			if rng.IntN(12) == 0 {
				decided = "deny"
			}
			server := []string{"", "s1", "s2", "s2"}[rng.IntN(4)]
			switch rng.IntN(3) {
			case 0:
				g.person(decided, server, "Bash", "exec", "$command", programs[rng.IntN(len(programs))]+args[rng.IntN(len(args))])
			case 1:
				g.person(decided, server, "read_file", "read", "path", dirs[rng.IntN(len(dirs))]+"/"+files[rng.IntN(len(files))])
			default:
				g.person(decided, server, "fetch", "network", "url", hosts[rng.IntN(len(hosts))]+files[rng.IntN(len(files))])
			}
		}
		min := 2 + rng.IntN(5)
		s, rules := suggestFrom(g.entries, min)
		for _, r := range rules {
			if r.Approved < min || len(r.Sources) != r.Approved {
				t.Fatalf("seed %d: rule %s from %d approvals, min %d", seed, r.Name, r.Approved, min)
			}
		}
		made += len(rules)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkFile(t, s, rules) })
	}
	if made < 300 {
		t.Fatalf("only %d rules from 300 logs: the logs test too little", made)
	}
	t.Logf("%d rules", made)
}

// TestCheckRefuses: a file whose rules say more, or less, than the
// requests they came from is refused, whichever way it was changed, by
// the checks of Check itself (the changed rules show no denied example
// for the loader to find).
func TestCheckRefuses(t *testing.T) {
	s, rules := suggestFrom(example().entries, 5)
	for _, c := range []struct {
		name, want string
		change     func(r []Rule)
	}{
		{"the home directory", "wider than the requests", func(r []Rule) { r[2].Dimensions["path"] = "/home/a/**" }},
		{"a dot-file", "a person denied", func(r []Rule) { r[2].Dimensions["path"] = "/home/a/p/**" }},
		{"/", "wider than the requests", func(r []Rule) { r[2].Dimensions["path"] = "/**" }},
		{"a dimension left out", "does not match its own example", func(r []Rule) { r[2].Dimensions = map[string]string{} }},
		{"a denied request", "a person denied", func(r []Rule) { r[1].Dimensions["command"] = "rm -rf *" }},
		{"a deny's neighbour", "a person denied", func(r []Rule) { r[0].Dimensions["command"] = "{go test *,rm -rf /home/a/src}" }},
		{"a source not in it", "does not match its own example", func(r []Rule) { r[0].Dimensions["command"] = "go test ./..." }},
	} {
		t.Run(c.name, func(t *testing.T) {
			changed := append([]Rule(nil), rules...)
			for i := range changed {
				changed[i].Dimensions = maps.Clone(changed[i].Dimensions)
				changed[i].Denied = nil
			}
			file := filepath.Join(t.TempDir(), "changed.toml")
			if err := os.WriteFile(file, File(changed), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(file, changed); err != nil {
				t.Fatalf("the file as suggested is refused: %v", err)
			}
			c.change(changed)
			if err := os.WriteFile(file, File(changed), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(file, changed); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("a file with %s: %v, want an error saying %q:\n%s", c.name, err, c.want, File(changed))
			}
		})
	}
}

// A suggested rule pins its dimension set: rules from MCP calls that
// carried only a path allow no call that adds another dimension
// (only_dimensions); a file without it is refused by Check.
func TestSuggestPinsDimensions(t *testing.T) {
	g := &gen{}
	for _, p := range []string{"/home/a/p/src/a.go", "/home/a/p/src/b.go", "/home/a/p/src/a.go", "/home/a/p/src/b.go", "/home/a/p/src/c.go"} {
		g.person("allow", "fs", "edit", "write", "path", p)
	}
	s, rules := suggestFrom(g.entries, 5)
	if len(rules) != 1 {
		t.Fatalf("rules %+v", rules)
	}
	file := checkFile(t, s, rules)
	p, err := policy.Load("", []string{file}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{"other arguments", "content", "mode"} {
		more := *rules[0].Sources[0]
		more.Dimensions = append(more.Dimensions[:len(more.Dimensions):len(more.Dimensions)], decision.Dimension{Name: extra, Value: `{"mode":"truncate","content":"rm -rf ~"}`})
		if v, _ := policy.Combine(p.Opinions(&more)); v == policy.Allow {
			t.Errorf("allowed with %q added", extra)
		}
	}
	open := filepath.Join(t.TempDir(), "open.toml")
	if err := os.WriteFile(open, bytes.ReplaceAll(File(rules), []byte("only_dimensions = true\n"), nil), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(open, rules); err == nil || !strings.Contains(err.Error(), "a dimension more") {
		t.Errorf("a file leaving dimensions open: %v", err)
	}
}

// Allow narrow: identical approvals are never widened; a folder's scope
// needs two distinct files in it and never reaches its dot-files or
// sub-folders; no rule names a secret; a request without a tool or a
// server proposes none (its rule would leave it open).
func TestSuggestNarrow(t *testing.T) {
	for _, c := range []struct {
		name string
		log  func(g *gen)
		min  int
		want []map[string]string
		// never are requests no rule may allow.
		never []string
	}{
		{"an ssh config edited five times", func(g *gen) {
			for range 5 {
				g.person("allow", "cc", "Edit", "write", "path", "/home/a/.ssh/config")
			}
		}, 5, nil, []string{"/home/a/.ssh/authorized_keys", "/home/a/.ssh/config"}},
		{"a push approved five times", func(g *gen) {
			for range 5 {
				g.person("allow", "cc", "Bash", "exec", "$command", "git push origin main")
			}
		}, 5, []map[string]string{{"command": "git push origin main"}}, nil},
		{"two folders, three and two files", func(g *gen) {
			for _, p := range []string{"/home/a/p/src/a/1.go", "/home/a/p/src/a/2.go", "/home/a/p/src/a/3.go", "/home/a/p/docs/x.md", "/home/a/p/docs/y.md"} {
				g.person("allow", "fs", "read_file", "read", "path", p)
			}
		}, 5, nil, []string{"/home/a/p/.env", "/home/a/p/src/a/.env"}},
		{"two folders, min 2", func(g *gen) {
			for _, p := range []string{"/home/a/p/src/a/1.go", "/home/a/p/src/a/2.go", "/home/a/p/src/a/3.go", "/home/a/p/docs/x.md", "/home/a/p/docs/y.md"} {
				g.person("allow", "fs", "read_file", "read", "path", p)
			}
		}, 2, []map[string]string{{"path": "/home/a/p/src/a/[!.]*"}, {"path": "/home/a/p/docs/[!.]*"}},
			[]string{"/home/a/p/.env", "/home/a/p/src/a/.env", "/home/a/p/src/a/b/c.go", "/home/a/p/src/x.go"}},
		{"a dot-folder", func(g *gen) {
			for _, p := range []string{"/home/a/p/.github/a.yml", "/home/a/p/.github/b.yml", "/home/a/p/.github/c.yml"} {
				g.person("allow", "fs", "read_file", "read", "path", p)
			}
		}, 1, []map[string]string{{"path": "/home/a/p/.github/a.yml"}, {"path": "/home/a/p/.github/b.yml"}, {"path": "/home/a/p/.github/c.yml"}},
			[]string{"/home/a/p/.github/d.yml"}},
		{"no server", func(g *gen) {
			for range 5 {
				g.person("allow", "", "Bash", "exec", "$command", "go test ./...")
			}
		}, 5, nil, nil},
		{"no tool", func(g *gen) {
			for range 5 {
				g.person("allow", "fs", "", "read", "path", "/home/a/p/a")
			}
		}, 5, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &gen{}
			c.log(g)
			s, rules := suggestFrom(g.entries, c.min)
			var got []map[string]string
			for _, r := range rules {
				got = append(got, r.Dimensions)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rules %v, want %v\n%s", got, c.want, File(rules))
			}
			if len(rules) == 0 {
				return
			}
			p, err := policy.Load("", []string{checkFile(t, s, rules)}, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.never {
				req := *rules[0].Sources[0]
				req.Dimensions = []decision.Dimension{{Name: "path", Value: v}}
				if op, _ := policy.Combine(p.Opinions(&req)); op == policy.Allow {
					t.Errorf("%s allowed", v)
				}
			}
		})
	}
}

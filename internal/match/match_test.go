package match

import (
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

func ptr(s string) *string { return &s }

func TestMatcher(t *testing.T) {
	c := NewCompiler()
	shell, err := c.Matcher(Spec{Fields: [4]*string{ptr("shell*"), nil, nil, ptr("exec")}, Dimensions: map[string]string{"command": "go test *"}})
	if err != nil {
		t.Fatal(err)
	}
	anyTool, _ := c.Matcher(Spec{Fields: [4]*string{ptr("*")}})
	everything, _ := c.Matcher(Spec{})
	for _, tc := range []struct {
		req                        decision.Request
		shell, anyTool, everything bool
	}{
		{decision.Request{Tool: "shell", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "go test ./pkg", Syntax: decision.SyntaxShell}}}, true, true, true},
		{decision.Request{Tool: "shell", Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "go test x; rm"}}}, false, true, true},
		{decision.Request{Tool: "shell", Action: "exec"}, false, true, true},                                                            // no such dimension
		{decision.Request{Action: "exec", Dimensions: []decision.Dimension{{Name: "command", Value: "go test x"}}}, false, false, true}, // no tool
	} {
		cache := NewCache(&tc.req)
		for _, m := range []struct {
			m    Matcher
			want bool
		}{{shell, tc.shell}, {anyTool, tc.anyTool}, {everything, tc.everything}} {
			// Twice: the second answer comes from the cache.
			first, cached := m.m.Match(cache), m.m.Match(cache)
			if first != m.want || cached != m.want {
				t.Errorf("%+v: want %v", tc.req, m.want)
			}
		}
	}
}

// One glob on two fields is two results in a cache.
func TestCacheKeepsFieldsApart(t *testing.T) {
	c := NewCompiler()
	onTool, _ := c.Matcher(Spec{Fields: [4]*string{ptr("a*")}})
	onServer, _ := c.Matcher(Spec{Fields: [4]*string{nil, ptr("a*")}})
	cache := NewCache(&decision.Request{Tool: "abc", Server: "xyz", Action: "x"})
	if !onTool.Match(cache) || onServer.Match(cache) {
		t.Error("the results of one glob on two fields were mixed up")
	}
}

func TestMatcherErrorsNameTheField(t *testing.T) {
	c := NewCompiler()
	if _, err := c.Matcher(Spec{Fields: [4]*string{nil, nil, ptr("a[")}}); err == nil || err.Error()[:8] != "source: " {
		t.Errorf("got %v", err)
	}
	if _, err := c.Matcher(Spec{Dimensions: map[string]string{"p": "{a"}}); err == nil || err.Error()[:13] != "dimensions.p:" {
		t.Errorf("got %v", err)
	}
}

// A path matches an allow's glob only in both its forms, as written and
// resolved, and a deny's in either; the three .env spellings are one path.
func TestMatcherPathForms(t *testing.T) {
	c := NewCompiler()
	inProj, _ := c.Matcher(Spec{Dimensions: map[string]string{"path": "/home/a/proj/**"}})
	env, _ := c.Matcher(Spec{Dimensions: map[string]string{"path": "/home/a/proj/sub/.env"}})
	escaped := &decision.Request{Dimensions: []decision.Dimension{{Name: "path", Value: "/home/a/proj/lnk/.bashrc", Resolved: "/home/a/.bashrc"}}}
	if inProj.Match(NewCache(escaped)) || !inProj.MatchWide(NewCache(escaped)) {
		t.Error("a symlink out of the project: allowed, or not denied")
	}
	bashrc, _ := c.Matcher(Spec{Dimensions: map[string]string{"path": "/home/a/.bashrc"}})
	if !bashrc.MatchWide(NewCache(escaped)) {
		t.Error("a deny of the resolved path misses its symlinked spelling")
	}
	for _, v := range []string{"/home/a/proj/sub/./.env", "/home/a/proj//sub/.env", "/home/a/proj/sub/x/../.env"} {
		req := &decision.Request{Dimensions: []decision.Dimension{{Name: "path", Value: v}}}
		if !env.MatchWide(NewCache(req)) || !inProj.Match(NewCache(req)) {
			t.Errorf("%s: not seen as /home/a/proj/sub/.env", v)
		}
	}
}

// A deny's glob on a command line matches when one of its simple
// commands does, as written or by its known words; an allow's does not.
func TestMatchWideReadsCommands(t *testing.T) {
	c := NewCompiler()
	rm, _ := c.Matcher(Spec{Dimensions: map[string]string{"command": "rm -rf *"}})
	for _, v := range []string{"cd / && rm -rf ~", "echo $(rm -rf x)", "'rm' -rf \"$HOME\"", "true; rm -rf $(ls)", "x 'y; rm -rf z"} {
		req := &decision.Request{Dimensions: []decision.Dimension{{Name: "command", Value: v}}}
		if !rm.MatchWide(NewCache(req)) {
			t.Errorf("%q: the deny misses it", v)
		}
		if rm.Match(NewCache(req)) {
			t.Errorf("%q: the allow matches it", v)
		}
	}
	if rm.MatchWide(NewCache(&decision.Request{Dimensions: []decision.Dimension{{Name: "command", Value: `git commit -m "rm -rf x"`}}})) {
		t.Error("a quoted argument is taken for a command")
	}
}

// Finding 3: a rules deny glob rm -rf * reaches the command through
// wrappers and shell syntax; a computed command is a maybe (asked), on a
// command line only.
func TestWideThroughShellSyntax(t *testing.T) {
	c := NewCompiler()
	rm, _ := c.Matcher(Spec{Dimensions: map[string]string{"command": "rm -rf *"}})
	cover := func(v string) shell.Cover {
		return rm.Wide(NewCache(&decision.Request{Dimensions: []decision.Dimension{{Name: "command", Value: v}}}))
	}
	for _, v := range []string{"sudo rm -rf ~", "env rm -rf ~", "command rm -rf ~", "nohup rm -rf ~", "xargs rm -rf", "{rm,-rf,~}", "bash -c 'rm -rf ~'",
		"$'rm' -rf ~", "rm${IFS}-rf ~", "rm -$'rf' ~", "eval 'rm -rf ~'", "bash <<< 'rm -rf ~'", "alias x='rm -rf'; x ~", "=rm -rf ~", "/bin/rm -rf ~"} {
		if got := cover(v); got != shell.Covered {
			t.Errorf("%q: %v", v, got)
		}
	}
	if got := cover("$(echo rm) -rf ~"); got != shell.Maybe {
		t.Errorf("a computed command: %v", got)
	}
	run, _ := c.Matcher(Spec{Dimensions: map[string]string{"run": "rm -rf *"}})
	if got := run.Wide(NewCache(&decision.Request{Dimensions: []decision.Dimension{{Name: "run", Value: "$(echo rm) -rf ~", Syntax: decision.SyntaxShell}}})); got != shell.Maybe {
		t.Errorf("a computed command in a dimension of syntax shell: %v", got)
	}
	if got := run.Wide(NewCache(&decision.Request{Dimensions: []decision.Dimension{{Name: "run", Value: "$(echo rm) -rf ~"}}})); got != shell.Not {
		t.Errorf("a value that is no command line: %v", got)
	}
}

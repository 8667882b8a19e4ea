package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// FuzzRulesFile: a rules file of any bytes is loaded or refused, never a
// panic; a loaded rule never matches a request its own not_match examples
// describe, the whole file decides its match examples as the rule does
// and allows no not_match example of an allow rule (the loader checked
// them).
func FuzzRulesFile(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/rules/example.toml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"[[rule]]\ntool = \"a*\"\n[[rule.not_match]]\ntool = \"b\"\naction = \"x\"\n",
		"[[rule]]\n[[rule.when]]\npath = \"$.a[0]\"\nprefix = [1, [2, 3]]\n",
		"[[rule]]\nmatch_all = true\n[[rule.match]]\ntool = \"b\"\naction = \"x\"\n[verbs]\n",
		"[[rule]]\ntool = \"*\"\ndecision = \"deny\"\n",
		"[verbs]\nroles = { x = [] }\n[[annotations]]\ntool = \"*\"\nmode = \"auto\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse("fuzz.toml", b)
		if err != nil {
			return
		}
		var f fileTOML
		if err := decodeRules(b, &f); err != nil {
			t.Fatalf("loaded, but does not decode again: %v", err)
		}
		for i, rt := range f.Rules {
			r := p.rules[i]
			for _, ex := range rt.NotMatch {
				req, err := exampleRequest(ex)
				if err == nil && r.Matches(req) {
					t.Fatalf("rule %d matches its not_match example %v", i+1, ex)
				}
				if v, _ := Combine(p.Opinions(req)); r.Verdict == Allow && v == Allow {
					t.Fatalf("the file allows not_match example %v of allow rule %d", ex, i+1)
				}
			}
			for _, ex := range rt.Match {
				req, _ := exampleRequest(ex)
				if v, _ := Combine(p.Opinions(req)); v != r.Verdict {
					t.Fatalf("the file decides match example %v of rule %d %v, not %v", ex, i+1, v, r.Verdict)
				}
			}
		}
	})
}

// FuzzPath: any path is compiled or refused, and a compiled one selects
// from any arguments without a panic.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"$.a", "$['k.x']", "$.a[0]", "$..a", "$[*]", "$.a[-1]", `$["\u0041"]`, "$[?@.a]"} {
		f.Add(s)
	}
	args := []any{nil, "s", []any{"a", 1.0}, map[string]any{"a": []any{map[string]any{"b": true}}}}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := newCompiler().predicate(predicateTOML{Path: path, Exists: new(bool)})
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", path)) && path != "" {
				t.Fatalf("the error does not name the path: %v", err)
			}
			return
		}
		for _, a := range args {
			p.holds(a)
		}
	})
}

package match

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// genLine is a generated command line: simple commands of words that
// name commands (plain, by path, zsh =name, behind wrappers), cut short
// by expansions, with substitutions, -c strings and pipes into a shell.
func genLine(r *rand.Rand) string {
	words := []string{"rm", "-rf", "~", "/bin/rm", "./rm", "=rm", "sudo", "env", "FOO=1", "go", "test", "./...", "git", "status", "r$x", "rm${IFS}-rf",
		"$(echo rm)", "`id`", "bash -c 'rm -rf x'", "x/y", "'rm'", "r\"m\"", "-r$y", "{rm,-rf}", "xargs", "cat", "*.go", "a\\ b", "\"rm -rf\""}
	ops := []string{"; ", " && ", " | ", " || ", "\n", " & "}
	var b strings.Builder
	for c := range 1 + r.IntN(4) {
		if c > 0 {
			b.WriteString(ops[r.IntN(len(ops))])
		}
		for w := range 1 + r.IntN(4) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		if r.IntN(6) == 0 {
			b.WriteString(" | sh")
		}
	}
	return b.String()
}

// The index of a line spares only readings that cannot cover: a deny's
// result through it (denied, wholeDenied) is shell.Line.Denied's and the
// glob's on the whole value, for generated lines and patterns.
func TestDeniedSparesNothing(t *testing.T) {
	patterns := []string{"rm -rf *", "rm", "rm *", "/bin/rm *", "git status", "go test *", "rm -rf", " rm -rf *", "sudo *", "r", "rm -r*", "x/y*", "-rf *", "=rm *", "cat *"}
	c := NewCompiler()
	var globs []Glob
	for _, p := range patterns {
		g, err := c.Glob(p)
		if err != nil {
			t.Fatal(err)
		}
		globs = append(globs, g)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		line := genLine(r)
		req := &decision.Request{Dimensions: []decision.Dimension{{Name: "command", Value: line, Syntax: decision.SyntaxShell}}}
		cache := NewCache(req)
		l := shell.Split(line)
		for _, g := range globs {
			if got, want := cache.line(0).denied(g), l.Denied(g.deny()); got != want {
				t.Fatalf("%q, %q: indexed %v, read %v", line, patterns[g.id], got, want)
			}
			if got, want := cache.wholeDenied("command", g), g.p.Denies(req.Dimensions[0]); got != want {
				t.Fatalf("%q, %q: whole value indexed %v, matched %v", line, patterns[g.id], got, want)
			}
		}
	}
}

// The rules' allow (Allows, indexed) and shell.Line.Allowed, which
// describe uses to offer a scope, agree on generated lines: a scope
// offered as covering a line is one the rules judge as covering it.
func TestAllowsAgreesWithShell(t *testing.T) {
	patterns := []string{"rm -rf *", "rm", "rm *", "bash -c *", "go test *", "*", "r*", "cat *", "xargs *", "sudo *"}
	c := NewCompiler()
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range patterns {
		m, err := c.Matcher(Spec{Dimensions: map[string]string{"command": p}})
		if err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			line := genLine(r)
			req := &decision.Request{Dimensions: []decision.Dimension{{Name: "command", Value: line, Syntax: decision.SyntaxShell}}}
			if got, want := m.Match(NewCache(req)), shell.Split(line).Allowed(shell.ScopeCovers(decision.Scope{Kind: decision.KindGlob, Match: p})); got != want {
				t.Fatalf("%q, %q: rules allow %v, shell.Line.Allowed %v", line, p, got, want)
			}
		}
	}
}

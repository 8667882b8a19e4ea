package e2e

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/askperm/askperm"

// imports lists each package of the module with the module's packages it
// imports directly (tests excluded).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		graph[name] = nil
		for _, imp := range p.Imports {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				graph[name] = append(graph[name], rest)
			}
		}
	}
	return graph
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// public reports whether a program of another module may import pkg: the
// protocol, the form, the frontends and the caller's side.
func public(pkg string) bool {
	return !strings.Contains(pkg, "internal") &&
		slices.ContainsFunc([]string{"decision", "form", "prompt", "helpers"}, func(d string) bool { return under(pkg, d) })
}

// publicToInternal is the public → internal edge: the only internal
// packages each public package may import. The terminal frontends share
// the opening and guarding of a terminal (tty); the full-screen UI keeps
// the terminal libraries from querying the terminal when they initialise
// (noquery). Anything else a public package needs is public itself.
var publicToInternal = map[string][]string{
	"prompt/tui":  {"internal/tty", "internal/noquery"},
	"prompt/line": {"internal/tty"},
}

// usedByPublic reports whether pkg is an internal package some public
// package imports.
func usedByPublic(pkg string) bool {
	for _, deps := range publicToInternal {
		if slices.Contains(deps, pkg) {
			return true
		}
	}
	return false
}

// TestImportGraph: data flows one way. The protocol knows nothing of
// askperm; the form only the protocol; frontends neither the pipeline, the
// command line, the stored state nor each other; only the pipeline joins
// canned answers, policy, state and frontends; the command line reaches
// them only through the pipeline and the settings, but for the state store
// it lists and forgets.
func TestImportGraph(t *testing.T) {
	graph := imports(t)
	for _, want := range []string{"decision", "helpers", "helpers/elicit", "form", "prompt", "prompt/tui", "prompt/line", "prompt/dialog", "internal/pipeline", "internal/settings", "cmd"} {
		if _, ok := graph[want]; !ok {
			t.Fatalf("package %s is missing: the rules below would pass vacuously", want)
		}
	}
	frontends := []string{"prompt/tui", "prompt/line", "prompt/dialog"}
	joined := []string{"internal/answers", "internal/policy", "internal/state", "prompt"}
	for pkg, deps := range graph {
		bad := func(dep, why string) { t.Errorf("%s imports %s: %s", pkg, dep, why) }
		var joins []string
		for _, dep := range deps {
			switch {
			case pkg == "decision":
				bad(dep, "the protocol imports nothing of askperm")
			case pkg == "helpers" && dep != "decision":
				bad(dep, "the caller's side imports only the protocol")
			case under(pkg, "helpers") && dep != "decision" && dep != "helpers":
				bad(dep, "a bridge of the caller's side imports only the protocol and the Runner")
			case public(pkg) && under(dep, "internal") && !slices.Contains(publicToInternal[pkg], dep):
				bad(dep, "a public package reaches only the internal packages publicToInternal lists for it")
			case usedByPublic(pkg) && public(dep):
				bad(dep, "an internal package beneath a public one imports no public package: it returns its own errors, the public package wraps them")
			case pkg == "form" && dep != "decision":
				bad(dep, "the form imports only the protocol")
			case pkg == "prompt" && dep != "decision" && dep != "form":
				bad(dep, "the Frontend interface imports only the protocol and the form")
			case slices.ContainsFunc(frontends, func(f string) bool { return under(pkg, f) }) &&
				(under(dep, "internal/pipeline") || under(dep, "cmd") || under(dep, "internal/state") || under(dep, "internal/settings") ||
					slices.ContainsFunc(frontends, func(f string) bool { return under(dep, f) && !under(pkg, f) })):
				bad(dep, "a frontend never reaches up, nor into another frontend")
			case pkg == "cmd" && (under(dep, "prompt") || under(dep, "internal/answers") || under(dep, "internal/policy")):
				bad(dep, "the command line reaches these only through the pipeline and the settings (it opens the state store only to list and forget)")
			case under(dep, "cmd") && pkg != "":
				bad(dep, "only main runs the command line")
			case pkg == "internal/teamcmd" && (under(dep, "internal/policy") || under(dep, "prompt") || under(dep, "internal/pipeline")):
				bad(dep, "askperm-team's command line reaches the frontends and the pipeline only through the inbox, and never policy")
			case under(dep, "internal/teamcmd") && pkg != "cmd/askperm-team":
				bad(dep, "only askperm-team's main runs its command line")
			case under(dep, "internal/team/wire") && !under(pkg, "internal/team/wire") && !under(pkg, "internal/teamcmd") && !under(pkg, "internal/inbox") &&
				pkg != "internal/team/natstest" && pkg != "bench/measure": // the tests' servers and the benchmarks' approver, as askperm-team does
				bad(dep, "the NATS client is askperm-team's alone: askperm's side of team mode (internal/team) runs askperm-team instead")
			}
			for _, j := range joined {
				if under(dep, j) && !slices.Contains(joins, j) {
					joins = append(joins, j)
				}
			}
		}
		// The settings load and type the values of each (an answers file, a
		// frontend list) and decide nothing; the set-up checks look at each
		// and decide nothing. askperm-team's command line is the approver's
		// side, as cmd is the person's: it reads canned answers for inbox
		// answer and lists the team's rules in the state store's rule form,
		// and decides nothing itself (the host verifies every answer).
		if len(joins) > 1 && pkg != "internal/pipeline" && pkg != "internal/settings" && pkg != "internal/setup" && pkg != "internal/teamcmd" {
			t.Errorf("%s joins %v: only the pipeline joins answers, policy, state and frontends", pkg, joins)
		}
	}
}

// TestHelpersLinkOnlyTheProtocol: a program that runs a permission helper
// through helpers.Runner links what the protocol links and the standard
// library, not the MCP SDK (the elicitation bridge, helpers/elicit, does).
func TestHelpersLinkOnlyTheProtocol(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return strings.Fields(string(out))
	}
	protocol := deps("decision")
	if !slices.Contains(protocol, "github.com/go-json-experiment/json/jsontext") {
		t.Fatalf("the protocol's libraries are not listed: the check below would pass vacuously: %v", protocol)
	}
	for _, dep := range deps("helpers") {
		first, _, _ := strings.Cut(dep, "/")
		if strings.Contains(first, ".") && dep != module+"/helpers" && !slices.Contains(protocol, dep) {
			t.Errorf("helpers links %s, beyond the protocol", dep)
		}
	}
}

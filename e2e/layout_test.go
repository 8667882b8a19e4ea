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

// TestImportGraph: data flows one way. The protocol knows nothing of
// askperm; the form only the protocol; frontends neither the pipeline, the
// command line, the stored state nor each other; only the pipeline joins
// canned answers, policy, state and frontends; the command line reaches
// them only through the pipeline and the settings, but for the state store
// it lists and forgets.
func TestImportGraph(t *testing.T) {
	graph := imports(t)
	for _, want := range []string{"decision", "helpers", "form", "prompt", "prompt/tui", "prompt/line", "prompt/dialog", "internal/pipeline", "internal/settings", "cmd"} {
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
			}
			for _, j := range joined {
				if under(dep, j) && !slices.Contains(joins, j) {
					joins = append(joins, j)
				}
			}
		}
		// The settings load and type the values of each (an answers file, a
		// frontend list) and decide nothing; the set-up checks look at each
		// and decide nothing.
		if len(joins) > 1 && pkg != "internal/pipeline" && pkg != "internal/settings" && pkg != "internal/setup" {
			t.Errorf("%s joins %v: only the pipeline joins answers, policy, state and frontends", pkg, joins)
		}
	}
}

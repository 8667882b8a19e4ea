package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// embedded builds a program of another module that imports only pkg of
// this module (through a replace directive, as a program embedding askperm
// would) and does nothing but print "started".
func embedded(t *testing.T, pkg string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod": "module example.invalid/embed\n\ngo 1.26\n\nrequire " + module + " v0.0.0\n\nreplace " + module + " => " + root + "\n",
		"go.sum": string(sum),
		"main.go": "package main\n\nimport (\n\t\"os\"\n\n\t_ \"" + module + "/" + pkg + "\"\n)\n\n" +
			"func main() { os.Stdout.WriteString(\"started\\n\") }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "embed")
	build := exec.Command("go", "build", "-mod=mod", "-o", out, ".")
	build.Dir = dir
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a program importing %s: %v\n%s", pkg, err, msg)
	}
	return out
}

// TestEmbedNoTerminalQuery: a program of its own importing only one public
// package (prompt/tui, which links the terminal libraries, first), with a
// terminal that answers nothing as stdout and as its controlling terminal,
// starts at once and writes only what it writes itself: the package's
// initialisation (and the terminal libraries' beneath it) sends no query
// to the terminal and waits for no answer.
func TestEmbedNoTerminalQuery(t *testing.T) {
	for _, pkg := range []string{"prompt/tui", "prompt/line", "prompt/dialog", "prompt", "form", "decision", "helpers", "helpers/elicit"} {
		t.Run(pkg, func(t *testing.T) { startsQuietly(t, pkg) })
	}
}

func startsQuietly(t *testing.T, pkg string) {
	prog := embedded(t, pkg)
	s := preparePTY(t, nil, baseEnv("TERM=xterm-256color", "COLORTERM=truecolor"))
	s.cmd.Path, s.cmd.Args = prog, []string{prog}
	s.cmd.Stdout = s.pts
	if out := startedAlone(t, s); out != "started\r\n" {
		t.Fatalf("the terminal received %q, want only the program's own line", out)
	}
}

// queryStall bounds a start-up: an unanswered terminal query holds one up
// for five seconds, a start-up takes milliseconds even on a loaded machine.
const queryStall = 4 * time.Second

// startedAlone runs s, whose stdout is its terminal, to its end, failing
// the test if it waited for the terminal, and returns what the terminal
// received by the end of its first line: all a program that queries no
// terminal writes there.
func startedAlone(t *testing.T, s *ptySession) string {
	t.Helper()
	start := time.Now()
	s.start()
	r := s.wait()
	if took := time.Since(start); took > queryStall {
		t.Errorf("took %v: something waited for the terminal", took)
	}
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.HasSuffix(s.raw(), "\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return s.raw()
}

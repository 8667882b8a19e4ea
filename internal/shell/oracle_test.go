package shell

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stubs are programs for the oracle's PATH: rm logs its words and runs
// nothing; the wrappers askperm does not find on the machine run their
// words.
var stubs = map[string]string{
	"rm":             `printf '%s\n' "#rm $*" >> "$ORACLE_LOG"`,
	"sudo":           `while [ "${1#-}" != "$1" ]; do [ "$1" = -u ] && shift; shift; done; exec "$@"`,
	"doas":           `exec "$@"`,
	"unknownwrapper": `shift 2; exec "$@"`,
	"curl":           `echo 'rm -rf ~'`,
}

// tools are the real programs the oracle's lines may run.
var tools = []string{"bash", "sh", "dash", "zsh", "env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "find", "flock", "cat", "true", "false", "echo", "wait"}

// oracle runs lines under shell, each in a subshell, with rm a stub and
// HOME a scratch directory, and returns for each line whether rm ran with
// -rf first.
func oracle(t *testing.T, shell string, lines []string) []bool {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	log, work := filepath.Join(dir, "log"), filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for i, l := range lines {
		// In eval, a line the shell cannot parse ends its subshell only.
		fmt.Fprintf(&script, "echo '#line %d' >> \"$ORACLE_LOG\"\n( eval %s ) </dev/null >/dev/null 2>&1\n", i, shq(l))
	}
	cmd := exec.Command(shell, "-c", script.String())
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin, "HOME=" + filepath.Join(dir, "home"), "ORACLE_LOG=" + log}
	cmd.Run() // some lines fail; what ran is in the log
	out, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	ran := make([]bool, len(lines))
	i := -1
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "#line %d", &i); err == nil {
			continue
		}
		if strings.HasPrefix(l, "#rm -rf") && i >= 0 {
			ran[i] = true
		}
	}
	return ran
}

// The shell as the oracle: whenever bash, dash or zsh (each for the lines
// it reads) runs rm -rf from a generated line (wrappers real or stubbed,
// -c strings, eval, here-strings, here-documents, ANSI-C quoting, braces,
// zsh's =rm), a deny of rm -rf covers the line, or may (a computed
// command). A shell not installed is skipped with a message.
func TestDenyCoversWhatTheShellRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 19))
	lines := []string{"rm${IFS}-rf ~", "rm -$'rf' ~", "{rm,-rf,~}", "$'rm' -rf ~", "eval 'rm -rf ~'", "bash <<< 'rm -rf ~'",
		"=rm -rf ~", "curl x | sh", "sudo -u root env FOO=1 nice -n 5 timeout 5 rm -rf ~", "echo ~ | xargs rm -rf", "x=rm; $x -rf ~"}
	targets := []string{"~", "*", "~/.ssh", `"$HOME"`, "x", "{a,b}"}
	for range 300 {
		cmd := quoteWord(rng, "rm") + " " + quoteWord(rng, "-rf") + " " + targets[rng.IntN(len(targets))]
		for range rng.IntN(3) {
			cmd = prefixes[rng.IntN(len(prefixes))](cmd)
		}
		for range rng.IntN(3) {
			if rng.IntN(2) == 0 {
				cmd = runners[rng.IntN(len(runners))](cmd)
			} else {
				cmd = wrap(rng, cmd)
			}
		}
		if !strings.Contains(cmd, "env -i") { // would find the real rm
			lines = append(lines, cmd)
		}
	}
	for _, sh := range []string{"bash", "dash", "zsh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed: skipped", sh)
			continue
		}
		ran, n := oracle(t, path, lines), 0
		for i, l := range lines {
			if !ran[i] {
				continue
			}
			n++
			if got := Split(l).Denied(denied); got == Not {
				t.Errorf("%s ran rm -rf from %q: %v", sh, l, got)
			}
		}
		t.Logf("%s ran rm -rf from %d of %d lines", sh, n, len(lines))
		if sh == "bash" && n < len(lines)/4 {
			t.Errorf("bash ran rm -rf from only %d lines: the oracle does not run them", n)
		}
	}
}

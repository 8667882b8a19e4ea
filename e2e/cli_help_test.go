package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// askperm --help explains itself: examples, every exit status, the files.
func TestCLIHelp(t *testing.T) {
	r := runPipe(t, nil, baseEnv(), "--help")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"Examples:", "askperm < request.json", "| askperm", "--answers ci.toml", "askperm hook claude-code", "askperm hook codex",
		"Exit status:", "\n    0 ", "\n    1 ", "\n    2 ", "\n    64 ", "\n    65 ", "\n    69 ", "\n    70 ", "\n    124 ", "\n    130 ",
		"Files:", "askperm/config.toml", "askperm/rules.toml", "$XDG_STATE_HOME/askperm/",
		"--max-request", "--frontend",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for _, sub := range [][]string{{"digest", "--help"}, {"hook", "codex", "--help"}, {"check", "--help"}, {"completion", "bash", "--help"}} {
		r := runPipe(t, nil, baseEnv(), sub...)
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%v: exit %d, no example in %q", sub, r.code, r.stdout)
		}
	}
}

// --version and version print one line on stdout.
func TestCLIVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := runPipe(t, nil, baseEnv(), args...)
		if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "askperm ") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// It says what the binary's build info holds: the module's version and,
	// when go build stamped it, the commit.
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	r := runPipe(t, nil, baseEnv(), "--version")
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		switch {
		case len(f) >= 3 && f[0] == "mod" && !strings.Contains(r.stdout, f[2]):
			t.Errorf("--version %q does not give the module version %s", r.stdout, f[2])
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			if rev := strings.TrimPrefix(f[1], "vcs.revision="); !strings.Contains(r.stdout, "commit "+rev[:12]) {
				t.Errorf("--version %q does not name commit %s", r.stdout, rev)
			}
		}
	}
}

// The completion scripts are written on stdout; bash accepts its script,
// and a completion request lists commands, flags and flag values.
func TestCLICompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := runPipe(t, nil, baseEnv(), "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "askperm") || r.stderr != "" {
			t.Fatalf("completion %s: exit %d, %d bytes, stderr %q", shell, r.code, len(r.stdout), r.stderr)
		}
		if shell != "bash" {
			continue
		}
		script := filepath.Join(t.TempDir(), "askperm.bash")
		if err := os.WriteFile(script, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v: %s", err, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", ""}, []string{"digest", "hook", "check", "completion", "version"}},
		{[]string{"__complete", "--"}, []string{"--answer", "--answers", "--frontend", "--max-request", "--version"}},
		{[]string{"__complete", "--frontend", ""}, []string{"tui", "line", "yad", "zenity", "none"}},
		{[]string{"__complete", "--frontend", "tui,line,"}, []string{"tui,line,yad", "tui,line,zenity", "tui,line,none"}},
		{[]string{"__complete", "--answer", ""}, []string{"allow-once", "deny-once", "allow-always", "deny-always", "allow-session"}},
		{[]string{"__complete", "hook", ""}, []string{"claude-code", "codex"}},
	} {
		r := runPipe(t, nil, baseEnv(), tc.args...)
		got := map[string]bool{}
		for _, line := range strings.Split(r.stdout, "\n") {
			name, _, _ := strings.Cut(line, "\t")
			got[name] = true
		}
		for _, w := range tc.want {
			if r.code != 0 || !got[w] {
				t.Errorf("%v: exit %d, %q lacks %q", tc.args, r.code, r.stdout, w)
			}
		}
	}
}

// A misspelt key in a user file is exit 64 naming the key meant.
func TestCLINearKeyErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	answers := write("answers.toml", "[[answer]]\ntol = \"write_file\"\nchoice = \"allow-once\"\n")
	config := write("config.toml", "frontend = [\"none\"]\n")
	rules := write("rules.toml", "[[rule]]\ntool = \"x\"\ndecison = \"deny\"\n")
	choice := write("choice.toml", "[[answer]]\nchoice = \"allow\"\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"answers", []string{"--answers", answers}, `unknown key "answer.tol": did you mean "tool"?`},
		{"config", []string{"--config", config}, `unknown key "frontend": did you mean "frontends"?`},
		{"rules", []string{"--rules", rules}, `unknown key "rule.decison": did you mean "decision"?`},
		{"choice", []string{"--answers", choice}, `choice: unknown "allow" (valid: allow-once, deny-once, allow-always, deny-always, allow-session)`},
		{"frontend", []string{"--frontend", "tui,gui"}, `unknown frontend "gui" (known: tui, line, yad, zenity, team, none)`},
	} {
		r := runPipe(t, readFile(t, "requests/write-file.json"), baseEnv(), tc.args...)
		if r.code != 64 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 64 and %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// The size error says how to raise the cap.
func TestCLISizeErrorNamesTheFlag(t *testing.T) {
	big := []byte(`{"action":"x","reason":"` + strings.Repeat("a", 2<<10) + `"}`)
	for _, args := range [][]string{{"--answer", "allow-once", "--max-request", "1KiB"}, {"digest", "--max-request", "1KiB"}} {
		r := runPipe(t, big, baseEnv(), args...)
		if r.code != 65 || r.stdout != "" || !strings.Contains(r.stderr, "request larger than 1 KiB (raise --max-request)") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runPipe(t, big, baseEnv(), "--answer", "allow-once", "--max-request", "4KiB")
	if r.code != 0 {
		t.Errorf("with the cap raised: exit %d, stderr %q", r.code, r.stderr)
	}
}

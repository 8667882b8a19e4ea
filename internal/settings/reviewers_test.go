package settings

import (
	"slices"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

// [[reviewer]] tables become the chain, in file order, scoped by their
// globs.
func TestResolveReviewers(t *testing.T) {
	getenv, _ := env(t, `
[[reviewer]]
name = "reads"
command = ["/bin/true", "--flag"]
timeout = "2s"
tool = "read_*"

[[reviewer]]
name = "all"
command = ["/bin/false"]
`)
	s, err := Resolve(Flags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string][]string{
		`{"tool":"read_file","action":"read"}`:   {"reads", "all"},
		`{"tool":"write_file","action":"write"}`: {"all"},
	} {
		req, err := decision.Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Reviewers.For(req); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
	if none, _ := env(t, "timeout = \"1s\"\n"); mustResolve(t, none).Reviewers != nil {
		t.Error("a chain without reviewers")
	}
}

func mustResolve(t *testing.T, getenv func(string) string) Settings {
	t.Helper()
	s, err := Resolve(Flags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A reviewer may allow: its program is checked as a dialog program is,
// and every mistake is an error naming the reviewer and the key.
func TestReviewersRejected(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[[reviewer]]\ncommand = [\"/bin/true\"]\n", "reviewer[0]: name: missing"},
		{"[[reviewer]]\nname = \"a\"\n", "reviewer[0] (a): command: missing"},
		{"[[reviewer]]\nname = \"a\"\ncommand = []\n", "reviewer[0] (a): command: missing"},
		{"[[reviewer]]\nname = \"a\"\ncommand = [\"true\"]\n", `reviewer[0] (a): command: "true" is not an absolute path`},
		{"[[reviewer]]\nname = \"a\"\ncommand = [\"/etc/passwd\"]\n", "reviewer[0] (a): command: /etc/passwd: not executable"},
		{"[[reviewer]]\nname = \"a\"\ncommand = [\"/bin/true\"]\n[[reviewer]]\nname = \"a\"\ncommand = [\"/bin/true\"]\n", `reviewer[1]: name: "a" given twice`},
		{"[[reviewer]]\nname = \"a\"\ncommand = [\"/bin/true\"]\nshell = true\n", `unknown key`},
		{"[[reviewer]]\nname = \"a\"\ncommand = \"/bin/true\"\n", `command`},
	} {
		if _, err := Parse([]byte(tc.toml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
	for _, tc := range []struct{ toml, want string }{
		{"[[reviewer]]\nname = \"a\"\ncommand = [\"/bin/true\"]\ntimeout = \"soon\"\n", "reviewer[0] (a): timeout: "},
		{"[[reviewer]]\nname = \"a\"\ncommand = [\"/bin/true\"]\ntool = \"[\"\n", `reviewer "a": tool: `},
	} {
		getenv, path := env(t, tc.toml)
		if _, err := Resolve(Flags{}, getenv); err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}

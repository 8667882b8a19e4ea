package shell

import (
	"slices"
	"strings"
	"testing"
)

// A first-words scope looks past wrappers and never ends at an option
// nor follows a runner whose words may start any command.
func TestLead(t *testing.T) {
	for line, want := range map[string]string{
		"go test ./...":                 "go test",
		"timeout 60 go test ./...":      "timeout 60 go test",
		"timeout -s KILL 60 go test":    "timeout -s KILL 60 go test",
		"nice -n5 go test ./...":        "nice -n5 go test",
		"nice -n 5 nohup go test ./x":   "nice -n 5 nohup go test",
		"env LANG=C go test ./...":      "env LANG=C go test",
		"env FOO=1 go test ./...":       "",
		"env GIT_PAGER=./x git log":     "",
		"sudo -u root go test":          "",
		"xargs -0 rm":                   "",
		"find . -name x":                "",
		"git -C /tmp status":            "",
		"ls -la /tmp":                   "ls -la",
		"rm -rf build":                  "rm -rf",
		"make -C /tmp all":              "",
		"/usr/bin/git --no-pager log":   "",
		"timeout 60":                    "",
		"ls":                            "",
		"stdbuf -oL go test ./...":      "stdbuf -oL go test",
		"taskset 0x1 make all":          "taskset 0x1 make all",
		"bash -c 'ls'":                  "",
		"bash script.sh arg":            "bash script.sh",
		"/usr/bin/timeout 5 make check": "/usr/bin/timeout 5 make check",
	} {
		got, ok := Split(line).Commands[0].Lead(2)
		if strings.Join(got, " ") != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", line, got, ok, want)
		}
	}
}

// Whatever the words, a lead is a start of them, of at least two words,
// that does not end at an option of a program taking a subcommand nor
// start at a runner.
func FuzzLead(f *testing.F) {
	for _, s := range []string{"timeout 60 go test", "nice -n", "env -- x", "env A=1", "timeout"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws := strings.Fields(s)
		lead, ok := Command{Words: ws}.Lead(2)
		if !ok {
			return
		}
		if len(lead) < 2 || !slices.Equal(lead, ws[:len(lead)]) || (subcommanded()[Name(lead[len(lead)-2])] || isShell(Name(lead[len(lead)-2]))) && strings.HasPrefix(lead[len(lead)-1], "-") {
			t.Fatalf("%q: lead %q", s, lead)
		}
		if _, known := leadWrappers()[Name(ws[0])]; wrappers()[Name(ws[0])] && !known {
			t.Fatalf("%q: lead %q follows a runner", s, lead)
		}
	})
}

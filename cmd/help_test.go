package cmd

import (
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
)

// The root help says how to use askperm, what each exit status means and
// which files it reads, on stdout; every command has an example.
func TestHelp(t *testing.T) {
	code, stdout, stderr := invoke(t, "", nil, "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Examples:", "askperm < request.json", "--answer deny-once", "askperm hook claude-code",
		"askperm digest", "Exit status:", "config.toml", "rules.toml", "~/.local/state/askperm/"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, status := range []int{cli.ExitOK, cli.ExitDeny, exitBlock, cli.ExitUsage, cli.ExitRequest, cli.ExitNoMatch, cli.ExitInternal, cli.ExitTimeout, cli.ExitCancel} {
		if !strings.Contains(stdout, "\n    "+strconv.Itoa(status)+" ") {
			t.Errorf("help does not explain exit status %d", status)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" && c.Name() != "help" && !strings.HasPrefix(c.Name(), "__") {
			t.Errorf("%s has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(Root())
	for path := range examples {
		if c, _, err := Root().Find(strings.Fields(path)[1:]); err != nil || c.CommandPath() != path {
			t.Errorf("example for %q, which is no command", path)
		}
	}
}

func TestVersion(t *testing.T) {
	info := func(version string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Path: "github.com/askperm/askperm", Version: version}}
		for i := 0; i < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	for _, tc := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, "(devel)"},
		{info(""), true, "(devel)"},
		{info("v1.2.3"), true, "v1.2.3"},
		{info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true"), true,
			"(devel) (commit 0123456789ab, 2026-01-02T03:04:05Z, modified)"},
		{info("v0.0.0-20260102030405-0123456789ab+dirty", "vcs.revision", "0123456789abcdef", "vcs.modified", "false"), true,
			"v0.0.0-20260102030405-0123456789ab+dirty (commit 0123456789ab)"},
	} {
		if got := version(tc.info, tc.ok); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, stderr := invoke(t, "", nil, args...)
		if code != 0 || stderr != "" || stdout != "askperm "+buildVersion()+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

func TestDigest(t *testing.T) {
	req := `{ "id": "1", "action": "x", "arguments": {"n": 1.0e0, "s": "\u00e9"} }`
	want, err := decision.RequestSHA256([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := invoke(t, req, nil, "digest")
	if code != 0 || stdout != want+"\n" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %s", code, stdout, stderr, want)
	}
	// The digest is the one a decision carries.
	_, decided, _ := invoke(t, req, nil, "--answer", "deny-once")
	if !strings.Contains(decided, `"request_sha256":"`+want+`"`) {
		t.Errorf("decision %s does not carry %s", decided, want)
	}
	for _, tc := range []struct {
		name, req string
		args      []string
		code      int
		want      string
	}{
		{"not JSON", `{"action":`, nil, cli.ExitRequest, "askperm would refuse this request"},
		{"not a request", `{"action":"x","colour":"red"}`, nil, cli.ExitRequest, `field "colour": unknown field`},
		{"duplicate name", `{"action":"x","action":"y"}`, nil, cli.ExitRequest, "askperm would refuse this request"},
		{"too large", `{"action":"x"}`, []string{"--max-request", "4"}, cli.ExitRequest, "request larger than 4 bytes (raise --max-request)"},
		{"bad size", `{"action":"x"}`, []string{"--max-request", "big"}, cli.ExitUsage, `--max-request: "big" is not a positive byte count`},
		{"argument", `{"action":"x"}`, []string{"extra"}, cli.ExitUsage, "unknown command"},
	} {
		code, stdout, stderr := invoke(t, tc.req, nil, append([]string{"digest"}, tc.args...)...)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and %q", tc.name, code, stdout, stderr, tc.code, tc.want)
		}
	}
}

// Completion offers the commands, the flags, and the values of the flags
// that take one of a few.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", ""}, []string{"ask\t", "digest\t", "hook\t", "completion\t", "version\t"}},
		{[]string{"__complete", "--"}, []string{"--answer\t", "--frontend\t", "--max-request\t", "--version\t"}},
		{[]string{"__complete", "--answer", ""}, settings.ChoiceNames()},
		{[]string{"__complete", "--frontend", "tui,"}, []string{"tui,line", "tui,yad", "tui,zenity", "tui,none"}},
		{[]string{"__complete", "hook", "codex", "--frontend", ""}, []string{"tui", "line", "yad", "zenity", "none"}},
		{[]string{"__complete", "log", "--decision", ""}, []string{"allow", "deny"}},
		{[]string{"__complete", "schema", ""}, []string{"request", "decision", "answers", "rules"}},
		{[]string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish"}},
	} {
		code, stdout, _ := invoke(t, "", nil, tc.args...)
		lines := strings.Split(stdout, "\n")
		for _, want := range tc.want {
			found := false
			for _, l := range lines {
				name, _, _ := strings.Cut(l, "\t")
				found = found || name == strings.TrimSuffix(want, "\t")
			}
			if code != 0 || !found {
				t.Errorf("%v: exit %d, %q lacks %q", tc.args, code, stdout, want)
			}
		}
	}
	if _, stdout, _ := invoke(t, "", nil, "__complete", "--frontend", "tui,"); strings.Contains(stdout, "tui,tui") {
		t.Errorf("a listed frontend is offered again: %q", stdout)
	}
}

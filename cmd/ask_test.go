package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/cli/clitest"
	"github.com/askperm/askperm/internal/pipeline"
)

// invoke runs askperm's command line in this process with req on stdin,
// and returns the exit status, stdout and stderr.
func invoke(t *testing.T, req string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Invoke(t, run, req, env, args...)
}

var writeFile = clitest.WriteFile

// Flags mean one thing: every combination that could be read two ways is
// a usage error, with a message saying what to do, and nothing is written.
func TestUsageErrors(t *testing.T) {
	answers := writeFile(t, "answers.toml", "[[answer]]\nchoice = \"allow-once\"\n")
	badGlob := writeFile(t, "glob.toml", "[[answer]]\nchoice = \"allow-once\"\n[[answer]]\ntool = \"write_[\"\nchoice = \"deny-once\"\n")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"empty --answer", []string{"--answer", ""}, nil, "--answer: empty; give allow-once, deny-once, allow-always, deny-always or allow-session"},
		{"--answer and --answers", []string{"--answer", "allow-once", "--answers", answers}, nil, "--answer and --answers: give one or the other"},
		{"--strict alone", []string{"--strict"}, nil, "--strict needs --answers"},
		{"--strict with --answer", []string{"--strict", "--answer", "deny-once"}, nil, "--strict needs --answers"},
		{"--message alone", []string{"--message", "no"}, nil, "--message needs --answer"},
		{"unknown choice", []string{"--answer", "allow"}, nil, `--answer: choice: unknown "allow" (valid: allow-once, deny-once, allow-always, deny-always, allow-session)`},
		{"bad glob", []string{"--answers", badGlob}, nil, badGlob + `: answer 2: tool: invalid glob "write_["`},
		{"missing answers file", []string{"--answers", "/nonexistent/answers.toml"}, nil, "--answers: open /nonexistent/answers.toml"},
		{"bad timeout", []string{"--timeout", "soon"}, nil, `--timeout: "soon" is neither a duration`},
		{"bad size", []string{"--max-request", "1GB"}, nil, `--max-request: "1GB" is not a positive byte count`},
		{"bad frontend", []string{"--frontend", "gui"}, nil, `--frontend: unknown frontend "gui"`},
		{"bad environment", nil, map[string]string{"ASKPERM_FRONTEND": "tui,tui"}, `ASKPERM_FRONTEND: frontend "tui" listed twice`},
		{"unknown flag", []string{"--answers-file", "x"}, nil, "unknown flag: --answers-file"},
		{"argument", []string{"allow"}, nil, `unknown command "allow"`},
	} {
		code, stdout, stderr := invoke(t, `{"action":"x"}`, tc.env, tc.args...)
		if code != cli.ExitUsage || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "askperm: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 64 and %q", tc.name, code, stdout, stderr, tc.want)
		}
	}
}

// askperm ask takes the same flags as askperm.
func TestAskSubcommand(t *testing.T) {
	code, stdout, _ := invoke(t, `{"action":"x","id":"1"}`, nil, "ask", "--answer", "deny-once", "--message", "not now")
	d, err := decision.ParseDecision([]byte(stdout), mustParse(t, `{"action":"x","id":"1"}`))
	if code != 0 || err != nil || d.Decision != decision.Deny || d.Message != "not now" || d.Frontend != decision.FrontendAnswers {
		t.Errorf("exit %d, %+v, %v", code, d, err)
	}
}

func mustParse(t *testing.T, raw string) *decision.Request {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// The flag's help names every choice a canned answer may give.
func TestAnswerHelpAdvertisesOfferedChoices(t *testing.T) {
	_, stdout, _ := invoke(t, "", nil, "--help")
	if !strings.Contains(stdout, "--answer ") {
		t.Fatalf("help does not show --answer: %q", stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--answer ") && !strings.Contains(line, "allow-once, deny-once, allow-always, deny-always or allow-session") {
			t.Errorf("help: %q", line)
		}
	}
}

// Each outcome has its exit status, and only outcomes with a decision
// write one.
func TestWriteOutcome(t *testing.T) {
	req := mustParse(t, `{"action":"x"}`)
	deny := func(c decision.Cause) *decision.Decision {
		d := decision.Denied(req, c, decision.FrontendNone)
		return &d
	}
	allow := decision.Denied(req, decision.CauseUser, decision.FrontendTUI)
	allow.Decision = decision.Allow
	for _, tc := range []struct {
		name       string
		out        pipeline.Outcome
		exitStatus bool
		code       int
		written    bool
	}{
		{"allow", pipeline.Outcome{Decision: &allow}, false, 0, true},
		{"deny", pipeline.Outcome{Decision: deny(decision.CauseUser)}, false, 0, true},
		{"allow, --exit-status", pipeline.Outcome{Decision: &allow}, true, 0, true},
		{"deny, --exit-status", pipeline.Outcome{Decision: deny(decision.CauseUnavailable)}, true, 1, true},
		{"timeout, --exit-status", pipeline.Outcome{Decision: deny(decision.CauseTimeout)}, true, 124, true},
		{"cancelled, --exit-status", pipeline.Outcome{Decision: deny(decision.CauseCancelled)}, true, 130, true},
		{"internal error", pipeline.Outcome{Decision: deny(decision.CauseError), Err: errors.New("bug")}, true, 70, true},
		{"invalid request", pipeline.New(pipeline.Config{MaxRequest: 64}).Run(context.Background(), strings.NewReader(`{}`)), false, 65, false},
		{"no decision, no reason", pipeline.Outcome{}, false, 70, false},
		{"no match", pipeline.Outcome{Err: pipeline.ErrNoMatch}, false, 69, false},
		{"bad answer", pipeline.Outcome{Err: pipeline.ErrBadAnswer}, false, 64, false},
	} {
		out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		code := cli.ExitOK
		var ee *cli.ExitError
		if err := writeOutcome(cli.Streams{Decision: out, ErrOut: &stderr}, tc.out, tc.exitStatus); errors.As(err, &ee) {
			code = ee.Code
		}
		written, _ := os.ReadFile(out.Name())
		out.Close()
		if code != tc.code || (len(written) > 0) != tc.written {
			t.Errorf("%s: exit %d, wrote %q", tc.name, code, written)
		}
	}
}

// An invalid request writes nothing and exits 65, with its reason.
func TestInvalidRequest(t *testing.T) {
	code, stdout, stderr := invoke(t, `{"action":"x","tol":"y"}`, nil, "--answer", "allow-once")
	if code != cli.ExitRequest || stdout != "" || !strings.Contains(stderr, `"tol"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/notify/notifytest"
)

// notifyConfig is a config file, in dir, whose [notify] runs program.
func notifyConfig(t *testing.T, dir, program string) string {
	t.Helper()
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf("[notify]\ncommand = [%q]\n", program)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// [notify]'s program runs once when the line prompt puts a request
// before a person, with the question's one line and none of the
// request's free text (its reason, details and arguments), and not at
// all when a canned answer or rules decide or nobody can be asked.
func TestNotifyLinePrompt(t *testing.T) {
	dir := notifytest.Dir(t)
	rec := notifytest.NewRecorder(t, dir)
	config := notifyConfig(t, dir, rec.Program)
	req := readFile(t, "requests/write-file.json")

	rules := filepath.Join(dir, "rules.toml")
	if err := os.WriteFile(rules, []byte("[[rule]]\ntool = \"write_file\"\ndecision = \"deny\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--answer", "allow-once"},
		{"--rules", rules},
		{"--frontend", "none"},
		{"--frontend", "line"}, // no terminal: unavailable
	} {
		r := runPipe(t, req, baseEnv(), append([]string{"--config", config, "--timeout", "20s"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}

	s := startPTY(t, req, baseEnv("TERM=dumb", "DISPLAY=:97", "SECRET_TOKEN=s3cret"), "--frontend", "line", "--timeout", "20s", "--config", config)
	s.waitFor("Tool: write_file (from engine:1)")
	// The prompt waits for its answer until the notification has run.
	calls := rec.WaitCalls(t, 1)
	lineAnswer(s, "Answer [y/a/d/n/m/?] (", 1, "n")
	d := lineDecision(t, s, 0)
	if d["decision"] != "deny" || d["frontend"] != "line" {
		t.Fatalf("want a deny by the person on the line prompt; got %v", d)
	}
	if calls = rec.Calls(t); len(calls) != 1 {
		t.Fatalf("%d calls, want 1 (for the request asked on the line prompt only)", len(calls))
	}
	c := calls[0]
	notifytest.OnlyNames(t, c, notify.Names())
	if c["ASKPERM_QUESTION"] != writeFileHeadline || c["ASKPERM_FRONTEND"] != "line" || c["DISPLAY"] != ":97" || c["ASKPERM_HOST"] == "" {
		t.Errorf("environment: %v", c)
	}
	deadline, err := time.Parse(time.RFC3339, c["ASKPERM_DEADLINE"])
	if err != nil || time.Until(deadline) > 20*time.Second || time.Until(deadline) < -time.Minute {
		t.Errorf("ASKPERM_DEADLINE=%q: %v", c["ASKPERM_DEADLINE"], err)
	}
	for k, v := range c {
		for _, free := range []string{"Save the generated report", "All green", "Write a file", "s3cret"} {
			if strings.Contains(v, free) {
				t.Errorf("%s=%q carries %q", k, v, free)
			}
		}
	}
}

// A notification program that cannot run is a warning on stderr; the
// person is asked all the same.
func TestNotifyMissingProgram(t *testing.T) {
	dir := notifytest.Dir(t)
	config := notifyConfig(t, dir, filepath.Join(dir, "missing"))
	s := startPTY(t, readFile(t, "requests/write-file.json"), baseEnv("TERM=dumb"), "--frontend", "line", "--timeout", "20s", "--config", config)
	lineAnswer(s, "Answer [y/a/d/n/m/?] (", 1, "y")
	r := s.wait()
	if d := checkDecision(t, r.stdout); r.code != 0 || d["decision"] != "allow" || d["frontend"] != "line" {
		t.Fatalf("want an allow by the person; got exit %d, %v", r.code, d)
	}
	if !strings.Contains(r.stderr, "askperm: notify: ") || !strings.Contains(r.stderr, "missing") {
		t.Errorf("stderr: %q", r.stderr)
	}
}

// [notify]'s program runs once when the terminal UI puts a request
// before a person.
func TestNotifyTUI(t *testing.T) {
	dir := notifytest.Dir(t)
	rec := notifytest.NewRecorder(t, dir)
	s := startTUI(t, "write-file.json", "--config", notifyConfig(t, dir, rec.Program))
	tuiShown(s, "Your decision", 1)
	rec.WaitCalls(t, 1)
	tuiKey(s, tuiEnter, "Denial reason (optional)") // Deny once, the default
	s.send(tuiEnter)
	if d := tuiDecision(t, s, 0); d["decision"] != "deny" || d["frontend"] != "tui" {
		t.Fatalf("want a deny by the person in the terminal UI; got %v", d)
	}
	calls := rec.Calls(t)
	if len(calls) != 1 || calls[0]["ASKPERM_FRONTEND"] != "tui" || calls[0]["ASKPERM_QUESTION"] != writeFileHeadline {
		t.Fatalf("calls: %v", calls)
	}
	notifytest.OnlyNames(t, calls[0], notify.Names())
}

// [notify]'s program runs once when a dialog puts a request before a
// person, with the display in its environment.
func TestNotifyDialog(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		dir := notifytest.Dir(t)
		rec := notifytest.NewRecorder(t, dir)
		a := startDialog(t, x, prog, "write-file.json", "--config", notifyConfig(t, dir, rec.Program))
		v := a.waitDialog(prog, nil)
		rec.WaitCalls(t, 1)
		v.keys(denyOnceKeys[prog]...)
		a.waitDialog(prog, v).keys("Return")
		wantDeny(t, a.decision(), "user", prog)
		calls := rec.Calls(t)
		if len(calls) != 1 || calls[0]["ASKPERM_FRONTEND"] != prog || calls[0]["DISPLAY"] != x.Display || calls[0]["ASKPERM_QUESTION"] != writeFileHeadline {
			t.Fatalf("calls: %v", calls)
		}
		notifytest.OnlyNames(t, calls[0], notify.Names())
	})
}

package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/quick"
	"unicode"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/notify/notifytest"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/prompt"
)

const approver = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"

func TestDoctorTeam(t *testing.T) {
	safe := notifytest.Dir(t)
	trustedProgram := notifytest.Script(t, safe, team.ProgramName, "")
	untrusted := filepath.Join(t.TempDir(), team.ProgramName) // under /tmp: refused
	writeFile(t, untrusted, "#!/bin/sh\n", 0o700)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(filepath.Dir(self), team.ProgramName)
	cfg := func(program string, approvers ...string) *team.Config {
		return &team.Config{URL: "nats://nats.example:4222", Host: "box1", Approvers: approvers, Program: program}
	}
	for _, tc := range []struct {
		name   string
		team   *team.Config
		path   string // PATH
		beside bool   // an askperm-team beside the test binary
		want   Status
		says   []string
	}{
		{"off", nil, "", false, OK, []string{"no [team]"}},
		{"configured, trusted", cfg(trustedProgram, approver), "", false, OK, []string{trustedProgram + ": trusted", "host box1", "1 trusted approvers", "not contacted"}},
		{"configured, untrusted", cfg(untrusted, approver), "", false, Fail, []string{untrusted}},
		{"on PATH, trusted", cfg("", approver, "UBVAAG2PPJVMRBOEUXQOTXSUVJVOFEBT2ZMA54NFFSMDC5MCZYOFSHU7"), safe, false, OK, []string{trustedProgram + ": trusted", "2 trusted approvers"}},
		{"missing", cfg("", approver), t.TempDir(), false, Fail, []string{"not installed beside askperm nor on PATH", "go install github.com/askperm/askperm/cmd/askperm-team@"}},
		{"beside, untrusted", cfg("", approver), t.TempDir(), true, Fail, []string{"beside askperm refused"}},
		{"no approvers", cfg(trustedProgram), "", false, Fail, []string{"0 trusted approvers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			if tc.beside {
				writeFile(t, beside, "#!/bin/sh\n", 0o700)
				t.Cleanup(func() { os.Remove(beside) })
			}
			d, _ := doctorIn(t, map[string]string{})
			d.Team = tc.team
			c := check(t, d.Run(context.Background()), "team")
			if c.Status != tc.want {
				t.Errorf("%+v, want %s", c, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(c.Detail+c.Fix, s) {
					t.Errorf("%+v does not say %q", c, s)
				}
			}
			if c.Status != OK && c.Fix == "" {
				t.Errorf("%+v says nothing to do", c)
			}
		})
	}
}

// The team frontend in the chain asks the team when it can, and says why
// not when it cannot; never "asks no one".
func TestDoctorTeamFrontend(t *testing.T) {
	o := prompt.Options{TTY: "/nonexistent/tty", Getenv: func(string) string { return "" }}
	chain := Chain{Frontends: []decision.Frontend{decision.FrontendTeam}, Prompt: o}
	found := func(string) (string, error) { return "/opt/askperm-team", nil }
	for _, tc := range []struct {
		name string
		d    Doctor
		want Status
		says string
	}{
		{"asks", Doctor{Team: &team.Config{Host: "box1", Approvers: []string{approver}}, FindTeam: found}, OK, "team would ask the team: host box1's question goes to 1 trusted approvers"},
		{"no [team]", Doctor{}, Warn, "team: no [team] in config.toml"},
		{"no approvers", Doctor{Team: &team.Config{Host: "box1"}, FindTeam: found}, Warn, "approvers is empty"},
	} {
		c := tc.d.frontends("here", chain)
		if c.Status != tc.want || !strings.Contains(c.Detail, tc.says) || strings.Contains(c.Detail, "asks no one") {
			t.Errorf("%s: %+v, want %s saying %q", tc.name, c, tc.want, tc.says)
		}
	}
}

func TestDoctorNotify(t *testing.T) {
	trusted := notifytest.Script(t, notifytest.Dir(t), "notifier", "")
	untrusted := filepath.Join(t.TempDir(), "notifier")
	writeFile(t, untrusted, "#!/bin/sh\n", 0o700)
	desktop := map[string]string{"DISPLAY": ":1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/bus"}
	_, sendErr := os.Stat("/usr/bin/notify-send")
	for _, tc := range []struct {
		name   string
		notify *notify.Config
		env    map[string]string
		want   Status
		says   string
	}{
		{"off", &notify.Config{Off: true}, desktop, OK, "off"},
		{"none", nil, desktop, OK, "off"},
		{"configured, trusted", &notify.Config{Command: []string{trusted, "-x"}}, map[string]string{}, OK, trusted + ": trusted"},
		{"configured, untrusted", &notify.Config{Command: []string{untrusted}}, desktop, Fail, untrusted},
		{"default, no desktop", &notify.Config{}, map[string]string{}, Warn, "no display, no D-Bus session"},
		{"default, no D-Bus", &notify.Config{}, map[string]string{"DISPLAY": ":1"}, Warn, "no D-Bus session"},
	} {
		d, _ := doctorIn(t, tc.env)
		d.Notify = tc.notify
		c := d.notifyCheck()
		if c.Status != tc.want || !strings.Contains(c.Detail, tc.says) || c.Status != OK && c.Fix == "" {
			t.Errorf("%s: %+v, want %s saying %q", tc.name, c, tc.want, tc.says)
		}
	}
	d, _ := doctorIn(t, desktop)
	d.Notify = &notify.Config{}
	c := d.notifyCheck()
	if sendErr == nil && (c.Status != OK || !strings.Contains(c.Detail, "default: /usr/bin/notify-send")) ||
		sendErr != nil && c.Status == OK && !strings.Contains(c.Detail, "/usr/local/bin/notify-send") {
		t.Errorf("default on a desktop: %+v", c)
	}
}

func TestDoctorReviewers(t *testing.T) {
	trusted := notifytest.Script(t, notifytest.Dir(t), "review", "")
	untrusted := filepath.Join(t.TempDir(), "review")
	writeFile(t, untrusted, "#!/bin/sh\n", 0o700)
	glob := func(s string) *string { return &s }
	d, _ := doctorIn(t, map[string]string{})
	if cs := d.reviewerChecks(); len(cs) != 1 || cs[0].Name != "reviewers" || cs[0].Detail != "none" {
		t.Errorf("no reviewers: %+v", cs)
	}
	d.Reviewers = []settings.Reviewer{
		{Name: "lint", Command: []string{trusted, "--strict"}},
		{Name: "net", Command: []string{untrusted}, Timeout: "3s", Tool: glob("Bash"), Action: glob("curl *")},
	}
	cs := d.Run(context.Background())
	if c := check(t, cs, "reviewer lint"); c.Status != OK || c.Detail != trusted+": trusted; timeout 10s (default), reviews every request" {
		t.Errorf("trusted reviewer: %+v", c)
	}
	c := check(t, cs, "reviewer net")
	if c.Status != Fail || c.Fix == "" || !strings.HasPrefix(c.Detail, untrusted+": ") || !strings.HasSuffix(c.Detail, "; timeout 3s, reviews tool=Bash action=curl *") {
		t.Errorf("untrusted reviewer: %+v", c)
	}
}

// Whatever config.toml names a reviewer, its globs or its program, the
// check shows it printable: a control byte never reaches the terminal.
func TestDoctorReviewerPrintable(t *testing.T) {
	f := func(name, program, tool string, timeout string) bool {
		c := reviewerCheck(settings.Reviewer{Name: name, Command: []string{program}, Tool: &tool, Timeout: settings.Duration(timeout)})
		printable := func(s string) bool {
			return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
		}
		return printable(c.Name) && printable(c.Detail) && printable(c.Fix)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Error(err)
	}
}

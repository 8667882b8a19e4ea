package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/prompt"
)

// doctorIn is a Doctor on a fresh home, its environment env.
func doctorIn(t *testing.T, env map[string]string) (Doctor, string) {
	t.Helper()
	home := t.TempDir()
	env["HOME"] = home
	getenv := func(k string) string { return env[k] }
	return Doctor{Getenv: getenv, Place: Place{Getenv: getenv, Dir: t.TempDir()},
		StateDir: filepath.Join(home, "state"), Self: self}, home
}

// check is the named check of cs.
func check(t *testing.T, cs []Check, name string) Check {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %v", name, cs)
	return Check{}
}

func TestDoctorFreshHome(t *testing.T) {
	d, _ := doctorIn(t, map[string]string{})
	cs := d.Run(context.Background())
	for _, c := range cs {
		if c.Status == Fail {
			t.Errorf("a fresh home fails %s: %s", c.Name, c.Detail)
		}
		if c.Status != OK && c.Fix == "" && c.Name != "pane" && c.Name != "state directory" {
			t.Errorf("%s is %s and says nothing to do", c.Name, c.Status)
		}
	}
	for _, name := range []string{"claude-code hook", "codex hook", "display"} {
		if c := check(t, cs, name); c.Status != Warn {
			t.Errorf("%s: %s, want warn", name, c.Status)
		}
	}
}

func TestDoctorBrokenFiles(t *testing.T) {
	d, home := doctorIn(t, map[string]string{})
	writeFile(t, filepath.Join(home, ".config", "askperm", "rules.toml"), "[[rule]]\nnmae = \"x\"\n", 0o600)
	writeFile(t, filepath.Join(home, ".config", "askperm", "config.toml"), "timeout = 5\nfrontend = [\"tui\"]\n", 0o600)
	cs := d.Run(context.Background())
	if c := check(t, cs, "rules"); c.Status != Fail || !strings.Contains(c.Detail, "rules.toml") {
		t.Errorf("a broken rules file: %+v", c)
	}
	if c := check(t, cs, "config"); c.Status != Fail || !strings.Contains(c.Detail, `did you mean "frontends"`) {
		t.Errorf("a broken config: %+v", c)
	}
}

func TestDoctorStateDir(t *testing.T) {
	for _, tc := range []struct {
		mode os.FileMode
		want Status
	}{{0o700, OK}, {0o750, Warn}, {0o770, Fail}, {0o777, Fail}} {
		d, _ := doctorIn(t, map[string]string{})
		if err := os.Mkdir(d.StateDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d.StateDir, tc.mode); err != nil {
			t.Fatal(err)
		}
		if c := d.stateDir(); c.Status != tc.want {
			t.Errorf("mode %#o: %+v, want %s", tc.mode, c, tc.want)
		}
	}
}

// Each hook found is checked for its program: one that is gone fails.
func TestDoctorHooks(t *testing.T) {
	d, home := doctorIn(t, map[string]string{"PATH": "/nonexistent"})
	bin := filepath.Join(home, "bin", "askperm")
	writeFile(t, bin, "#!/bin/sh\n", 0o700)
	settings := filepath.Join(home, ".claude", "settings.json")
	writeFile(t, settings, `{"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": "`+bin+` hook claude-code"}]}],
		"PreToolUse": [{"hooks": [{"type": "command", "command": "/gone/askperm hook claude-code"}]}]}}`, 0o600)
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), "[[hooks.PermissionRequest]]\n[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\ncommand = \"askperm hook codex\"\n", 0o600)
	var claude, codex []Check
	for _, c := range d.Run(context.Background()) {
		switch c.Name {
		case "claude-code hook":
			claude = append(claude, c)
		case "codex hook":
			codex = append(codex, c)
		}
	}
	if len(claude) != 2 || claude[0].Status != OK || claude[1].Status != Fail || !strings.Contains(claude[1].Fix, "/gone/askperm") {
		t.Errorf("claude-code: %+v; want the hook ok, the PreToolUse one failing", claude)
	}
	if len(codex) != 1 || codex[0].Status != Fail || !strings.Contains(codex[0].Fix, "not on PATH") {
		t.Errorf("codex: %+v; want askperm not on PATH", codex)
	}
	writeFile(t, settings, `{"hooks": `, 0o600)
	if c := d.hooks("claude-code"); len(c) != 1 || c[0].Status != Fail {
		t.Errorf("unreadable settings: %+v", c)
	}
}

// The frontend chain says the first that could ask, after why each
// before it could not.
func TestDoctorFrontends(t *testing.T) {
	env := map[string]string{"TERM": "dumb"}
	o := prompt.Options{TTY: "/nonexistent/tty", Getenv: func(k string) string { return env[k] }}
	all := []decision.Frontend{decision.FrontendTUI, decision.FrontendLine, decision.FrontendYad, decision.FrontendZenity}
	c := Doctor{}.frontends("here", Chain{Frontends: all, Prompt: o})
	if c.Status != Warn || !strings.Contains(c.Detail, "tui: TERM is empty or dumb") || !strings.Contains(c.Detail, "yad: no display") {
		t.Errorf("nothing can ask: %+v", c)
	}
	c = Doctor{}.frontends("here", Chain{Frontends: []decision.Frontend{decision.FrontendNone}, Prompt: o})
	if c.Status != Warn || !strings.Contains(c.Detail, "none: asks no one") {
		t.Errorf("none: %+v", c)
	}
	if _, err := os.Stat("/usr/bin/zenity"); err == nil {
		env["DISPLAY"] = ":99"
		if c := (Doctor{}).frontends("here", Chain{Frontends: all, Prompt: o}); c.Status != OK || !strings.Contains(c.Detail, "would ask in a dialog") {
			t.Errorf("a display: %+v", c)
		}
	}
}

// A store another process holds is reported locked, soon: doctor does
// not wait as a request would.
func TestDoctorStoreLocked(t *testing.T) {
	d, _ := doctorIn(t, map[string]string{})
	if c := d.store(context.Background()); c.Status != OK {
		t.Errorf("no store yet: %+v", c)
	}
	s, err := state.Open(context.Background(), d.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	c := d.store(context.Background()) // a second descriptor: flock conflicts within a process too
	s.Close()
	if c.Status != Fail || !strings.Contains(c.Detail, "locked") {
		t.Errorf("held store: %+v", c)
	}
	if c := d.store(context.Background()); c.Status != OK {
		t.Errorf("released store: %+v", c)
	}
}

package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/prompt"
)

// env is an environment with a config file at dir/askperm/config.toml
// holding cfg ("" for none).
func env(t *testing.T, cfg string, kv ...string) (func(string) string, string) {
	t.Helper()
	dir := t.TempDir()
	m := map[string]string{"XDG_CONFIG_HOME": dir, "HOME": dir}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	path := filepath.Join(dir, "askperm", "config.toml")
	if cfg != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func(k string) string { return m[k] }, path
}

func TestResolveDefaults(t *testing.T) {
	getenv, _ := env(t, "")
	s, err := Resolve(Flags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout != DefaultTimeout || s.MaxRequest != DefaultMaxRequest || !reflect.DeepEqual(s.Frontends, prompt.DefaultOrder) ||
		s.Prompt.ArmDelay != prompt.DefaultArmDelay || s.Prompt.TTY != "" || s.Prompt.DialogPaths != nil {
		t.Errorf("got %+v", s)
	}
	if s.Prompt.Env("HOME") == "" {
		t.Error("frontends do not see the caller's environment")
	}
}

// Flags win over the environment, which wins over the config file.
func TestResolvePrecedence(t *testing.T) {
	cfg := "timeout = 120\nfrontends = [\"zenity\"]\narm_delay = \"1s\"\nbell = true\n[dialogs]\nyad = \"/bin/sh\"\n"
	for _, tc := range []struct {
		name      string
		flags     Flags
		env       []string
		timeout   time.Duration
		frontends []decision.Frontend
		tty       string
	}{
		{"config", Flags{}, nil, 120 * time.Second, []decision.Frontend{"zenity"}, ""},
		{"env over config", Flags{}, []string{"ASKPERM_FRONTEND", "line", "ASKPERM_TTY", "/dev/pts/9"}, 120 * time.Second, []decision.Frontend{"line"}, "/dev/pts/9"},
		{"flags over env", Flags{Timeout: "5s", Frontend: "tui,none", TTY: "/dev/pts/1"}, []string{"ASKPERM_FRONTEND", "line", "ASKPERM_TTY", "/dev/pts/9"}, 5 * time.Second, []decision.Frontend{"tui", "none"}, "/dev/pts/1"},
	} {
		getenv, _ := env(t, cfg, tc.env...)
		s, err := Resolve(tc.flags, getenv)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.Timeout != tc.timeout || !reflect.DeepEqual(s.Frontends, tc.frontends) || s.Prompt.TTY != tc.tty ||
			s.Prompt.ArmDelay != time.Second || s.Prompt.DialogPaths["yad"] != "/bin/sh" || !s.Prompt.Bell {
			t.Errorf("%s: got %+v", tc.name, s)
		}
	}
}

func TestResolveConfigFile(t *testing.T) {
	getenv, path := env(t, "timeout = \"bad\"\n")
	other := filepath.Join(t.TempDir(), "other.toml")
	if err := os.WriteFile(other, []byte("timeout = \"7s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Resolve(Flags{Config: other}, getenv); err != nil || s.Timeout != 7*time.Second {
		t.Errorf("--config: got %+v, %v", s, err)
	}
	withEnv, _ := env(t, "", "ASKPERM_CONFIG", other)
	if s, err := Resolve(Flags{}, withEnv); err != nil || s.Timeout != 7*time.Second {
		t.Errorf("ASKPERM_CONFIG: got %+v, %v", s, err)
	}
	missing := filepath.Join(t.TempDir(), "missing.toml")
	if _, err := Resolve(Flags{Config: missing}, getenv); err == nil || !strings.HasPrefix(err.Error(), "--config "+missing+": no such file") {
		t.Errorf("a missing --config file: %v", err)
	}
	missingEnv, _ := env(t, "", "ASKPERM_CONFIG", missing)
	if _, err := Resolve(Flags{}, missingEnv); err == nil || !strings.HasPrefix(err.Error(), "ASKPERM_CONFIG "+missing+": no such file") {
		t.Errorf("a missing ASKPERM_CONFIG file: %v", err)
	}
	if _, err := Resolve(Flags{}, getenv); err == nil || !strings.HasPrefix(err.Error(), path+": timeout: ") {
		t.Errorf("bad default config: got %v", err)
	}
}

// Every error names the source of the bad value.
func TestResolveErrorsNameTheirSource(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   string
		flags Flags
		env   []string
		want  string
	}{
		{"flag timeout", "", Flags{Timeout: "soon"}, nil, `--timeout: "soon" is neither a duration`},
		{"negative timeout", "", Flags{Timeout: "-1s"}, nil, `--timeout: "-1s" is negative`},
		{"flag size", "", Flags{MaxRequest: "1GB"}, nil, `--max-request: "1GB" is not a positive byte count`},
		{"flag frontend", "", Flags{Frontend: "tui,gui"}, nil, `--frontend: unknown frontend "gui" (known: tui, line, yad, zenity, team, none)`},
		{"env frontend", "", Flags{}, []string{"ASKPERM_FRONTEND", "line,line"}, `ASKPERM_FRONTEND: frontend "line" listed twice`},
		{"config timeout", "timeout = \"soon\"\n", Flags{}, nil, `config.toml: timeout: "soon" is neither`},
		{"config frontends", "frontends = [\"kde\"]\n", Flags{}, nil, `config.toml: frontends: unknown frontend "kde"`},
		{"config arm_delay", "arm_delay = -1\n", Flags{}, nil, `config.toml: arm_delay: "-1" is negative`},
		{"config key", "timout = 1\n", Flags{}, nil, `config.toml: unknown key "timout": did you mean "timeout"?`},
	} {
		getenv, _ := env(t, tc.cfg, tc.env...)
		_, err := Resolve(tc.flags, getenv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Only the winning value is parsed: a flag mends a bad variable or config
// value.
func TestResolveParsesOnlyTheWinner(t *testing.T) {
	getenv, _ := env(t, "timeout = \"soon\"\n", "ASKPERM_FRONTEND", "kdialog")
	if s, err := Resolve(Flags{Timeout: "3s", Frontend: "none"}, getenv); err != nil || s.Timeout != 3*time.Second {
		t.Errorf("got %+v, %v", s, err)
	}
}

// The [state], [breaker] and [limits] sections of config.toml.
func TestResolveMemorySections(t *testing.T) {
	getenv, _ := env(t, `
[state]
dir = "/srv/askperm-state"
session_idle = "2h"
[breaker]
consecutive = 5
within = 0
user_consecutive = 7
user_within = 0
[limits]
prompts_per_minute = 0
prompts_per_minute_user = 30
`)
	s, err := Resolve(Flags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := state.Breaker{Session: state.Thresholds{Consecutive: 5, Window: 50}, User: state.Thresholds{Consecutive: 7, Window: 100}}
	if s.StateDir != "/srv/askperm-state" || s.SessionIdle != 2*time.Hour || s.Breaker != want || s.Prompts != (state.Rate{User: 30}) {
		t.Errorf("got %+v", s)
	}
	if s, _ := Resolve(Flags{StateDir: "/other"}, getenv); s.StateDir != "/other" {
		t.Errorf("--state-dir over the config: %q", s.StateDir)
	}
	off, _ := env(t, "[state]\nremember = false\n")
	if s, err := Resolve(Flags{}, off); err != nil || s.StateDir != "" {
		t.Errorf("remember = false: %q, %v", s.StateDir, err)
	}
	for cfg, want := range map[string]string{
		"[breaker]\nwindow = -1\n":           "config.toml: breaker.window: -1 is negative",
		"[breaker]\nuser_within = -1\n":      "config.toml: breaker.user_within: -1 is negative",
		"[state]\ndir = \"rel\"\n":           `config.toml: state.dir: "rel" is not an absolute path`,
		"[state]\nsession_idle = \"soon\"\n": `config.toml: state.session_idle: "soon"`,
		"[limits]\nprompts_per_hour = 1\n":   `unknown key "limits.prompts_per_hour" (valid here: prompts_per_minute, prompts_per_minute_user)`,
	} {
		getenv, _ := env(t, cfg)
		if _, err := Resolve(Flags{}, getenv); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", cfg, err, want)
		}
	}
}

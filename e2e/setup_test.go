package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// homeEnv is baseEnv with a fresh HOME (and so a state directory and
// config files of its own).
func homeEnv(t *testing.T, extra ...string) ([]string, string) {
	home := t.TempDir()
	return baseEnv(append([]string{"HOME=" + home}, extra...)...), home
}

func writeHomeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	b, err := filepath.Glob(path + ".askperm-backup-*")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInstallClaudeCode: install merges askperm's hook, with this binary's
// absolute path, into the user's settings, keeping the rest in its order
// and the old file as a backup; a second install changes nothing and says
// so.
func TestInstallClaudeCode(t *testing.T) {
	env, home := homeEnv(t)
	settings := filepath.Join(home, ".claude", "settings.json")
	before := `{"model": "opus", "permissions": {"allow": ["Bash(ls)"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`
	writeHomeFile(t, settings, before)

	r := runPipe(t, nil, env, "install", "claude-code")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "added to "+settings) || !strings.Contains(r.stderr, `+       "command": "`+bin+` hook claude-code",`) {
		t.Fatalf("install: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	after := readSettings(t, settings)
	hooks := after["hooks"].(map[string]any)
	want := `[{"hooks":[{"command":"` + bin + ` hook claude-code","timeout":60,"type":"command"}],"matcher":"*"}]`
	if got, _ := json.Marshal(hooks["PermissionRequest"]); string(got) != want {
		t.Errorf("PermissionRequest hooks %s, want %s", got, want)
	}
	if after["model"] != "opus" || hooks["Stop"] == nil || after["permissions"] == nil {
		t.Errorf("other settings lost: %v", after)
	}
	raw, _ := os.ReadFile(settings)
	if order := regexp.MustCompile(`(?s)"model".*"permissions".*"hooks".*"Stop".*"PermissionRequest"`); !order.Match(raw) {
		t.Errorf("keys out of order:\n%s", raw)
	}
	b := backups(t, settings)
	if len(b) != 1 || !strings.Contains(r.stderr, b[0]) {
		t.Fatalf("backups %v; stderr %s", b, r.stderr)
	}
	if old, _ := os.ReadFile(b[0]); string(old) != before {
		t.Errorf("the backup holds %s", old)
	}

	r = runPipe(t, nil, env, "install", "claude-code", "--user")
	if r.code != 0 || !strings.Contains(r.stderr, "nothing changed") {
		t.Fatalf("second install: exit %d, stderr %s", r.code, r.stderr)
	}
	if again, _ := os.ReadFile(settings); string(again) != string(raw) || len(backups(t, settings)) != 1 {
		t.Errorf("the second install changed the file or made a backup:\n%s", again)
	}

	r = runPipe(t, nil, env, "doctor")
	if !strings.Contains(r.stdout, "ok   claude-code hook: "+settings+": PermissionRequest runs "+bin+" hook claude-code") {
		t.Errorf("doctor after install: %s", r.stdout)
	}
}

// TestInstallDryRunAndCodex: --dry-run prints the would-be file and writes
// nothing; Codex's hooks.json goes to CODEX_HOME, and install says how
// Codex comes to run it.
func TestInstallDryRunAndCodex(t *testing.T) {
	codexHome := t.TempDir()
	env, _ := homeEnv(t, "CODEX_HOME="+codexHome)
	hooks := filepath.Join(codexHome, "hooks.json")
	r := runPipe(t, nil, env, "install", "codex", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "would add to "+hooks) || !strings.Contains(r.stderr, "/hooks") || !strings.Contains(r.stderr, "approvals_reviewer") {
		t.Fatalf("dry run: exit %d, stderr %s", r.code, r.stderr)
	}
	var printed map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &printed); err != nil || !strings.Contains(r.stdout, bin+" hook codex") {
		t.Errorf("dry run printed %q (%v)", r.stdout, err)
	}
	if _, err := os.Stat(hooks); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote %s", hooks)
	}
	dry := r.stdout
	r = runPipe(t, nil, env, "install", "codex")
	if written, _ := os.ReadFile(hooks); r.code != 0 || string(written) != dry {
		t.Fatalf("install: exit %d, stderr %s; wrote %s, not what the dry run printed", r.code, r.stderr, written)
	}
	if fi, err := os.Stat(hooks); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("hooks.json: %v, %v; want mode 0600", fi, err)
	}
}

// TestInstallRefusesLink: a settings file that is a symbolic link is
// refused, and neither it nor what it points to changes.
func TestInstallRefusesLink(t *testing.T) {
	env, home := homeEnv(t)
	target := filepath.Join(home, "dotfiles", "settings.json")
	writeHomeFile(t, target, `{"a": 1}`)
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, settings); err != nil {
		t.Fatal(err)
	}
	r := runPipe(t, nil, env, "install", "claude-code")
	if r.code != 64 || !strings.Contains(r.stderr, "askperm: install: "+settings+" is a symbolic link") {
		t.Errorf("exit %d, stderr %s; want 64, the link refused", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != `{"a": 1}` {
		t.Errorf("the link's target changed: %s", b)
	}
	if fi, err := os.Lstat(settings); err != nil || fi.Mode()&os.ModeSymlink == 0 || len(backups(t, settings)) != 0 {
		t.Errorf("the link was replaced or backed up")
	}
}

// doctorJSON runs askperm doctor --json.
func doctorJSON(t *testing.T, env []string) (int, map[string]map[string]string) {
	t.Helper()
	r := runPipe(t, nil, env, "doctor", "--json")
	var out struct {
		OK     bool                `json:"ok"`
		Checks []map[string]string `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("doctor --json: %v: %q; stderr %s", err, r.stdout, r.stderr)
	}
	if out.OK != (r.code == 0) {
		t.Errorf("ok %v with exit %d", out.OK, r.code)
	}
	checks := map[string]map[string]string{}
	for _, c := range out.Checks {
		checks[c["check"]] = c
	}
	return r.code, checks
}

// TestDoctorFreshHome: nothing set up is no failure; what is missing is
// a warning saying what to do.
func TestDoctorFreshHome(t *testing.T) {
	env, _ := homeEnv(t)
	code, checks := doctorJSON(t, env)
	if code != 0 {
		t.Errorf("exit %d on a fresh home: %v", code, checks)
	}
	for name, want := range map[string]string{"terminal": "warn", "display": "warn", "pane": "warn", "rules": "ok",
		"claude-code hook": "warn", "codex hook": "warn", "frontends of hooks, gate and mcp": "warn"} {
		if c := checks[name]; c["status"] != want {
			t.Errorf("%s: %v, want %s", name, c, want)
		}
	}
	if fix := checks["claude-code hook"]["fix"]; fix != "askperm install claude-code" {
		t.Errorf("no hook: fix %q", fix)
	}
}

// TestDoctorBrokenRules: a rules file askperm would refuse fails, exit 1.
func TestDoctorBrokenRules(t *testing.T) {
	env, home := homeEnv(t)
	writeHomeFile(t, filepath.Join(home, ".config", "askperm", "rules.toml"), "[[rule]]\ntool = 3\n")
	code, checks := doctorJSON(t, env)
	if c := checks["rules"]; code != 1 || c["status"] != "fail" || !strings.Contains(c["detail"], "rules.toml") {
		t.Errorf("exit %d, rules %v; want 1, the rules failing", code, c)
	}
	r := runPipe(t, nil, env, "doctor")
	if r.code != 1 || !regexp.MustCompile(`(?m)^fail rules: .*rules\.toml`).MatchString(r.stdout) {
		t.Errorf("exit %d, stdout %s", r.code, r.stdout)
	}
}

// TestDoctorTeamNotify: with [team] and [notify] configured, doctor
// reports the askperm-team program it would run, the host and the
// approvers without contacting the server, the team frontend as asking
// the team, and notify off.
func TestDoctorTeamNotify(t *testing.T) {
	env, home := homeEnv(t)
	writeHomeFile(t, filepath.Join(home, ".config", "askperm", "config.toml"), `frontends = ["team"]
[team]
url = "nats://127.0.0.1:1"
host = "box1"
approvers = ["UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"]
[notify]
command = []
`)
	_, checks := doctorJSON(t, env)
	if c := checks["team"]; !strings.Contains(c["detail"], "askperm-team") || !strings.Contains(c["detail"], "host box1, 1 trusted approvers") || !strings.Contains(c["detail"], "(not contacted)") {
		t.Errorf("team: %v", c)
	}
	if c := checks["frontends here"]; strings.Contains(c["detail"], "asks no one") || !strings.HasPrefix(c["detail"], "team would ask the team") && !strings.Contains(c["detail"], "team: ") {
		t.Errorf("frontends here: %v; want the team frontend asking the team, or why it cannot", c)
	}
	if c := checks["notify"]; c["status"] != "ok" || !strings.HasPrefix(c["detail"], "off") {
		t.Errorf("notify: %v", c)
	}
	if c := checks["reviewers"]; c["detail"] != "none" {
		t.Errorf("reviewers: %v", c)
	}
}

// TestDoctorWithPane: with askperm pane running on a pty, doctor finds it
// and says the hooks would ask there; doctor run on a terminal of its own
// says the terminal UI would ask here.
func TestDoctorWithPane(t *testing.T) {
	env, _ := homeEnv(t, "TERM=xterm-256color")
	p := startPTY(t, nil, env, "pane")
	p.waitFor("is kept for approvals")
	_, checks := doctorJSON(t, env)
	pane := checks["pane"]
	m := regexp.MustCompile(`askperm pane runs on (/dev/\S+) `).FindStringSubmatch(pane["detail"])
	if pane["status"] != "ok" || m == nil {
		t.Fatalf("pane: %v", pane)
	}
	if c := checks["frontends of hooks, gate and mcp"]; c["status"] != "ok" || !strings.HasPrefix(c["detail"], "tui would ask on "+m[1]) {
		t.Errorf("hooks' frontends: %v; want the terminal UI on the pane %s", c, m[1])
	}
	p.signal(2)
	p.wait()

	d := startPTY(t, nil, env, "doctor")
	r := d.wait()
	if !strings.Contains(r.stdout, "ok   terminal: /dev/tty") || !strings.Contains(r.stdout, "ok   frontends here: tui would ask on /dev/tty") {
		t.Errorf("doctor on a terminal: %s", r.stdout)
	}
}

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestInstallProject: --project writes the project's personal settings,
// found from a directory inside it, and Codex's project hooks.json.
func TestInstallProject(t *testing.T) {
	env, _ := homeEnv(t)
	proj := t.TempDir()
	sub := filepath.Join(proj, "src", "pkg")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for agent, file := range map[string]string{"claude-code": ".claude/settings.local.json", "codex": ".codex/hooks.json"} {
		cmd := exec.Command(bin, "install", agent, "--project")
		cmd.Dir, cmd.Env = sub, env
		out, err := cmd.CombinedOutput()
		path := filepath.Join(proj, file)
		if err != nil || !strings.Contains(string(out), "added to "+path) {
			t.Errorf("%s: %v: %s", agent, err, out)
		}
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), bin+" hook "+agent) {
			t.Errorf("%s: %s: %s, %v", agent, path, b, err)
		}
	}
	r := runPipe(t, nil, env, "install", "codex", "--project", "--user")
	if r.code != 64 {
		t.Errorf("--project with --user: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestInstallCodexInlineHooks: a config.toml with inline hooks is never
// rewritten (its comments would be lost): install prints the lines to add;
// once added, install has nothing to do and doctor finds the hook.
func TestInstallCodexInlineHooks(t *testing.T) {
	env, home := homeEnv(t)
	config := filepath.Join(home, ".codex", "config.toml")
	before := "# my settings\nmodel = \"x\" # the model\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo done\"\n"
	writeHomeFile(t, config, before)
	r := runPipe(t, nil, env, "install", "codex")
	lines, ok := strings.CutPrefix(r.stderr, "askperm: install: "+config+" holds inline [hooks]: askperm does not rewrite TOML; add these lines to it instead\n")
	if r.code != 64 || !ok || !strings.Contains(lines, `command = "`+bin+` hook codex"`) {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(config); string(b) != before {
		t.Errorf("config.toml changed: %s", b)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "hooks.json")); !os.IsNotExist(err) {
		t.Errorf("hooks.json written beside inline hooks")
	}
	writeHomeFile(t, config, before+lines)
	if r := runPipe(t, nil, env, "install", "codex"); r.code != 0 || !strings.Contains(r.stderr, "nothing changed") {
		t.Errorf("after adding the lines: exit %d, stderr %s", r.code, r.stderr)
	}
	if _, checks := doctorJSON(t, env); checks["codex hook"]["status"] != "ok" {
		t.Errorf("doctor: %v", checks["codex hook"])
	}
}

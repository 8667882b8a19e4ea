package setup

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

const self = "/opt/ask perm/bin/askperm-dev"

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// The hook command names the binary so that the shell runs it, whatever
// its path holds, and is recognised as askperm's.
func TestHookCommandRoundTrip(t *testing.T) {
	f := func(dir string, agentB bool) bool {
		agent := Agents[0]
		if agentB {
			agent = Agents[1]
		}
		if strings.ContainsRune(dir, 0) {
			return true // no path holds NUL
		}
		bin := "/" + dir + "/askperm"
		got, ok := runsHook(HookCommand(bin, agent), agent, "")
		_, other := runsHook(HookCommand(bin, agent), Agents[0]+Agents[1], "")
		return ok && got == bin && !other
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func TestRunsHook(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"askperm hook claude-code", true},
		{"/usr/local/bin/askperm hook claude-code --timeout 290s", true},
		{"'/opt/ask perm/bin/askperm-dev' hook claude-code", true}, // self
		{"askperm hook codex", false},
		{"askperm-dev hook claude-code", false},
		{"askperm check", false},
		{"echo askperm hook claude-code", false},
		{"askperm hook $(claude-code)", false},
	} {
		if _, got := runsHook(tc.cmd, "claude-code", self); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// Install adds the hook group and keeps every other member, in order; a
// second plan on the result changes nothing.
func TestPlanMergesOnce(t *testing.T) {
	for _, agent := range Agents {
		for _, before := range []string{
			"",
			"{}",
			`{"model": "x", "permissions": {"allow": ["Bash(ls)"]}, "z": 1, "a": 2}`,
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}, "after": true}`,
			`{"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "other"}]}]}}`,
		} {
			path := filepath.Join(t.TempDir(), "settings.json")
			if before != "" {
				writeFile(t, path, before, 0o644)
			}
			p, err := NewPlan(path, agent, self)
			if err != nil {
				t.Fatalf("%s %q: %v", agent, before, err)
			}
			checkMerged(t, before, p.After, agent)
			if _, err := p.Write(time.Now()); err != nil {
				t.Fatal(err)
			}
			again, err := NewPlan(path, agent, self)
			if err != nil || again.After != nil || len(again.Present) != 1 {
				t.Errorf("%s %q: second plan %+v, %v; want nothing to change", agent, before, again, err)
			}
		}
	}
}

// checkMerged checks that after is before with askperm's group appended
// to hooks.PermissionRequest, and that before's top-level keys keep their
// order.
func checkMerged(t *testing.T, before string, after []byte, agent string) {
	t.Helper()
	var want, got map[string]any
	if strings.TrimSpace(before) == "" {
		before = "{}"
	}
	if err := json.Unmarshal([]byte(before), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(after, &got); err != nil {
		t.Fatalf("after is no JSON object: %v\n%s", err, after)
	}
	hooks, _ := got["hooks"].(map[string]any)
	groups, _ := hooks[Event].([]any)
	if len(groups) == 0 {
		t.Fatalf("no %s hook in %s", Event, after)
	}
	var added map[string]any
	b, _ := json.Marshal(newHookGroup(self, agent))
	_ = json.Unmarshal(b, &added)
	if !reflect.DeepEqual(groups[len(groups)-1], added) {
		t.Errorf("last group %v, want %v", groups[len(groups)-1], added)
	}
	wantHooks, _ := want["hooks"].(map[string]any)
	if _, had := wantHooks[Event]; had {
		hooks[Event] = groups[:len(groups)-1]
	} else {
		delete(hooks, Event)
	}
	if len(hooks) == 0 && want["hooks"] == nil {
		delete(got, "hooks")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("other members changed:\n got %v\nwant %v", got, want)
	}
	top, err := members([]byte(before))
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, m := range top {
		quoted, _ := jsontext.AppendQuote(nil, m.name)
		i := strings.Index(string(after[pos:]), string(quoted))
		if i < 0 {
			t.Errorf("key %q out of order in %s", m.name, after)
			return
		}
		pos += i
	}
}

// FuzzPlan: for any JSON object, install's file is that object with
// askperm's group added, and a second install changes nothing.
func FuzzPlan(f *testing.F) {
	f.Add(`{"a":{"b":[1,2,{"c":null}]},"hooks":{"PreToolUse":[]}}`)
	f.Add(`{"hooks":{"PermissionRequest":[]}}`)
	f.Add(`{"\u00e9":"é","hooks":{}}`)
	f.Fuzz(func(t *testing.T, before string) {
		var doc map[string]any
		if json.Unmarshal([]byte(before), &doc) != nil || doc == nil { // install refuses what is no object
			return
		}
		if h, ok := doc["hooks"]; ok {
			hm, ok := h.(map[string]any)
			if _, isList := hm[Event].([]any); !ok || hm[Event] != nil && !isList {
				return // install refuses a hooks value of another shape
			}
		}
		if len(Hooks(doc, "codex", self)) > 0 {
			return
		}
		after, err := addHookGroup([]byte(before), Event, mustMarshal(t, newHookGroup(self, "codex")))
		if err != nil {
			t.Fatalf("%q: %v", before, err)
		}
		checkMerged(t, before, after, "codex")
		var again map[string]any
		if err := json.Unmarshal(after, &again); err != nil || len(Hooks(again, "codex", self)) != 1 {
			t.Fatalf("the hook is not found in %s", after)
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlanRefuses(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	writeFile(t, real, "{}", 0o600)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.json")
	writeFile(t, open, "{}", 0o666)
	notObject := filepath.Join(dir, "list.json")
	writeFile(t, notObject, "[]", 0o600)
	badHooks := filepath.Join(dir, "hooks.json")
	writeFile(t, badHooks, `{"hooks": {"PermissionRequest": {"a": 1}}}`, 0o600)
	dup := filepath.Join(dir, "dup.json")
	writeFile(t, dup, `{"hooks": {}, "hooks": {}}`, 0o600)
	for _, path := range []string{link, open, notObject, badHooks, dup} {
		if p, err := NewPlan(path, "claude-code", self); err == nil {
			t.Errorf("%s: planned %s", path, p.After)
		}
	}
}

func TestWriteKeepsModeAndBacksUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, path, `{"a": 1}`, 0o640)
	p, err := NewPlan(path, "claude-code", self)
	if err != nil {
		t.Fatal(err)
	}
	backup, err := p.Write(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := path + ".askperm-backup-20260102T030405Z"; backup != want {
		t.Errorf("backup %s, want %s", backup, want)
	}
	if b, _ := os.ReadFile(backup); string(b) != `{"a": 1}` {
		t.Errorf("backup holds %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".settings.json.askperm-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	fresh := filepath.Join(t.TempDir(), "new", "hooks.json")
	p, err = NewPlan(fresh, "codex", self)
	if err != nil {
		t.Fatal(err)
	}
	if backup, err := p.Write(time.Now()); err != nil || backup != "" {
		t.Fatalf("new file: backup %q, %v", backup, err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
}

// Codex's config.toml with inline hooks is never rewritten: askperm's
// hook there counts as installed, and others make install say what to add.
func TestCodexInlineHooks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.toml"), "# mine\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo\"\n", 0o600)
	if _, err := NewPlan(filepath.Join(dir, "hooks.json"), "codex", self); !errors.Is(err, ErrInlineHooks) {
		t.Errorf("inline hooks: %v, want ErrInlineHooks", err)
	}
	writeFile(t, filepath.Join(dir, "hooks.json"), `{"hooks": {"PermissionRequest": [{"hooks": [{"type": "command", "command": "askperm hook codex"}]}]}}`, 0o600)
	if p, err := NewPlan(filepath.Join(dir, "hooks.json"), "codex", self); err != nil || p.After != nil {
		t.Errorf("askperm's hook in hooks.json beside other inline hooks: %+v, %v; want it found", p, err)
	}
	if err := os.Remove(filepath.Join(dir, "hooks.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.toml"), "model = \"x\"\n"+TOMLLines(self), 0o600)
	p, err := NewPlan(filepath.Join(dir, "hooks.json"), "codex", self)
	if err != nil || p.After != nil || len(p.Present) != 1 || p.Present[0].Binary != self {
		t.Errorf("askperm's inline hook: %+v, %v; want it found", p, err)
	}
	writeFile(t, filepath.Join(dir, "config.toml"), "model = \"x\"\n", 0o600)
	if p, err := NewPlan(filepath.Join(dir, "hooks.json"), "codex", self); err != nil || p.After == nil {
		t.Errorf("no inline hooks: %+v, %v; want hooks.json written", p, err)
	}
}

func TestInstallPath(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	sub := filepath.Join(proj, "a", "b")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	p := Place{Getenv: func(k string) string { return env[k] }, Dir: sub}
	for _, tc := range []struct {
		agent   string
		project bool
		want    string
	}{
		{"claude-code", false, filepath.Join(home, ".claude", "settings.json")},
		{"claude-code", true, filepath.Join(proj, ".claude", "settings.local.json")},
		{"codex", false, filepath.Join(home, ".codex", "hooks.json")},
		{"codex", true, filepath.Join(proj, ".codex", "hooks.json")},
	} {
		if got, err := p.InstallPath(tc.agent, tc.project); err != nil || got != tc.want {
			t.Errorf("%s project=%v: %s, %v; want %s", tc.agent, tc.project, got, err, tc.want)
		}
	}
	env["CODEX_HOME"] = "/elsewhere/codex"
	if got, _ := p.InstallPath("codex", false); got != "/elsewhere/codex/hooks.json" {
		t.Errorf("CODEX_HOME: %s", got)
	}
	delete(env, "HOME")
	if _, err := p.InstallPath("claude-code", false); err == nil {
		t.Error("no HOME: a path")
	}
	if _, err := p.InstallPath("cursor", true); err == nil {
		t.Error("an unknown agent: a path")
	}
}

package notify

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/notify/notifytest"
)

// warnings are the warnings said, from any goroutine.
type warnings chan string

func newWarnings() warnings { return make(chan string, 16) }

func (w warnings) warn(s string) { w <- s }

// next waits for the next warning, failing the test after a minute.
func (w warnings) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-w:
		return s
	case <-time.After(time.Minute):
		t.Fatal("no warning")
		return ""
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The environment holds the notice's four variables and, of the
// caller's, only those Names lists: over generated environments.
func TestEnvironmentOnlyNamed(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	pool := append(Names(), "LD_PRELOAD", "SECRET_TOKEN", "SSH_AUTH_SOCK", "ASKPERM_CONFIG", "XAUTHORITY", "GTK_MODULES", "TERM", "PWD")
	for range 500 {
		caller := map[string]string{}
		for _, k := range pool {
			if rng.IntN(2) == 0 {
				caller[k] = fmt.Sprintf("v%d", rng.IntN(1000))
			}
		}
		n := Notice{Headline: "Bash wants to run ls", Host: "h", Deadline: time.Unix(rng.Int64N(1<<32), 0), Frontend: decision.FrontendLine}
		got := map[string]string{}
		for _, kv := range n.Environment(env(caller)) {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := got[k]; dup {
				t.Fatalf("%s given twice", k)
			}
			got[k] = v
		}
		for k, v := range got {
			switch {
			case !slices.Contains(Names(), k):
				t.Fatalf("%s passed, not documented", k)
			case slices.Contains(callerEnv, k) && v != caller[k]:
				t.Fatalf("%s=%q, the caller's is %q", k, v, caller[k])
			}
		}
		for _, k := range callerEnv {
			if _, ok := got[k]; ok != (caller[k] != "") {
				t.Fatalf("%s: passed %v, set by the caller %v", k, ok, caller[k] != "")
			}
		}
		if d, err := time.Parse(time.RFC3339, got["ASKPERM_DEADLINE"]); err != nil || !d.Equal(n.Deadline) {
			t.Fatalf("ASKPERM_DEADLINE=%q: %v", got["ASKPERM_DEADLINE"], err)
		}
		if got["ASKPERM_FRONTEND"] != "line" || got["ASKPERM_HOST"] != "h" || got["ASKPERM_QUESTION"] != n.Headline {
			t.Fatalf("notice variables: %v", got)
		}
	}
}

// The question is the headline, cut after MaxQuestion runes, never
// inside a rune: over generated headlines.
func TestQuestionCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 2))
	runes := []rune("aé€😀\\u{202e} ")
	for range 500 {
		var b strings.Builder
		for range rng.IntN(3 * MaxQuestion) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		h := b.String()
		q := Notice{Headline: h}.Question()
		n := utf8.RuneCountInString(q)
		switch {
		case !utf8.ValidString(q) || n > MaxQuestion:
			t.Fatalf("%d runes, valid %v", n, utf8.ValidString(q))
		case utf8.RuneCountInString(h) <= MaxQuestion && q != h:
			t.Fatalf("a short headline changed: %q", q)
		case utf8.RuneCountInString(h) > MaxQuestion && (!strings.HasSuffix(q, "…") || !strings.HasPrefix(h, strings.TrimSuffix(q, "…"))):
			t.Fatalf("not a cut of the headline: %q", q)
		}
	}
}

// For: a configured command for every frontend that asks a person;
// `command = []` for none; the default, notify-send, only where the
// person may be looking elsewhere and a desktop session exists.
func TestFor(t *testing.T) {
	dir := notifytest.Dir(t)
	send := notifytest.Script(t, dir, notifySend, "exit 0\n")
	defer func(d []string) { defaultDirs = d }(defaultDirs)
	defaultDirs = []string{filepath.Join(dir, "missing"), dir}
	desktop := env(map[string]string{"DISPLAY": ":0", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus"})
	people := []decision.Frontend{decision.FrontendTUI, decision.FrontendLine, decision.FrontendYad, decision.FrontendZenity, decision.FrontendTeam}
	configured := &Config{Command: []string{"/usr/bin/true", "x"}}
	for _, by := range people {
		for _, elsewhere := range []bool{false, true} {
			if p := configured.For(by, elsewhere, env(nil)); p == nil || !slices.Equal(p.Argv, configured.Command) || p.questionArg {
				t.Errorf("configured, %s: %+v", by, p)
			}
			if p := (&Config{Off: true}).For(by, elsewhere, desktop); p != nil {
				t.Errorf("off, %s: %+v", by, p)
			}
			if p := (*Config)(nil).For(by, elsewhere, desktop); p != nil {
				t.Errorf("nil, %s: %+v", by, p)
			}
			want := by == decision.FrontendYad || by == decision.FrontendZenity ||
				elsewhere && (by == decision.FrontendTUI || by == decision.FrontendLine)
			p := (&Config{}).For(by, elsewhere, desktop)
			if (p != nil) != want || p != nil && (p.Argv[0] != send || !p.questionArg) {
				t.Errorf("default, %s, elsewhere %v: %+v, want a notification %v", by, elsewhere, p, want)
			}
		}
	}
	for _, e := range []map[string]string{
		{"DBUS_SESSION_BUS_ADDRESS": "x"},
		{"DISPLAY": ":0"},
		{"WAYLAND_DISPLAY": "wayland-0"},
	} {
		if p := (&Config{}).For(decision.FrontendYad, false, env(e)); p != nil {
			t.Errorf("default without a desktop session (%v): %+v", e, p)
		}
	}
	if p := (&Config{}).For(decision.FrontendYad, false, env(map[string]string{"WAYLAND_DISPLAY": "w", "XDG_RUNTIME_DIR": "/run/user/1"})); p == nil {
		t.Error("default on Wayland with a runtime directory: none")
	}
	defaultDirs = []string{filepath.Join(dir, "missing")}
	if p := (&Config{}).For(decision.FrontendYad, false, desktop); p != nil {
		t.Errorf("default without notify-send: %+v", p)
	}
}

// A program runs once per Start with the notice in its environment and
// nothing else of the caller's; the default gets the question as its
// last argument.
func TestStartRuns(t *testing.T) {
	dir := notifytest.Dir(t)
	rec := notifytest.NewRecorder(t, dir)
	w := newWarnings()
	n := Notice{Headline: "read_file wants to read /etc/hosts", Host: "box", Deadline: time.Now().Add(time.Minute).Truncate(time.Second), Frontend: decision.FrontendYad}
	caller := env(map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/a", "SECRET_TOKEN": "s3cret", "LD_PRELOAD": "/x.so"})
	Start(&Program{Argv: []string{rec.Program}}, n, caller, w.warn)
	calls := rec.WaitCalls(t, 1)
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[0]
	notifytest.OnlyNames(t, c, Names())
	if c["ASKPERM_QUESTION"] != n.Headline || c["ASKPERM_HOST"] != "box" || c["ASKPERM_FRONTEND"] != "yad" || c["HOME"] != "/home/a" {
		t.Errorf("environment: %v", c)
	}
	if len(w) != 0 {
		t.Errorf("warned: %q", <-w)
	}

	args := filepath.Join(dir, "args")
	echo := notifytest.Script(t, dir, "echo-args", fmt.Sprintf("for a; do echo \"$a\"; done > %s.tmp && /bin/mv %s.tmp %s\n", args, args, args))
	n.Headline = `t wants to read <a href="x">/a&b</a>` // notify-send's body is markup
	Start(&Program{Argv: []string{echo, "--", "title"}, questionArg: true}, n, caller, w.warn)
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(args)
		if err == nil {
			if got := string(b); got != "--\ntitle\n"+`t wants to read &lt;a href="x"&gt;/a&amp;b&lt;/a&gt;`+"\n" {
				t.Errorf("arguments: %q", got)
			}
			break
		}
		if time.Now().After(end) {
			t.Fatal("the program never ran")
		}
	}
}

// A program the user may not trust, or missing, or one that fails, is
// a warning and nothing else; one that outlives its bound is killed,
// with whatever it started, and said.
func TestStartFailures(t *testing.T) {
	dir := notifytest.Dir(t)
	n := Notice{Headline: "q", Deadline: time.Now(), Frontend: decision.FrontendLine}
	for _, tc := range []struct {
		name, program, want string
	}{
		{"relative", "notify-send", "not an absolute path"},
		{"missing", filepath.Join(dir, "missing"), "no such file"},
		{"untrusted", writable(t), "writable by others"},
		{"fails", notifytest.Script(t, dir, "fails", "echo first >&2; echo 'the last line' >&2; exit 3\n"), "exit status 3: the last line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWarnings()
			Start(&Program{Argv: []string{tc.program}}, n, env(nil), w.warn)
			if said := w.next(t); !strings.Contains(said, tc.want) || !strings.HasPrefix(said, "notify: ") || strings.Contains(said, "\n") {
				t.Errorf("warning %q, want one line saying %q", said, tc.want)
			}
		})
	}
	t.Run("outlives its bound", func(t *testing.T) {
		defer func(b time.Duration) { bound = b }(bound)
		bound = 100 * time.Millisecond
		h := notifytest.NewHanging(t, dir)
		w := newWarnings()
		Start(&Program{Argv: []string{h.Program}}, n, env(nil), w.warn)
		pids := h.Pids(t)
		notifytest.WaitGone(t, pids)
		if said := w.next(t); !strings.Contains(said, "ran longer than 100ms; killed") {
			t.Errorf("warning %q", said)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		h := notifytest.NewHanging(t, filepath.Join(dir))
		w := newWarnings()
		stop := Start(&Program{Argv: []string{h.Program}}, n, env(nil), w.warn)
		pids := h.Pids(t)
		stop()
		stop() // a second stop does nothing
		notifytest.WaitGone(t, pids)
		if len(w) != 0 {
			t.Errorf("a notification ended with its request warned: %q", <-w)
		}
	})
	t.Run("leaves a child", func(t *testing.T) {
		pids := filepath.Join(dir, "left")
		p := notifytest.Script(t, dir, "leaves", fmt.Sprintf("/bin/sleep 1000 &\necho $! > %s.tmp && /bin/mv %s.tmp %s\n", pids, pids, pids))
		w := newWarnings()
		Start(&Program{Argv: []string{p}}, n, env(nil), w.warn)
		var child int
		for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(pids); err == nil {
				fmt.Sscan(string(b), &child)
				break
			}
			if time.Now().After(end) {
				t.Fatal("the program never ran")
			}
		}
		notifytest.WaitGone(t, []int{child})
	})
}

// writable is a program in a directory others may write to.
func writable(t *testing.T) string {
	d := t.TempDir()
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, "prog")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

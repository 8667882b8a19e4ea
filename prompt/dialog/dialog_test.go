package dialog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// dialogFakeScript is a stand-in for yad and zenity. Each run records its
// argv and its initial environment (each element ended by a NUL, which
// neither can hold), runs its "before" step if it has one (a dialog that
// ends before reading its input), reads its input on descriptor 3 and
// stdin to their end as the real programs do, then runs its step: a shell
// snippet that prints and exits as the real program would. %[1]s is the
// directory of the records.
const dialogFakeScript = `#!/bin/sh
D='%[1]s'
n=$(( $(cat "$D/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$D/count"
printf '%%s\0' "$@" > "$D/argv.$n"
pwd > "$D/cwd.$n"
cat /proc/$$/environ > "$D/env.$n"
[ -f "$D/before.$n" ] && . "$D/before.$n"
if [ -e /dev/fd/3 ]; then cat /dev/fd/3 > "$D/doc.$n"; fi
cat > "$D/stdin.$n"
step="$D/step.$n"
[ -f "$step" ] || step="$D/step.default"
. "$step"
`

// dialogFake is one fake dialog program and what its runs recorded.
type dialogFake struct {
	t   *testing.T
	dir string
	arm time.Duration // the arming delay of runs on it
}

// newDialogFake writes the fake and its steps, one per run in order; runs
// past the last step fail with status 99 unless setDefault says otherwise.
func newDialogFake(t *testing.T, steps ...string) *dialogFake {
	t.Helper()
	fd := &dialogFake{t: t, dir: t.TempDir()}
	fd.write("dialog", fmt.Sprintf(dialogFakeScript, fd.dir), 0o755)
	for i, s := range steps {
		fd.write("step."+strconv.Itoa(i+1), s, 0o644)
	}
	fd.setDefault(`echo "fake dialog: no step for this run" >&2; exit 99`)
	return fd
}

func (fd *dialogFake) write(name, content string, mode os.FileMode) {
	fd.t.Helper()
	// No fork while the file is open for writing: a child of a parallel
	// test would hold the descriptor until its exec, and running the file
	// meanwhile fails with ETXTBSY ("text file busy").
	syscall.ForkLock.Lock()
	err := os.WriteFile(filepath.Join(fd.dir, name), []byte(content), mode)
	syscall.ForkLock.Unlock()
	if err != nil {
		fd.t.Fatal(err)
	}
}

func (fd *dialogFake) setDefault(step string) { fd.write("step.default", step, 0o644) }

func (fd *dialogFake) path() string { return filepath.Join(fd.dir, "dialog") }

func (fd *dialogFake) read(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(fd.dir, name))
	return string(b), err == nil
}

// runs is how many times the fake ran.
func (fd *dialogFake) runs() int {
	s, _ := fd.read("count")
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// argv is the arguments of run n (from 1).
func (fd *dialogFake) argv(n int) []string {
	fd.t.Helper()
	s, ok := fd.read("argv." + strconv.Itoa(n))
	if !ok {
		fd.t.Fatalf("the fake dialog has no run %d", n)
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}

// env is the environment run n started with.
func (fd *dialogFake) env(n int) []string {
	s, _ := fd.read("env." + strconv.Itoa(n))
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}

// doc is the text run n read on descriptor 3.
func (fd *dialogFake) doc(n int) (string, bool) { return fd.read("doc." + strconv.Itoa(n)) }

// stdin is the lines run n read on stdin, without their newlines.
func (fd *dialogFake) stdin(n int) []string {
	s, _ := fd.read("stdin." + strconv.Itoa(n))
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// allArgv is every run's arguments.
func (fd *dialogFake) allArgv() [][]string {
	var all [][]string
	for n := 1; n <= fd.runs(); n++ {
		all = append(all, fd.argv(n))
	}
	return all
}

// dialogEnvOf turns "K=V" pairs into a Getenv.
func dialogEnvOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// options are the frontend options of a run on the fake: fd.arm as the
// arming delay (none unless a test sets one), env as the caller's
// environment.
func (fd *dialogFake) options(env ...string) prompt.Options {
	if env == nil {
		env = []string{"DISPLAY=:42"}
	}
	arm := fd.arm
	if arm == 0 {
		arm = prompt.NoArmDelay
	}
	return prompt.Options{Getenv: dialogEnvOf(env...), ArmDelay: arm, DialogPaths: map[string]string{"yad": fd.path(), "zenity": fd.path()}}
}

// dialogRequest is testdata/requests/write-file.json (with a session).
func dialogRequest(t *testing.T) *decision.Request {
	t.Helper()
	b, err := os.ReadFile("../../testdata/requests/write-file.json")
	if err != nil {
		t.Fatal(err)
	}
	req, err := decision.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func dialogForm(req *decision.Request) *form.Form {
	return form.New(req, form.Options{SessionMemory: true})
}

// dialogAsk runs the named frontend on the fake with a generous deadline.
func dialogAsk(t *testing.T, name string, fd *dialogFake, req *decision.Request) (form.Answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return New(decision.Frontend(name), fd.options()).Ask(ctx, dialogForm(req))
}

// Exit statuses, as shell steps.
const (
	stepCancelledBySignal = `kill -KILL $$`
	stepNoDisplay         = `echo "(yad:1): Gtk-WARNING **: 10:00:00.000: cannot open display: :42" >&2; exit 1`
)

// zenityPrints is zenity's answer for an extra button.
func zenityPrints(label string) string { return fmt.Sprintf("printf '%%s\\n' '%s'; exit 1", label) }

// yadForm is yad's answer for a form closed by button id: the text
// field's value (the rule, escaped), then vals, each followed by the
// separator, then a newline.
func yadForm(id int, vals ...string) string {
	var out []string
	for _, v := range vals {
		if v == "TRUE" || v == "FALSE" {
			out = append(out, "a grant") // the read-only field before each checkbox
		}
		out = append(out, v)
	}
	return fmt.Sprintf(`printf 'Rule: allow\\n...\037%s\037\n'; exit %d`, strings.Join(out, `\037`), id)
}

// dialogUnwrap undoes dialogWrap.
func dialogUnwrap(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n│     ", ""), "\n    ", "")
}

// yadUnline undoes yadLine.
func yadUnline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// yadRuleShown is the rule text run n of a yad rule form showed: the
// first value on its stdin.
func (fd *dialogFake) yadRuleShown(n int) string { return dialogUnwrap(yadUnline(fd.stdin(n)[0])) }

func TestDialogUnavailable(t *testing.T) {
	fd := newDialogFake(t)
	notExec := filepath.Join(t.TempDir(), "yad")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    prompt.Options
	}{
		{"no display", prompt.Options{Getenv: dialogEnvOf("HOME=/root"), DialogPaths: map[string]string{"yad": fd.path()}}},
		{"nil Getenv", prompt.Options{DialogPaths: map[string]string{"yad": fd.path()}}},
		{"relative path", prompt.Options{Getenv: dialogEnvOf("DISPLAY=:42"), DialogPaths: map[string]string{"yad": "bin/yad"}}},
		{"missing", prompt.Options{Getenv: dialogEnvOf("DISPLAY=:42"), DialogPaths: map[string]string{"yad": "/nonexistent/yad"}}},
		{"not executable", prompt.Options{Getenv: dialogEnvOf("DISPLAY=:42"), DialogPaths: map[string]string{"yad": notExec}}},
		{"a directory", prompt.Options{Getenv: dialogEnvOf("DISPLAY=:42"), DialogPaths: map[string]string{"yad": t.TempDir()}}},
		{"no display reply", fd.options()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "no display reply" {
				fd.write("step.1", stepNoDisplay, 0o644)
			}
			d := New("yad", tc.o)
			if d.Name() != "yad" {
				t.Errorf("Name() = %q", d.Name())
			}
			_, err := d.Ask(context.Background(), dialogForm(dialogRequest(t)))
			if !errors.Is(err, prompt.ErrUnavailable) {
				t.Fatalf("err = %v, want prompt.ErrUnavailable", err)
			}
			if tc.name == "relative path" && !strings.Contains(err.Error(), "not absolute") {
				t.Errorf("err = %v, want it to say the path is not absolute", err)
			}
		})
	}
	if fd.runs() != 1 {
		t.Errorf("the fake ran %d times, want once (for the no-display reply)", fd.runs())
	}
}

func TestDialogWaylandOnly(t *testing.T) {
	fd := newDialogFake(t, "exit 10")
	d := New("yad", fd.options("WAYLAND_DISPLAY=wayland-0"))
	if a, err := d.Ask(context.Background(), dialogForm(dialogRequest(t))); err != nil || a.Choice != form.AllowOnce {
		t.Fatalf("Ask = %v, %v; want allow-once", a.Choice, err)
	}
}

func TestDialogLookupIgnoresPATH(t *testing.T) {
	// A fake zenity first in PATH, in the process's and the caller's.
	evil := t.TempDir()
	for _, name := range []string{"yad", "zenity"} {
		if err := os.WriteFile(filepath.Join(evil, name), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", evil+":"+os.Getenv("PATH"))
	sys := t.TempDir()
	if err := os.WriteFile(filepath.Join(sys, "zenity"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sys, "yad"), []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := dialogDirs
	t.Cleanup(func() { dialogDirs = saved })
	dialogDirs = []string{filepath.Join(sys, "missing"), sys}

	getenv := dialogEnvOf("DISPLAY=:42", "PATH="+evil)
	z := New("zenity", prompt.Options{Getenv: getenv}).(*dialog)
	if z.err != nil || z.path != filepath.Join(sys, "zenity") {
		t.Errorf("zenity: path %q, err %v; want %s", z.path, z.err, filepath.Join(sys, "zenity"))
	}
	// yad in sys is not executable, and PATH's is never considered.
	y := New("yad", prompt.Options{Getenv: getenv}).(*dialog)
	if !errors.Is(y.err, prompt.ErrUnavailable) || y.path != "" {
		t.Errorf("yad: path %q, err %v; want unavailable", y.path, y.err)
	}
}

func TestDialogEnvironment(t *testing.T) {
	fd := newDialogFake(t, "exit 10")
	env := []string{
		"DISPLAY=:42", "WAYLAND_DISPLAY=wayland-1", "XAUTHORITY=/home/u/.Xauthority",
		"XDG_RUNTIME_DIR=/run/user/1000", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
		"HOME=/home/u", "LANG=de_DE.UTF-8", "LC_ALL=C.UTF-8", "LC_CTYPE=C.UTF-8",
		"PATH=/evil/bin", "ZENITY_x=1", "DIALOG_ESC=0", "DIALOG_CANCEL=0", "YAD_OPTIONS=--escape-ok",
		"YAD_SETTINGS_FILE=/tmp/y", "LD_PRELOAD=/tmp/evil.so", "LD_LIBRARY_PATH=/tmp", "GTK_MODULES=evil",
		"GTK_THEME=x", "GDK_BACKEND=x11", "GIO_MODULE_DIR=/tmp", "G_MESSAGES_DEBUG=all", "TERM=xterm",
	}
	d := New("yad", fd.options(env...))
	if _, err := d.Ask(context.Background(), dialogForm(dialogRequest(t))); err != nil {
		t.Fatal(err)
	}
	got := fd.env(1)
	want := append(slices.Clone(env[:9]), "PATH=/usr/bin:/bin")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("dialog environment:\n got %q\nwant %q", got, want)
	}
}

// A dialog runs under a UTF-8 locale, the caller's when it is one: under
// another, both programs refuse askperm's non-ASCII labels.
func TestDialogLocale(t *testing.T) {
	for _, tc := range []struct {
		caller []string
		want   []string // the locale variables the dialog gets
	}{
		{nil, []string{"LC_ALL=C.UTF-8"}},
		{[]string{"LANG=C"}, []string{"LANG=C", "LC_ALL=C.UTF-8"}},
		{[]string{"LANG=en_US.UTF-8"}, []string{"LANG=en_US.UTF-8"}},
		{[]string{"LANG=de_DE.utf8"}, []string{"LANG=de_DE.utf8"}},
		{[]string{"LANG=de_DE.ISO-8859-1"}, []string{"LANG=de_DE.ISO-8859-1", "LC_ALL=C.UTF-8"}},
		{[]string{"LC_ALL=POSIX", "LANG=en_US.UTF-8"}, []string{"LANG=en_US.UTF-8", "LC_ALL=C.UTF-8"}},
		{[]string{"LC_ALL=en_GB.UTF-8", "LANG=C"}, []string{"LANG=C", "LC_ALL=en_GB.UTF-8"}},
		{[]string{"LC_CTYPE=C.UTF-8", "LANG=C"}, []string{"LANG=C", "LC_CTYPE=C.UTF-8"}},
		{[]string{"LC_CTYPE=C", "LANG=en_US.UTF-8"}, []string{"LANG=en_US.UTF-8", "LC_CTYPE=C", "LC_ALL=C.UTF-8"}},
	} {
		fd := newDialogFake(t, "exit 0", "printf '\\n'")
		if _, err := New("yad", fd.options(append([]string{"DISPLAY=:42"}, tc.caller...)...)).Ask(context.Background(), dialogForm(dialogRequest(t))); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range fd.env(1) {
			if strings.HasPrefix(kv, "LANG=") || strings.HasPrefix(kv, "LC_") {
				got = append(got, kv)
			}
		}
		slices.Sort(got)
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("caller %q: dialog locale %q, want %q", tc.caller, got, tc.want)
		}
	}
}

// The choice viewer of each program, for every exit status.
func TestDialogViewExits(t *testing.T) {
	type want struct {
		choice form.Choice
		err    error // prompt.ErrCancelled, prompt.ErrUnavailable, or errOther
	}
	errOther := errors.New("another error")
	cases := []struct {
		prog, step string
		want       want
	}{
		{"yad", "exit 0", want{choice: form.DenyOnce}},
		{"yad", "exit 10", want{choice: form.AllowOnce}},
		{"yad", "exit 12", want{choice: form.AllowSession}},
		{"yad", "exit 14", want{choice: form.AllowAlways}},
		{"yad", "exit 16", want{choice: form.DenyAlways}},
		{"yad", "exit 1", want{err: prompt.ErrCancelled}},
		{"yad", "exit 252", want{err: prompt.ErrCancelled}},
		{"yad", "exit 70", want{err: errOther}},
		{"yad", "exit 255", want{err: errOther}},
		{"yad", "exit 2", want{err: errOther}},
		{"yad", "exit 20", want{err: errOther}}, // a rule-form id, not a choice
		{"yad", stepNoDisplay, want{err: prompt.ErrUnavailable}},
		{"yad", stepCancelledBySignal, want{err: prompt.ErrCancelled}},
		{"zenity", "exit 0", want{choice: ""}},            // OK, named Read again: Return decides nothing
		{"zenity", "exit 1", want{choice: form.DenyOnce}}, // Cancel, named Deny once
		{"zenity", zenityPrints("Deny always…"), want{choice: form.DenyAlways}},
		{"zenity", zenityPrints("Allow once"), want{choice: form.AllowOnce}},
		{"zenity", zenityPrints("Allow for this session"), want{choice: form.AllowSession}},
		{"zenity", zenityPrints("Allow always…"), want{choice: form.AllowAlways}},
		{"zenity", zenityPrints("Deny once"), want{err: errOther}},  // Cancel, not an extra button
		{"zenity", zenityPrints("Read again"), want{err: errOther}}, // OK, not an extra button
		{"zenity", zenityPrints("Allow everything"), want{err: errOther}},
		{"zenity", zenityPrints("Save rule"), want{err: errOther}},
		{"zenity", "printf 'Allow once'; exit 1", want{err: errOther}},
		{"zenity", "exit 5", want{err: errOther}},
		{"zenity", "exit 255", want{err: errOther}},
		{"zenity", "exit 3", want{err: errOther}},
		{"zenity", stepNoDisplay, want{err: prompt.ErrUnavailable}},
		{"zenity", stepCancelledBySignal, want{err: prompt.ErrCancelled}},
	}
	for _, tc := range cases {
		t.Run(tc.prog+"/"+tc.step, func(t *testing.T) {
			fd := newDialogFake(t, tc.step)
			d := &walk{dialog: New(decision.Frontend(tc.prog), fd.options()).(*dialog)}
			f := dialogForm(dialogRequest(t))
			choices := f.Choices()
			slices.Reverse(choices)
			var s dialogStager = yad{d}
			if tc.prog == "zenity" {
				s = zenity{d}
			}
			c, _, err := s.view(context.Background(), "the request", choices)
			switch {
			case tc.want.err == nil && (err != nil || c != tc.want.choice):
				t.Errorf("view = %q, %v; want %q", c, err, tc.want.choice)
			case tc.want.err == errOther && (err == nil || errors.Is(err, prompt.ErrCancelled) || errors.Is(err, prompt.ErrUnavailable)):
				t.Errorf("view = %q, %v; want an error that is neither cancelled nor unavailable", c, err)
			case tc.want.err != nil && tc.want.err != errOther && !errors.Is(err, tc.want.err):
				t.Errorf("view = %q, %v; want %v", c, err, tc.want.err)
			}
			if doc, _ := fd.doc(1); doc != "the request" {
				t.Errorf("the viewer read %q on descriptor 3", doc)
			}
		})
	}
}

func TestDialogYadChoiceArgs(t *testing.T) {
	fd := newDialogFake(t, "exit 10")
	f := dialogForm(dialogRequest(t))
	if a, err := New("yad", fd.options()).Ask(context.Background(), f); err != nil || a.Choice != form.AllowOnce {
		t.Fatalf("Ask = %v, %v", a.Choice, err)
	}
	args := fd.argv(1)
	if args[0] != "--text-info" || !slices.Contains(args, "--no-markup") || !slices.Contains(args, "--filename=/dev/fd/3") {
		t.Errorf("args %q", args)
	}
	var buttons []string
	for _, a := range args {
		if b, ok := strings.CutPrefix(a, "--button="); ok {
			buttons = append(buttons, b)
		}
	}
	want := []string{"Deny once:0", "Deny always…:16", "Allow always…:14", "Allow once:10", "Allow for this session:12"}
	if !slices.Equal(buttons, want) {
		t.Errorf("buttons %q, want %q", buttons, want)
	}
	doc, _ := fd.doc(1)
	if doc != dialogWrap(f.Message(form.StageChoice, f.Defaults())) {
		t.Errorf("the viewer showed:\n%s", doc)
	}
}

func TestDialogZenityChoiceArgs(t *testing.T) {
	fd := newDialogFake(t, zenityPrints("Allow once"))
	if a, err := dialogAsk(t, "zenity", fd, dialogRequest(t)); err != nil || a.Choice != form.AllowOnce {
		t.Fatalf("Ask = %v, %v", a.Choice, err)
	}
	args := fd.argv(1)
	if args[0] != "--text-info" || !slices.Contains(args, "--no-markup") || !slices.Contains(args, "--cancel-label=Deny once") || !slices.Contains(args, "--ok-label=Read again") {
		t.Errorf("args %q", args)
	}
	// OK is what Return presses, also on Cancel: it decides nothing. Deny
	// always… is an extra button, before the allows.
	var extras []string
	for _, a := range args {
		if b, ok := strings.CutPrefix(a, "--extra-button="); ok {
			extras = append(extras, b)
		}
	}
	want := []string{"Deny always…", "Allow always…", "Allow once", "Allow for this session"}
	if !slices.Equal(extras, want) {
		t.Errorf("extra buttons %q, want %q", extras, want)
	}
}

// Whole walks: the answer, and what each dialog was asked.
func TestDialogWalks(t *testing.T) {
	const sep = "\x1f"
	// The rule form of write-file.json: 2 grants, path (3 scopes), workdir, lifetime.
	defaults := []string{"TRUE", "TRUE", "1", "1", "1"}
	changed := []string{"FALSE", "TRUE", "2", "2", "3"}
	noGrants := []string{"FALSE", "FALSE", "1", "1", "1"}
	wantChanged := form.Answer{
		Choice: form.AllowAlways, Grants: []string{"fs.create"}, Scopes: map[string]string{"path": "/home/a/p/"},
		WorkdirScope: decision.WorkdirAll, Lifetime: "57600",
	}
	wantDefault := form.Answer{
		Choice: form.AllowAlways, Grants: []string{"fs.write", "fs.create"}, Scopes: map[string]string{"path": "/home/a/p/report.md"},
		WorkdirScope: decision.WorkdirSelected, Lifetime: decision.LifetimeIndefinite,
	}
	for _, tc := range []struct {
		name, prog string
		steps      []string
		want       form.Answer
		check      func(t *testing.T, fd *dialogFake)
	}{
		{name: "deny once with a reason", prog: "yad", steps: []string{"exit 0", "printf 'not now\\n'; exit 0"},
			want: form.Answer{Choice: form.DenyOnce, Message: "not now"},
			check: func(t *testing.T, fd *dialogFake) {
				args := fd.argv(2)
				if args[0] != "--entry" || !slices.Contains(args, "--button=Deny once:0") || !slices.Contains(args, "--entry-text=") {
					t.Errorf("reason args %q", args)
				}
			}},
		{name: "Enter in the reason", prog: "zenity", steps: []string{"exit 1", "printf '\\n'; exit 0"},
			want: form.Answer{Choice: form.DenyOnce},
			check: func(t *testing.T, fd *dialogFake) {
				if args := fd.argv(2); !slices.Contains(args, "--ok-label=Deny once") || !slices.Contains(args, "--cancel-label=No reason") {
					t.Errorf("reason args %q", args)
				}
			}},
		{name: "no reason", prog: "zenity", steps: []string{"exit 1", "exit 1"},
			want: form.Answer{Choice: form.DenyOnce}},
		{name: "Return reads again", prog: "zenity", steps: []string{"sleep 1.2; exit 0", "exit 0", "exit 1", "printf 'no\\n'"},
			want: form.Answer{Choice: form.DenyOnce, Message: "no"},
			check: func(t *testing.T, fd *dialogFake) {
				deadline := regexp.MustCompile(`Answer by [0-9:]+ \([0-9a-z ]+ left\)`)
				request := func(n int) string { doc, _ := fd.doc(n); return deadline.ReplaceAllString(doc, "Answer by T") }
				timeout := func(n int) int {
					for _, a := range fd.argv(n) {
						if v, ok := strings.CutPrefix(a, "--timeout="); ok {
							k, _ := strconv.Atoi(v)
							return k
						}
					}
					return -1
				}
				for n := 2; n <= 3; n++ {
					args := fd.argv(n)
					if args[0] != "--text-info" || !slices.Contains(args, "--ok-label=Read again") || !slices.Contains(args, "--extra-button=Deny always…") {
						t.Errorf("viewer %d args %q", n, args)
					}
					if request(n) != request(1) || !strings.HasPrefix(request(n), "write_file (fs-default) wants to write") {
						t.Errorf("viewer %d is not the request again:\n%s", n, request(n))
					}
				}
				if first, again := timeout(1), timeout(2); first != 20 || again < 17 || again > 19 {
					t.Errorf("timeouts %d then %d, want 20 then the time left", first, again)
				}
				if args := fd.argv(4); args[0] != "--entry" || !slices.Contains(args, "--ok-label=Deny once") {
					t.Errorf("reason args %q", args)
				}
			}},
		{name: "deny always, an extra button", prog: "zenity",
			steps: []string{zenityPrints("Deny always…"), "printf 'never\\n'", "exit 0", "exit 0", zenityPrints("Deny always…"), "printf 'never\\n'", zenityPrints("Save rule")},
			want:  form.Answer{Choice: form.DenyAlways, Message: "never", Grants: []string{"fs.write", "fs.create"}, Scopes: map[string]string{"path": "/home/a/p/report.md"}, WorkdirScope: decision.WorkdirSelected, Lifetime: decision.LifetimeIndefinite},
			check: func(t *testing.T, fd *dialogFake) {
				if args := fd.argv(2); args[0] != "--entry" || !slices.Contains(args, "--ok-label=Deny always…") {
					t.Errorf("reason args %q", args)
				}
				if args := fd.argv(3); !slices.Contains(args, "--ok-label=« Back") || !slices.Contains(args, "--extra-button=Save rule") {
					t.Errorf("rule viewer args %q", args)
				}
				if args := fd.argv(4); args[0] != "--text-info" || !slices.Contains(args, "--ok-label=Read again") {
					t.Errorf("after « Back, args %q; want the request again", args)
				}
			}},
		{name: "reason escaped", prog: "yad", steps: []string{"exit 0", "exit 252"}},
		{name: "allow always, defaults", prog: "yad", steps: []string{"exit 14", yadForm(22, defaults...)},
			want: wantDefault,
			check: func(t *testing.T, fd *dialogFake) {
				args := fd.argv(2)
				fields := []string{"--field=Rule:TXT", "--field=Grant 1:RO", "--field=Give grant 1 (Grants):CHK", "--field=Grant 2:RO", "--field=Give grant 2 (Grants):CHK",
					"--field=Scope: what the rule covers:CB", "--field=Workdir: where the rule holds:CB", "--field=Lifetime: how long the rule holds:CB"}
				if got := args[len(args)-len(fields):]; !slices.Equal(got, fields) {
					t.Errorf("rule form fields:\n got %q\nwant %q", got, fields)
				}
				values := []string{
					"fs.write — write files in the workdir", "TRUE", "fs.create — create new files (implies fs.write)", "TRUE",
					"^1. this file: exactly \"/home/a/p/report.md\"" + sep + "2. files under /home/a/p/: anything under \"/home/a/p/\"" + sep + "3. any file: any value",
					"^1. in workdir \"/home/a/p\"" + sep + "2. in any workdir (every configured workdir, including future ones)",
					"^1. until removed" + sep + "2. for 15 minutes" + sep + "3. for 16 hours",
				}
				if got, want := fd.stdin(2)[1:], append(values, "@disabled@"); !slices.Equal(got, want) {
					t.Errorf("rule form values:\n got %q\nwant %q", got, want)
				}
				if text := fd.yadRuleShown(2); !strings.Contains(text, "Rule: allow write_file") || !strings.Contains(text, "Grant 1: fs.write — write files in the workdir") ||
					!strings.Contains(text, "Scope: Which File [path] the rule covers") {
					t.Errorf("the rule field showed:\n%s", text)
				}
				for _, b := range []string{"--button=« Back:20", "--button=Show rule:24", "--button=Save rule:22", "--button=Deny once:0", "--num-output", "--separator=" + sep, "--item-separator=" + sep, "--cycle-read", "--focus-field=3"} {
					if !slices.Contains(args, b) {
						t.Errorf("rule form lacks %q: %q", b, args)
					}
				}
			}},
		{name: "allow always, changed then confirmed", prog: "yad",
			steps: []string{"exit 14", yadForm(22, changed...), yadForm(22, changed...)},
			want:  wantChanged,
			check: func(t *testing.T, fd *dialogFake) {
				if text := fd.yadRuleShown(3); !strings.Contains(text, "Not saved: the rule changed") || !strings.Contains(text, "for 16 hours") {
					t.Errorf("the form shown again does not state the changed rule:\n%s", text)
				}
				if values := fd.stdin(3); !slices.Contains(values, "FALSE") || !slices.Contains(values, "1. until removed"+sep+"2. for 15 minutes"+sep+"^3. for 16 hours") {
					t.Errorf("the form shown again does not preselect the changed rule: %q", values)
				}
			}},
		{name: "back keeps the rule", prog: "yad",
			steps: []string{"exit 14", yadForm(20, changed...), "exit 14", yadForm(22, changed...)},
			want:  wantChanged},
		{name: "back then allow once", prog: "yad",
			steps: []string{"exit 16", "printf 'never\\n'; exit 0", yadForm(20, "1", "1", "1"), "exit 10"},
			want:  form.Answer{Choice: form.AllowOnce, Message: "never", Scopes: map[string]string{"path": "/home/a/p/report.md"}, WorkdirScope: decision.WorkdirSelected, Lifetime: decision.LifetimeIndefinite, Grants: []string{"fs.write", "fs.create"}}},
		{name: "no grant says why at the first save", prog: "yad",
			steps: []string{"exit 14", yadForm(22, noGrants...), yadForm(22, defaults...), yadForm(22, defaults...)},
			want:  wantDefault,
			check: func(t *testing.T, fd *dialogFake) {
				if text := fd.yadRuleShown(3); !strings.Contains(text, "Not saved: grants: choose at least one") {
					t.Errorf("the form shown again does not say why:\n%s", text)
				}
				if !slices.Contains(fd.stdin(3), "FALSE") {
					t.Errorf("the form shown again lost the person's choices: %q", fd.stdin(3))
				}
			}},
		{name: "show rule states the fields' rule and saves nothing", prog: "yad",
			steps: []string{"exit 14", yadForm(24, changed...), yadForm(22, changed...)},
			want:  wantChanged,
			check: func(t *testing.T, fd *dialogFake) {
				if text := fd.yadRuleShown(3); strings.Contains(text, "Not saved") || !strings.Contains(text, "for 16 hours") {
					t.Errorf("Show rule does not state the new rule:\n%s", text)
				}
			}},
		{name: "deny once in the rule form asks the reason, kept", prog: "yad",
			steps: []string{"exit 16", "printf 'never\\n'; exit 0", "exit 0", "printf 'never again\\n'; exit 0"},
			want:  form.Answer{Choice: form.DenyOnce, Message: "never again"},
			check: func(t *testing.T, fd *dialogFake) {
				if args := fd.argv(4); args[0] != "--entry" || !slices.Contains(args, "--entry-text=never") || !slices.Contains(args, "--button=Deny once:0") {
					t.Errorf("reason args %q", args)
				}
			}},
		{name: "rule form escaped", prog: "yad", steps: []string{"exit 14", "exit 252"}},
		{name: "rule form garbage", prog: "yad", steps: []string{"exit 14", yadForm(22, "TRUE", "TRUE", "9", "1", "1")}},
		{name: "rule form short", prog: "yad", steps: []string{"exit 14", yadForm(22, "TRUE", "1")}},
		{name: "allow always, defaults", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Save rule")},
			want:  wantDefault,
			check: func(t *testing.T, fd *dialogFake) {
				doc, _ := fd.doc(2)
				if !strings.Contains(doc, "Rule: allow write_file") {
					t.Errorf("the rule viewer showed:\n%s", doc)
				}
			}},
		{name: "allow always, changed", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"),
				"printf '2\\n'", "printf '2\\n'", "printf '2\\n'", "printf '3\\n'", zenityPrints("Save rule")},
			want: wantChanged,
			check: func(t *testing.T, fd *dialogFake) {
				if grants := fd.argv(3); !slices.Contains(grants, "--checklist") || !slices.Contains(grants, "--column=Grant") {
					t.Errorf("grants list %q", grants)
				}
				grants := dialogForm(dialogRequest(t)).RuleQuestions(form.Answer{Choice: form.AllowAlways})[0]
				want := []string{"TRUE", "1", dialogItem(0, grants.Options[0].Label), "TRUE", "2", dialogItem(1, grants.Options[1].Label)}
				if rows := fd.stdin(3); !slices.Equal(rows, want) || !strings.HasPrefix(rows[2], "1. fs.write — write files in the workdir") {
					t.Errorf("grants list rows %q, want %q", rows, want)
				}
				if dim := fd.argv(4); !slices.Contains(dim, "--column=Scope") || !slices.ContainsFunc(dim, func(a string) bool {
					return strings.HasPrefix(a, "--text=Scope: choose what the rule covers. Choosing nothing keeps the current choice.\nAnswer by ")
				}) {
					t.Errorf("dimension list %q", dim)
				}
				if want := []string{"1", "✓", `1. this file: exactly "/home/a/p/report.md"`, "2", "", "2. files under /home/a/p/: anything under \"/home/a/p/\""}; !slices.Equal(fd.stdin(4)[:6], want) {
					t.Errorf("dimension list rows %q", fd.stdin(4))
				}
				if doc, _ := fd.doc(2); !strings.Contains(dialogUnwrap(doc), "Scope: Which File [path] the rule covers") {
					t.Errorf("the rule viewer does not name the questions:\n%s", doc)
				}
				if doc, _ := fd.doc(7); !strings.Contains(dialogUnwrap(doc), `anything under "/home/a/p/", in any workdir, granting fs.create`) || !strings.Contains(doc, "for 16 hours") {
					t.Errorf("the rule viewer shown again:\n%s", doc)
				}
			}},
		{name: "nothing chosen keeps", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "printf '1|2\\n'", "exit 0", "printf '\\n'", "exit 0", zenityPrints("Save rule")},
			want:  wantDefault},
		{name: "back (Enter)", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), "exit 0", "exit 1", "printf 'no\\n'"},
			want:  form.Answer{Choice: form.DenyOnce, Message: "no"}},
		{name: "deny once in the rule viewer asks the reason", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), "exit 1", "printf 'no\\n'"},
			want:  form.Answer{Choice: form.DenyOnce, Message: "no"},
			check: func(t *testing.T, fd *dialogFake) {
				if args := fd.argv(2); !slices.Contains(args, "--cancel-label=Deny once") || !slices.Contains(args, "--ok-label=« Back") || slices.Contains(args, "--extra-button=Deny once") {
					t.Errorf("rule viewer args %q", args)
				}
				if args := fd.argv(3); args[0] != "--entry" || !slices.Contains(args, "--ok-label=Deny once") {
					t.Errorf("reason args %q", args)
				}
			}},
		{name: "cancel in a change list returns to the rule", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "printf '2\\n'", "exit 1", zenityPrints("Save rule")},
			want:  wantDefault,
			check: func(t *testing.T, fd *dialogFake) {
				if args := fd.argv(4); !slices.Contains(args, "--cancel-label=« Rule") {
					t.Errorf("list args %q", args)
				}
				if doc, _ := fd.doc(5); !strings.Contains(dialogUnwrap(doc), "granting fs.write, fs.create") {
					t.Errorf("the rule shown again is not the rule before Change…:\n%s", doc)
				}
			}},
		{name: "no grant is not saved", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "printf '\\n'", "exit 0", "exit 0", "exit 0", zenityPrints("Save rule"), "exit 1", "exit 1"},
			want:  form.Answer{Choice: form.DenyOnce},
			check: func(t *testing.T, fd *dialogFake) {
				if doc, _ := fd.doc(8); !strings.Contains(dialogUnwrap(doc), "Not saved: grants: choose at least one") {
					t.Errorf("the rule viewer shown again does not say why:\n%s", doc)
				}
			}},
		{name: "list failed", prog: "zenity", steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "exit 255"}},
		{name: "list garbage", prog: "zenity", steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "printf '1|7\\n'"}},
	} {
		t.Run(tc.prog+"/"+tc.name, func(t *testing.T) {
			fd := newDialogFake(t, tc.steps...)
			a, err := dialogAsk(t, tc.prog, fd, dialogRequest(t))
			if tc.want.Choice == "" {
				if err == nil {
					t.Fatalf("Ask = %+v, want an error", a)
				}
				if strings.Contains(tc.name, "escaped") || strings.Contains(tc.name, "dismissed") {
					if !errors.Is(err, prompt.ErrCancelled) {
						t.Errorf("err = %v, want prompt.ErrCancelled", err)
					}
				}
			} else if err != nil {
				t.Fatalf("Ask: %v", err)
			} else {
				if a.Choice == form.DenyOnce && tc.want.Scopes == nil {
					a = form.Answer{Choice: a.Choice, Message: a.Message}
				}
				if !dialogSameRule(a, tc.want) || a.Choice != tc.want.Choice || a.Message != tc.want.Message {
					t.Errorf("answer\n got %+v\nwant %+v", a, tc.want)
				}
			}
			if fd.runs() != len(tc.steps) {
				t.Errorf("%d dialogs shown, want %d", fd.runs(), len(tc.steps))
			}
			if tc.check != nil {
				tc.check(t, fd)
			}
			dialogCheckArgv(t, fd.allArgv())
		})
	}
}

// A dialog that never answers is killed with its whole process group when
// the deadline passes, whether or not it heeds SIGTERM.
func TestDialogDeadlineKillsGroup(t *testing.T) {
	for _, tc := range []struct{ name, step string }{
		{"heeds SIGTERM", `sleep 60 & echo $! > "$D/child"; wait`},
		{"ignores SIGTERM", `trap '' TERM; sleep 60 & echo $! > "$D/child"; while :; do wait; done`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd := newDialogFake(t, tc.step)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := New("zenity", fd.options()).Ask(ctx, dialogForm(dialogRequest(t)))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the context's", err)
			}
			if took := time.Since(start); took > 500*time.Millisecond+dialogGrace+time.Second {
				t.Errorf("Ask took %v after the deadline", took)
			}
			s, ok := fd.read("child")
			if !ok {
				t.Fatal("the fake never started its child")
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(s))
			dialogWaitGone(t, pid)
		})
	}
}

// Losing the display after a first dialog opened is no reason to try the
// next frontend: the walk is cancelled.
func TestDialogDisplayWentAway(t *testing.T) {
	fd := newDialogFake(t, "exit 0", stepNoDisplay)
	_, err := dialogAsk(t, "yad", fd, dialogRequest(t))
	if !errors.Is(err, prompt.ErrCancelled) || errors.Is(err, prompt.ErrUnavailable) {
		t.Errorf("err = %v, want prompt.ErrCancelled", err)
	}
}

// A dialog killed by someone else is a cancellation, not an answer.
func TestDialogKilled(t *testing.T) {
	fd := newDialogFake(t, `kill -TERM $$`)
	_, err := dialogAsk(t, "yad", fd, dialogRequest(t))
	if !errors.Is(err, prompt.ErrCancelled) {
		t.Errorf("err = %v, want prompt.ErrCancelled", err)
	}
}

func TestDialogOutputCapped(t *testing.T) {
	fd := newDialogFake(t, "exit 0", `head -c 100000 /dev/zero | tr '\0' x; echo; exit 0`)
	_, err := dialogAsk(t, "yad", fd, dialogRequest(t))
	if err == nil || errors.Is(err, prompt.ErrCancelled) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("err = %v, want the output refused", err)
	}
}

// dialogSlow is a step that answers after the arming delay of
// TestDialogArming (1 s) and dialogAppear have passed since the dialog
// read its input.
func dialogSlow(step string) string { return "sleep 1.3; " + step }

// An allow (a choice, or Save rule of an allow rule) that comes sooner
// than the arming delay after the dialog appeared does not count: the
// dialog is shown again, saying why first, and a later allow counts. A
// deny counts at once.
func TestDialogArming(t *testing.T) {
	const note = "Not accepted: %s was chosen sooner than 1s after this window appeared."
	defaults := []string{"TRUE", "TRUE", "1", "1", "1"}
	for _, tc := range []struct {
		name, prog string
		steps      []string
		want       form.Choice
		// noted is the run that must start with the note for allow, what
		// it shows.
		noted   int
		allow   string
		shownAt func(fd *dialogFake, n int) string
	}{
		{name: "allow once", prog: "yad", steps: []string{"exit 10", dialogSlow("exit 10")},
			want: form.AllowOnce, noted: 2, allow: "Allow once"},
		{name: "allow once", prog: "zenity", steps: []string{zenityPrints("Allow once"), dialogSlow(zenityPrints("Allow once"))},
			want: form.AllowOnce, noted: 2, allow: "Allow once"},
		{name: "save rule", prog: "yad",
			steps: []string{dialogSlow("exit 14"), yadForm(22, defaults...), dialogSlow(yadForm(22, defaults...))},
			want:  form.AllowAlways, noted: 3, allow: "Save rule"},
		{name: "save rule", prog: "zenity",
			steps: []string{dialogSlow(zenityPrints("Allow always…")), zenityPrints("Save rule"), dialogSlow(zenityPrints("Save rule"))},
			want:  form.AllowAlways, noted: 3, allow: "Save rule"},
		{name: "deny once", prog: "yad", steps: []string{"exit 0", "printf '\\n'"}, want: form.DenyOnce},
		{name: "deny once", prog: "zenity", steps: []string{"exit 1", "printf '\\n'"}, want: form.DenyOnce},
		{name: "deny always", prog: "yad", steps: []string{"exit 16", "printf '\\n'", yadForm(22, "1", "1", "1")}, want: form.DenyAlways},
		{name: "deny always", prog: "zenity", steps: []string{zenityPrints("Deny always…"), "printf '\\n'", zenityPrints("Save rule")}, want: form.DenyAlways},
		{name: "read again, then allow once", prog: "zenity",
			steps: []string{"exit 0", zenityPrints("Allow once"), dialogSlow(zenityPrints("Allow once"))},
			want:  form.AllowOnce, noted: 3, allow: "Allow once"},
	} {
		t.Run(tc.prog+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			fd := newDialogFake(t, tc.steps...)
			fd.arm = time.Second
			a, err := dialogAsk(t, tc.prog, fd, dialogRequest(t))
			if err != nil || a.Choice != tc.want {
				t.Fatalf("Ask = %q, %v; want %q", a.Choice, err, tc.want)
			}
			if fd.runs() != len(tc.steps) {
				t.Errorf("%d dialogs shown, want %d", fd.runs(), len(tc.steps))
			}
			if tc.noted == 0 {
				return
			}
			shown, _ := fd.doc(tc.noted)
			if tc.prog == "yad" && tc.allow == form.SaveLabel {
				shown = fd.yadRuleShown(tc.noted)
			}
			if want := fmt.Sprintf(note, tc.allow); !strings.Contains(dialogUnwrap(shown), want) || !strings.HasPrefix(shown, "write_file (fs-default) wants to write") {
				t.Errorf("dialog %d shown again without saying why first:\n%s", tc.noted, shown)
			}
		})
	}
}

// A dialog that never read its input cannot allow: it showed no window.
func TestDialogArmingUnread(t *testing.T) {
	for _, prog := range []string{"yad", "zenity"} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			save := map[string]string{"yad": yadForm(22, "TRUE", "TRUE", "1", "1", "1"), "zenity": zenityPrints("Save rule")}[prog]
			allow := map[string]string{"yad": "exit 14", "zenity": zenityPrints("Allow always…")}[prog]
			deny := map[string]string{"yad": "exit 0", "zenity": "exit 1"}[prog]
			fd := newDialogFake(t, dialogSlow(allow), "", deny, "printf '\\n'")
			fd.arm = time.Second
			fd.write("before.2", "sleep 1.3; "+save, 0o644)
			a, err := dialogAsk(t, prog, fd, dialogRequest(t))
			if err != nil || a.Choice != form.DenyOnce || fd.runs() != 4 {
				t.Errorf("Ask = %q, %v after %d dialogs; want the rule shown again, then deny once", a.Choice, err, fd.runs())
			}
		})
	}
}

// A dialog that cannot start (an option or a locale it refuses, a program
// the kernel cannot run) leaves the chain to the next frontend; once a
// dialog of the walk opened, such a failure is an error, never an answer.
func TestDialogNotStarted(t *testing.T) {
	const refuses = `echo "Unable to parse command line: Invalid byte sequence in conversion input" >&2; exit 255`
	for _, prog := range []string{"yad", "zenity"} {
		t.Run(prog, func(t *testing.T) {
			fd := newDialogFake(t)
			fd.write("before.1", refuses, 0o644)
			_, err := dialogAsk(t, prog, fd, dialogRequest(t))
			if !errors.Is(err, prompt.ErrUnavailable) || !strings.Contains(err.Error(), "Invalid byte sequence") {
				t.Errorf("refused at start: err = %v, want prompt.ErrUnavailable saying why", err)
			}

			allow := map[string]string{"yad": "exit 14", "zenity": zenityPrints("Allow always…")}[prog]
			fd = newDialogFake(t, allow)
			fd.write("before.2", refuses, 0o644)
			_, err = dialogAsk(t, prog, fd, dialogRequest(t))
			if err == nil || errors.Is(err, prompt.ErrUnavailable) || errors.Is(err, prompt.ErrCancelled) {
				t.Errorf("refused after the first dialog: err = %v, want an error", err)
			}

			noExec := filepath.Join(t.TempDir(), prog)
			if err := os.WriteFile(noExec, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			o := prompt.Options{Getenv: dialogEnvOf("DISPLAY=:42"), DialogPaths: map[string]string{prog: noExec}}
			if _, err := New(decision.Frontend(prog), o).Ask(context.Background(), dialogForm(dialogRequest(t))); !errors.Is(err, prompt.ErrUnavailable) {
				t.Errorf("cannot be run: err = %v, want prompt.ErrUnavailable", err)
			}
		})
	}
}

// Input larger than a pipe holds reaches the dialog whole; a dialog that
// exits without reading it, leaving a child that holds the pipe open, ends
// the feeding: Ask returns at once.
func TestDialogInputFeeding(t *testing.T) {
	fd := newDialogFake(t, "exit 1", "printf '\\n'")
	f := dialogForm(dialogHuge())
	if _, err := New("zenity", fd.options()).Ask(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if doc, _ := fd.doc(1); doc != dialogWrap(f.Message(form.StageChoice, f.Defaults())) || len(doc) < 4<<20 {
		t.Errorf("the viewer read %d bytes, not its text", len(doc))
	}

	fd = newDialogFake(t)
	// The child outlives any wait for it by far: Ask ending well before it
	// shows the feeding did not wait for the pipe (a bound on a hang, not
	// a speed target).
	fd.write("before.1", `sleep 120 >/dev/null 2>&1 & exit 0`, 0o644)
	start := time.Now()
	if _, err := New("yad", fd.options()).Ask(context.Background(), f); !errors.Is(err, prompt.ErrUnavailable) {
		t.Errorf("err = %v, want prompt.ErrUnavailable", err)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("Ask took %v: it waited for the dialog's child", took)
	}
}

// dialogWaitGone fails unless process pid is gone (or a zombie) within a
// second.
func dialogWaitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || bytes.Contains(stat, []byte(") Z ")) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the dialog's child %d outlived it", pid)
		}
	}
}

// dialogOptions are every option askperm passes, with "=" when it takes a
// value.
var dialogOptions = []string{
	"--text-info", "--entry", "--form", "--list", "--checklist", "--no-markup", "--center", "--num-output",
	"--cycle-read", "--title=", "--width=", "--height=", "--filename=", "--font=", "--text=", "--button=",
	"--ok-label=", "--cancel-label=", "--extra-button=", "--timeout=", "--timeout-indicator=", "--entry-label=", "--entry-text=", "--separator=", "--item-separator=",
	"--field=", "--focus-field=", "--column=", "--hide-column=", "--print-column=",
}

// dialogCheckArgv checks the argv invariants of every dialog run: each
// element is one of askperm's own options (no positional values: values
// and rows travel on stdin), and labels have no underscore (a GTK
// mnemonic). That no element holds request text is the business of
// TestDialogArgvIsTheRequestsShape.
func dialogCheckArgv(t *testing.T, runs [][]string) {
	t.Helper()
	for _, args := range runs {
		for _, a := range args {
			opt := a
			if i := strings.IndexByte(a, '='); i >= 0 {
				opt = a[:i+1]
			}
			if !slices.Contains(dialogOptions, opt) {
				t.Errorf("argument %q is not one of askperm's options (in %q)", a, args)
				continue
			}
			switch opt {
			case "--button=", "--ok-label=", "--cancel-label=", "--extra-button=", "--field=", "--entry-label=":
				if strings.Contains(a, "_") {
					t.Errorf("label %q has an underscore: an Alt key would press it", a)
				}
			}
		}
	}
}

// dialogHostile puts markup, g_strcompress escapes, option look-alikes and
// yad's and zenity's separators into every string of a request.
func dialogHostile(evil func(i int) string) *decision.Request {
	n := 0
	next := func() string { n++; return evil(n) }
	return &decision.Request{
		Server: next(), Alias: next(), Tool: next(), Source: next(), Action: next(), ActionDescription: next(),
		Reason: next(),
		Dimensions: []decision.Dimension{
			{Name: next(), Label: next(), Value: next(), Scopes: []decision.Scope{
				{Label: next(), Match: next() + "a", Kind: decision.KindPrefix},
				{Label: next(), Match: next() + "b"},
			}},
			{Name: next() + "2", Value: next(), Scopes: []decision.Scope{{Label: next(), Match: next()}}},
		},
		Workdir:   &decision.Workdir{Value: next(), Label: next()},
		Grants:    []decision.Grant{{Name: next(), Description: next()}, {Name: next() + "2"}},
		Details:   []decision.Detail{{Label: next(), Text: next()}},
		Arguments: []byte(`{"x":1}`),
		SessionID: "s",
	}
}

var dialogEvil = []string{
	`<span size="1">rm -rf ~ ;</span>ls -la`, "&amp;", "<", "--display=:9", "--gtk-module=evil",
	"--text=allowed", "-x", "^default", "@disabled@", `\n\t\\ \101`, "a!b|c:d", "\x1f", "_Allow", "TRUE",
	"--", "-", "line\nbreak", "\u202eevil", "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
}

// dialogTraverse are steps that show every dialog of a program once: the
// viewer, the reason (yad: via deny always), the rule dialogs.
var dialogTraverse = map[string][]string{
	"yad": {"exit 16", "printf 'x\\n'", yadForm(20, "1", "1", "1"), "exit 14", "exit 0", "printf 'x\\n'"},
	"zenity": {"exit 0", zenityPrints("Deny always…"), "printf 'x\\n'", "exit 0", zenityPrints("Allow always…"),
		zenityPrints("Change…"), "exit 0", "exit 0", "exit 0", "exit 0", "exit 1", "exit 1"},
}

// dialogPlain is the request of dialogHostile's shape whose strings are
// all plain words.
func dialogPlain() *decision.Request {
	return dialogHostile(func(i int) string { return "plain" + strconv.Itoa(i) })
}

// dialogTraverseArgv is every argv of dialogTraverse's dialogs for req.
func dialogTraverseArgv(t *testing.T, prog string, req *decision.Request) [][]string {
	t.Helper()
	fd := newDialogFake(t, dialogTraverse[prog]...)
	if _, err := dialogAsk(t, prog, fd, req); err != nil {
		t.Fatal(err)
	}
	if fd.runs() != len(dialogTraverse[prog]) {
		t.Errorf("%d dialogs shown, want %d", fd.runs(), len(dialogTraverse[prog]))
	}
	dialogCheckArgv(t, fd.allArgv())
	return dialogSizeless(fd.allArgv())
}

// dialogSizeless is runs with what may differ between runs of one shape
// made numbers: the size of a window fitted to its text, the deadline.
func dialogSizeless(runs [][]string) [][]string {
	size := regexp.MustCompile(`^--(width|height|timeout)=[0-9]+$`)
	deadline := regexp.MustCompile(`Answer by [0-9:]+ \([0-9a-z ]+ left\)`)
	for _, args := range runs {
		for i, a := range args {
			a = size.ReplaceAllString(a, "--$1=N")
			args[i] = deadline.ReplaceAllString(a, "Answer by T")
		}
	}
	return runs
}

// No request text reaches argv: every dialog's argv for a request of
// dialogHostile's shape, its strings hostile (markup, escapes, option
// look-alikes, separators, controls) or random, is the argv for the same
// shape with plain words: it depends on the request's shape only.
func TestDialogArgvIsTheRequestsShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"-", "--", "=", "<", ">", "&", "\\", "n", "^", "!", "|", ":", "_", " ", "\n", "\t", "\x1f", "\x1b", "a", "é", "中", "\u202e", "@disabled@", "--display=:9", "TRUE"}
	random := func(int) string {
		var b strings.Builder
		for range rng.IntN(12) + 1 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	reqs := []*decision.Request{dialogHostile(func(i int) string { return dialogEvil[i%len(dialogEvil)] + strconv.Itoa(i) })}
	for range 20 {
		reqs = append(reqs, dialogHostile(random))
	}
	for _, prog := range []string{"yad", "zenity"} {
		want := dialogTraverseArgv(t, prog, dialogPlain())
		for i, req := range reqs {
			t.Run(fmt.Sprintf("%s/%d", prog, i), func(t *testing.T) {
				t.Parallel()
				if got := dialogTraverseArgv(t, prog, req); !reflect.DeepEqual(got, want) {
					t.Errorf("argv depends on the request's text:\n got %q\nwant %q", got, want)
				}
			})
		}
	}
}

// dialogHuge is a request at the protocol's limits where they make
// argv grow: 1000 scopes of 4096-byte labels, 1000 grants of 4096-byte
// descriptions, every string marked "HUGE".
func dialogHuge() *decision.Request {
	long := func(i int) string { return fmt.Sprintf("HUGE%04d", i) + strings.Repeat("é", 2044) }
	req := &decision.Request{Server: "s", Tool: "HUGE tool", Action: "write",
		Dimensions: []decision.Dimension{{Name: "path", Value: "HUGE value"}}, SessionID: "s"}
	for i := range 1000 {
		req.Dimensions[0].Scopes = append(req.Dimensions[0].Scopes, decision.Scope{Label: long(i), Match: fmt.Sprintf("HUGE/%d", i)})
		req.Grants = append(req.Grants, decision.Grant{Name: fmt.Sprintf("HUGE.%d", i), Description: long(i)})
	}
	return req
}

// A request at the limits starts every dialog (no E2BIG), with no request
// text in any argv, and every label reaches the dialog on its input.
func TestDialogHugeRequest(t *testing.T) {
	traverse := map[string][]string{
		"yad": {"exit 16", "printf 'x\\n'", yadForm(20, "1", "1"), "exit 14", "exit 0", "printf 'x\\n'"},
		"zenity": {zenityPrints("Deny always…"), "printf 'x\\n'", "exit 0", zenityPrints("Allow always…"),
			zenityPrints("Change…"), "exit 0", "exit 0", "exit 0", "exit 1", "exit 1"},
	}
	for _, prog := range []string{"yad", "zenity"} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			fd := newDialogFake(t, traverse[prog]...)
			if _, err := dialogAsk(t, prog, fd, dialogHuge()); err != nil {
				t.Fatal(err)
			}
			if fd.runs() != len(traverse[prog]) {
				t.Fatalf("%d dialogs shown, want %d", fd.runs(), len(traverse[prog]))
			}
			size := 0
			for _, args := range fd.allArgv() {
				for _, a := range args {
					size += len(a) + 1
					if strings.Contains(a, "HUGE") || strings.Contains(a, "é") {
						t.Fatalf("argument %.80q holds request text", a)
					}
				}
			}
			if size > 64<<10 {
				t.Errorf("the dialogs' argv took %d bytes", size)
			}
			var input strings.Builder
			for n := 1; n <= fd.runs(); n++ {
				doc, _ := fd.doc(n)
				input.WriteString(yadUnline(doc + strings.Join(fd.stdin(n), "\n")))
			}
			for i := range 1000 {
				if !strings.Contains(input.String(), fmt.Sprintf("HUGE%04d", i)) {
					t.Fatalf("label %d never reached the dialogs", i)
				}
			}
			for n := 1; prog == "yad" && n <= fd.runs(); n++ {
				for _, line := range fd.stdin(n) {
					for _, item := range strings.Split(line, "\x1f") {
						if w := ansi.StringWidth(item); strings.Contains(line, "\x1f") && w > dialogCells+1 {
							t.Fatalf("combo item %.40q… is %d cells wide", item, w)
						}
					}
				}
			}
		})
	}
}

func TestDialogWrap(t *testing.T) {
	long := strings.Repeat("abcdefghij", 20)
	in := "Tool: " + long + "\n│ " + long + "\na\tx\nshort\n中" + strings.Repeat("中", 60) + "\n" + strings.Repeat("word ", 30)
	out := dialogWrap(in)
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > dialogCells {
			t.Errorf("line %q is %d cells wide", l, w)
		}
	}
	var starts []string // lines that start at the margin, as askperm's own do
	for _, l := range lines {
		if !strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "│     ") {
			starts = append(starts, l[:min(len(l), 6)])
		}
	}
	if want := []string{"Tool: ", "│ ab", "a     ", "short", "中中", "word w"}; !slices.Equal(starts, want) {
		t.Errorf("lines at the margin %q, want %q\n%s", starts, want, out)
	}
	if dialogUnwrap(out) != form.ExpandTabs(in) {
		t.Errorf("wrapping lost or added text:\n%s", out)
	}
	if !strings.Contains(out, "word \n    word") {
		t.Errorf("words are not kept whole:\n%s", out)
	}
}

// The deadline is shown: yad's --timeout with its indicator, zenity's
// --timeout and its text, each dialog with the time left when it opens; a
// dialog's own timeout ends in askperm's (a deny by timeout), and without
// a deadline no dialog has a timeout.
func TestDialogDeadlineShown(t *testing.T) {
	timeout := func(args []string) int {
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--timeout="); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		return -1
	}
	for _, prog := range []string{"yad", "zenity"} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			deny := map[string]string{"yad": "exit 0", "zenity": "exit 1"}[prog]
			fd := newDialogFake(t, "sleep 2.2; "+deny, "printf '\\n'")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := New(decision.Frontend(prog), fd.options()).Ask(ctx, dialogForm(dialogRequest(t))); err != nil {
				t.Fatal(err)
			}
			first, second := timeout(fd.argv(1)), timeout(fd.argv(2))
			if first != 20 || second < 16 || second > 18 {
				t.Errorf("timeouts %d then %d, want 20 then the time left (17 or 18)", first, second)
			}
			for n := 1; n <= 2 && prog == "yad"; n++ {
				if !slices.Contains(fd.argv(n), "--timeout-indicator=bottom") {
					t.Errorf("yad dialog %d shows no timeout indicator: %q", n, fd.argv(n))
				}
			}
			doc, _ := fd.doc(1)
			lines := strings.Split(doc, "\n")
			want := regexp.MustCompile(`^Answer by [0-9]{2}:[0-9]{2}:[0-9]{2} \((20|19) s left\); unanswered, this request is denied\.$`)
			if lines[0] != "write_file (fs-default) wants to write /home/a/p/report.md" || !want.MatchString(lines[1]) {
				t.Errorf("the viewer does not start with the question, then the deadline:\n%s", doc)
			}
			if prog == "zenity" && !slices.ContainsFunc(fd.argv(2), func(a string) bool { return strings.Contains(a, "s left); unanswered") }) {
				t.Errorf("the reason entry does not state the deadline: %q", fd.argv(2))
			}

			fd = newDialogFake(t, "exit "+strconv.Itoa(dialogTimeoutExit[decision.Frontend(prog)]))
			ctx, cancel = context.WithTimeout(context.Background(), 800*time.Millisecond)
			defer cancel()
			if _, err := New(decision.Frontend(prog), fd.options()).Ask(ctx, dialogForm(dialogRequest(t))); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the dialog's own timeout: err = %v, want the deadline's", err)
			}

			fd = newDialogFake(t, deny, "printf '\\n'")
			if _, err := New(decision.Frontend(prog), fd.options()).Ask(context.Background(), dialogForm(dialogRequest(t))); err != nil {
				t.Fatal(err)
			}
			for _, args := range fd.allArgv() {
				if timeout(args) != -1 {
					t.Errorf("a dialog without a deadline has a timeout: %q", args)
				}
			}
		})
	}
}

// Every dialog runs in /, never in askperm's working directory, which may
// be the agent's: zenity loads ./zenity.ui from it.
func TestDialogWorkingDirectory(t *testing.T) {
	fd := newDialogFake(t, dialogTraverse["zenity"]...)
	req := dialogRequest(t)
	t.Chdir(t.TempDir())
	if _, err := dialogAsk(t, "zenity", fd, req); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= fd.runs(); n++ {
		if cwd, _ := fd.read("cwd." + strconv.Itoa(n)); cwd != "/\n" {
			t.Errorf("dialog %d ran in %q", n, cwd)
		}
	}
}

// Both rule dialogs start with the request's question; zenity's rule
// viewer is sized to its text, within the bounds.
func TestDialogRuleText(t *testing.T) {
	fd := newDialogFake(t, "exit 14", yadForm(22, "TRUE", "TRUE", "1", "1", "1"))
	if _, err := dialogAsk(t, "yad", fd, dialogRequest(t)); err != nil {
		t.Fatal(err)
	}
	if text := fd.yadRuleShown(2); !strings.HasPrefix(text, "write_file (fs-default) wants to write /home/a/p/report.md\nAnswer by ") {
		t.Errorf("yad's rule form does not start with the question:\n%s", text)
	}
	fd = newDialogFake(t, zenityPrints("Allow always…"), zenityPrints("Save rule"))
	if _, err := dialogAsk(t, "zenity", fd, dialogRequest(t)); err != nil {
		t.Fatal(err)
	}
	doc, _ := fd.doc(2)
	if !strings.HasPrefix(doc, "write_file (fs-default) wants to write /home/a/p/report.md\nAnswer by ") {
		t.Errorf("zenity's rule viewer does not start with the question:\n%s", doc)
	}
	width, height := zenitySize(doc)
	if args := fd.argv(2); !slices.Contains(args, width) || !slices.Contains(args, height) {
		t.Errorf("rule viewer %q, want %s %s", args, width, height)
	}
	for _, tc := range []struct{ text, width, height string }{
		{"short", "--width=480", "--height=240"},
		// 20 lines of 23 px (measured: the rule viewer's last line shows).
		{strings.Repeat("x", 80) + strings.Repeat("\nx", 19), "--width=700", "--height=570"},
		{strings.Repeat("x", 500) + strings.Repeat("\nx", 999), "--width=1024", "--height=720"},
	} {
		if w, h := zenitySize(tc.text); w != tc.width || h != tc.height {
			t.Errorf("zenitySize of %d bytes = %s %s, want %s %s", len(tc.text), w, h, tc.width, tc.height)
		}
	}
}

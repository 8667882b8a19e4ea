package dialog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
// neither can hold) and the file on descriptor 3, then runs its step: a
// shell snippet that prints and exits as the real program would. %[1]s is
// the directory of the records.
const dialogFakeScript = `#!/bin/sh
D='%[1]s'
n=$(( $(cat "$D/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$D/count"
printf '%%s\0' "$@" > "$D/argv.$n"
cat /proc/$$/environ > "$D/env.$n"
if [ -e /dev/fd/3 ]; then cat /dev/fd/3 > "$D/doc.$n"; fi
step="$D/step.$n"
[ -f "$step" ] || step="$D/step.default"
. "$step"
`

// dialogFake is one fake dialog program and what its runs recorded.
type dialogFake struct {
	t   *testing.T
	dir string
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
	if err := os.WriteFile(filepath.Join(fd.dir, name), []byte(content), mode); err != nil {
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

// doc is the file run n read on descriptor 3.
func (fd *dialogFake) doc(n int) (string, bool) { return fd.read("doc." + strconv.Itoa(n)) }

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

func (fd *dialogFake) options(env ...string) prompt.Options {
	if env == nil {
		env = []string{"DISPLAY=:42"}
	}
	return prompt.Options{Getenv: dialogEnvOf(env...), DialogPaths: map[string]string{"yad": fd.path(), "zenity": fd.path()}}
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

// dialogArg returns the value of the first "--name=" element of args.
func dialogArg(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Exit statuses, as shell steps.
const (
	stepCancelledBySignal = `kill -KILL $$`
	stepNoDisplay         = `echo "(yad:1): Gtk-WARNING **: 10:00:00.000: cannot open display: :42" >&2; exit 1`
)

// zenityPrints is zenity's answer for an extra button.
func zenityPrints(label string) string { return fmt.Sprintf("printf '%%s\\n' '%s'; exit 1", label) }

// yadForm is yad's answer for a form closed by button id: its values,
// each followed by the separator, then a newline.
func yadForm(id int, vals ...string) string {
	return fmt.Sprintf(`printf '%s\037\n'; exit %d`, strings.Join(vals, `\037`), id)
}

// dialogUnwrap undoes dialogWrap.
func dialogUnwrap(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n│     ", ""), "\n    ", "")
}

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
		{"zenity", "exit 0", want{choice: form.DenyOnce}},
		{"zenity", zenityPrints("Allow once"), want{choice: form.AllowOnce}},
		{"zenity", zenityPrints("Allow for this session"), want{choice: form.AllowSession}},
		{"zenity", zenityPrints("Allow always…"), want{choice: form.AllowAlways}},
		{"zenity", zenityPrints("Deny always…"), want{choice: form.DenyAlways}},
		{"zenity", "exit 1", want{err: prompt.ErrCancelled}},
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
			c, err := s.view(context.Background(), "the request", choices)
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
	if args[0] != "--text-info" || !slices.Contains(args, "--no-markup") || !slices.Contains(args, "--ok-label=Deny once") {
		t.Errorf("args %q", args)
	}
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
		{name: "Enter in the reason", prog: "zenity", steps: []string{"exit 0", "printf '\\n'; exit 0"},
			want: form.Answer{Choice: form.DenyOnce}},
		{name: "reason dismissed", prog: "zenity", steps: []string{"exit 0", "exit 1"}},
		{name: "reason escaped", prog: "yad", steps: []string{"exit 0", "exit 252"}},
		{name: "allow always, defaults", prog: "yad", steps: []string{"exit 14", yadForm(22, defaults...)},
			want: wantDefault,
			check: func(t *testing.T, fd *dialogFake) {
				args := fd.argv(2)
				want := []string{
					"--field=Grant 1:CHK", "--field=Grant 2:CHK", "--field=Scope:CB", "--field=Workdir:CB", "--field=Lifetime:CB",
					"TRUE", "TRUE",
					"^1. this file: exactly \"/home/a/p/report.md\"" + sep + "2. files under /home/a/p/: anything under \"/home/a/p/\"" + sep + "3. any file: any value",
					"^1. in workdir \"/home/a/p\"" + sep + "2. in any workdir (every configured workdir, including future ones)",
					"^1. until removed" + sep + "2. for 15 minutes" + sep + "3. for 16 hours",
				}
				if got := args[len(args)-len(want):]; !slices.Equal(got, want) {
					t.Errorf("rule form fields and values:\n got %q\nwant %q", got, want)
				}
				for _, b := range []string{"--button=« Back:20", "--button=Save rule:22", "--button=Deny once:0", "--num-output", "--separator=" + sep, "--item-separator=" + sep} {
					if !slices.Contains(args, b) {
						t.Errorf("rule form lacks %q: %q", b, args)
					}
				}
			}},
		{name: "allow always, changed then confirmed", prog: "yad",
			steps: []string{"exit 14", yadForm(22, changed...), yadForm(22, changed...)},
			want:  wantChanged,
			check: func(t *testing.T, fd *dialogFake) {
				text, _ := dialogArg(fd.argv(3), "text")
				if text = dialogUnwrap(text); !strings.Contains(text, "The rule changed") || !strings.Contains(text, "for 16 hours") {
					t.Errorf("the form shown again does not state the changed rule:\n%s", text)
				}
				args := fd.argv(3)
				if !slices.Contains(args, "FALSE") || !slices.Contains(args, "1. until removed"+sep+"2. for 15 minutes"+sep+"^3. for 16 hours") {
					t.Errorf("the form shown again does not preselect the changed rule: %q", args)
				}
			}},
		{name: "back keeps the rule", prog: "yad",
			steps: []string{"exit 14", yadForm(20, changed...), "exit 14", yadForm(22, changed...)},
			want:  wantChanged},
		{name: "back then allow once", prog: "yad",
			steps: []string{"exit 16", "printf 'never\\n'; exit 0", yadForm(20, "1", "1", "1"), "exit 10"},
			want:  form.Answer{Choice: form.AllowOnce, Message: "never", Scopes: map[string]string{"path": "/home/a/p/report.md"}, WorkdirScope: decision.WorkdirSelected, Lifetime: decision.LifetimeIndefinite, Grants: []string{"fs.write", "fs.create"}}},
		{name: "no grant is not saved", prog: "yad",
			steps: []string{"exit 14", yadForm(22, noGrants...), yadForm(22, noGrants...), "exit 0"},
			want:  form.Answer{Choice: form.DenyOnce},
			check: func(t *testing.T, fd *dialogFake) {
				if text, _ := dialogArg(fd.argv(4), "text"); !strings.Contains(dialogUnwrap(text), "Not saved: grants: choose at least one") {
					t.Errorf("the form shown again does not say why:\n%s", text)
				}
			}},
		{name: "deny once in the rule form keeps the reason", prog: "yad",
			steps: []string{"exit 16", "printf 'never\\n'; exit 0", "exit 0"},
			want:  form.Answer{Choice: form.DenyOnce, Message: "never"}},
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
				grants := fd.argv(3)
				if !slices.Contains(grants, "--checklist") || !slices.Contains(grants, "1. fs.write — write files in the workdir") {
					t.Errorf("grants list %q", grants)
				}
				dim := fd.argv(4)
				if want := []string{"1", "✓", `1. this file: exactly "/home/a/p/report.md"`, "2", "", "2. files under /home/a/p/: anything under \"/home/a/p/\""}; !slices.Contains(dim, "--column=Which File [path] the rule covers") || !slices.Equal(dim[len(dim)-9:len(dim)-3], want) {
					t.Errorf("dimension list %q", dim)
				}
				if doc, _ := fd.doc(7); !strings.Contains(dialogUnwrap(doc), `anything under "/home/a/p/", in any workdir, granting fs.create, for 16 hours`) {
					t.Errorf("the rule viewer shown again:\n%s", doc)
				}
			}},
		{name: "nothing chosen keeps", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "printf '1|2\\n'", "exit 0", "printf '\\n'", "exit 0", zenityPrints("Save rule")},
			want:  wantDefault},
		{name: "back", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("« Back"), "exit 0", "printf 'no\\n'"},
			want:  form.Answer{Choice: form.DenyOnce, Message: "no"}},
		{name: "deny once in the rule viewer", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), "exit 0"},
			want:  form.Answer{Choice: form.DenyOnce}},
		{name: "no grant is not saved", prog: "zenity",
			steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "printf '\\n'", "exit 0", "exit 0", "exit 0", zenityPrints("Save rule"), "exit 1"},
			check: func(t *testing.T, fd *dialogFake) {
				if doc, _ := fd.doc(8); !strings.Contains(dialogUnwrap(doc), "Not saved: grants: choose at least one") {
					t.Errorf("the rule viewer shown again does not say why:\n%s", doc)
				}
			}},
		{name: "list escaped", prog: "zenity", steps: []string{zenityPrints("Allow always…"), zenityPrints("Change…"), "exit 1"}},
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
// value; dialogTextOptions may hold untrusted text (one element each).
var (
	dialogOptions = []string{
		"--text-info", "--entry", "--form", "--list", "--checklist", "--no-markup", "--center", "--num-output",
		"--title=", "--width=", "--height=", "--filename=", "--font=", "--text=", "--button=", "--ok-label=",
		"--extra-button=", "--entry-label=", "--entry-text=", "--separator=", "--item-separator=", "--field=",
		"--column=", "--hide-column=", "--print-column=",
	}
	dialogTextOptions = []string{"--text=", "--column=", "--entry-text="}
)

// dialogPositional are the shapes of askperm's positional values: numbered
// items ("^" marks yad's preselected one), row numbers, checkbox states,
// the current-choice mark, or nothing.
var dialogPositional = regexp.MustCompile(`^(\^?[0-9]+\. |[0-9]+$|TRUE$|FALSE$|✓$|$)`)

// dialogCheckArgv checks the argv invariants of every dialog run: each
// element starting with "-" is one of askperm's own options, and only
// those of dialogTextOptions carry text from the request; button labels
// have no underscore (a GTK mnemonic); positional values have askperm's
// shapes, so none starts with "-".
func dialogCheckArgv(t *testing.T, runs [][]string, untrusted ...string) {
	t.Helper()
	for _, args := range runs {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				if !dialogPositional.MatchString(a) {
					t.Errorf("positional value %q is not one askperm writes", a)
				}
				continue
			}
			opt := a
			if i := strings.IndexByte(a, '='); i >= 0 {
				opt = a[:i+1]
			}
			if !slices.Contains(dialogOptions, opt) {
				t.Errorf("argument %q is not one of askperm's options (in %q)", a, args)
				continue
			}
			if !slices.Contains(dialogTextOptions, opt) {
				for _, u := range untrusted {
					if strings.Contains(a, u) {
						t.Errorf("argument %q holds request text %q", a, u)
					}
				}
			}
			switch opt {
			case "--button=", "--ok-label=", "--extra-button=", "--field=", "--entry-label=":
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
	"yad": {"exit 16", "printf 'x\\n'", yadForm(20, "1", "1", "1"), "exit 14", "exit 0"},
	"zenity": {zenityPrints("Deny always…"), "printf 'x\\n'", zenityPrints("« Back"), zenityPrints("Allow always…"),
		zenityPrints("Change…"), "exit 0", "exit 0", "exit 0", "exit 0", "exit 0"},
}

func TestDialogHostileArgv(t *testing.T) {
	for _, prog := range []string{"yad", "zenity"} {
		t.Run(prog, func(t *testing.T) {
			req := dialogHostile(func(i int) string { return dialogEvil[i%len(dialogEvil)] + strconv.Itoa(i) })
			fd := newDialogFake(t, dialogTraverse[prog]...)
			if _, err := dialogAsk(t, prog, fd, req); err != nil {
				t.Fatal(err)
			}
			var untrusted []string
			for _, e := range dialogEvil {
				if len(e) > 3 && !strings.HasPrefix(e, "W") && e != "TRUE" {
					untrusted = append(untrusted, e)
				}
			}
			dialogCheckArgv(t, fd.allArgv(), untrusted...)
			for _, args := range fd.allArgv() {
				for _, a := range args {
					if strings.ContainsAny(a, "\x1b\u202e") {
						t.Errorf("unrendered request text reached argv: %q", a)
					}
				}
			}
			if fd.runs() != len(dialogTraverse[prog]) {
				t.Errorf("%d dialogs shown, want %d", fd.runs(), len(dialogTraverse[prog]))
			}
		})
	}
}

// The argv invariants hold for random request strings.
func TestDialogArgvProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"-", "--", "=", "<", ">", "&", "\\", "n", "^", "!", "|", ":", "_", " ", "\n", "\t", "\x1f", "\x1b", "a", "é", "中", "\u202e", "@disabled@", "--display=:9", "TRUE"}
	random := func(int) string {
		var b strings.Builder
		for range rng.IntN(12) + 1 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for i := range 20 {
		for _, prog := range []string{"yad", "zenity"} {
			req := dialogHostile(random)
			t.Run(fmt.Sprintf("%s/%d", prog, i), func(t *testing.T) {
				t.Parallel()
				fd := newDialogFake(t, dialogTraverse[prog]...)
				if _, err := dialogAsk(t, prog, fd, req); err != nil {
					t.Fatal(err)
				}
				dialogCheckArgv(t, fd.allArgv(), "--display=:9")
			})
		}
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

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askperm/askperm/internal/notify/notifytest"
	"github.com/askperm/askperm/internal/xvfb"
)

// The dialogs, for real: askperm runs yad or zenity on a private Xvfb
// display, and xdotool plays the person: find the
// dialog's window, focus it, type plain keys. The keys were found by
// experiment with yad 0.40.0 and zenity 3.44.0:
//
//	yad viewer      focus in the text; Tab reaches the buttons in order
//	                (Deny once first); Ctrl+Enter is Deny once
//	yad rule form   the rule (read-only), then the questions; focus on the
//	                first checkbox (Grant 1) when grants are asked (without
//	                them it starts before the first combo, a Tab or two
//	                away: yad cannot focus a combo); Tab through the fields,
//	                then « Back, Show rule, Save rule, Deny once; space
//	                toggles a checkbox, Down picks a combo's next item
//	zenity viewer   Tab reaches Deny once (Cancel), Read again (OK), then
//	                the extra buttons in order: Deny always…, the allows,
//	                one Tab further than yad's (viewerKeys); Return presses
//	                OK anywhere but on an extra button, on Deny once too;
//	                Escape is Deny once
//	zenity rule     Tab reaches Deny once, « Back (OK, also Enter),
//	                Change…, Save rule
//	zenity list     Down selects the next row (from the first), Enter
//	                confirms; Tab Tab Enter is OK with nothing selected;
//	                Tab Enter and Escape are « Rule
//	entry (both)    type, then Enter

// xDisplay is a private X server for one test.
type xDisplay struct {
	t *testing.T
	*xvfb.Server
}

// needDialogs skips the test unless Xvfb, xdotool and the program are
// installed (the CI installs them: xvfb xdotool yad zenity).
func needDialogs(t *testing.T, program string) {
	t.Helper()
	skipSlow(t)
	for _, p := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("skipping: %s is not installed (Debian packages xvfb, xdotool, yad, zenity)", p)
		}
	}
	if _, err := os.Stat("/usr/bin/" + program); err != nil {
		t.Skipf("skipping: /usr/bin/%s is not installed (Debian packages xvfb, xdotool, yad, zenity)", program)
	}
}

// startX starts Xvfb (internal/xvfb) and waits until it serves clients;
// a server that dies at once (a display taken after all) is replaced.
func startX(t *testing.T) *xDisplay {
	t.Helper()
	skipSlow(t)
	var failures []string
	for range 3 {
		x, err := tryX(t)
		if err == nil {
			t.Cleanup(x.Stop)
			return x
		}
		failures = append(failures, err.Error())
	}
	t.Fatalf("Xvfb did not start: %s", strings.Join(failures, "; "))
	return nil
}

func tryX(t *testing.T) (*xDisplay, error) {
	s, err := xvfb.Start()
	if err != nil {
		return nil, err
	}
	x := &xDisplay{t: t, Server: s}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := x.xdotool("getdisplaygeometry"); err == nil {
			return x, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, s.Failed(errors.New("display " + s.Display + " serves no client"))
		}
	}
}

// xdotool runs xdotool on the display and returns its output.
func (x *xDisplay) xdotool(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = []string{"DISPLAY=" + x.Display}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// xWindow is one dialog window on the display.
type xWindow struct {
	x   *xDisplay
	wid string
	pid int
}

// waitDialog waits (at most 10 s) for a visible window of class whose
// process is not after, the dialog before it (X reuses window ids, pids
// differ), and gives it the focus.
func (a *dialogRun) waitDialog(class string, after *xWindow) *xWindow {
	a.t.Helper()
	x := a.x
	deadline := time.Now().Add(10 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err := x.xdotool("search", "--onlyvisible", "--class", class)
		if err != nil {
			continue // none yet
		}
		for _, wid := range strings.Fields(out) {
			p, err := x.xdotool("getwindowpid", wid)
			pid, _ := strconv.Atoi(p)
			if err != nil || pid == 0 || after != nil && pid == after.pid {
				continue
			}
			if _, err := x.xdotool("windowfocus", "--sync", wid); err != nil {
				continue
			}
			time.Sleep(500 * time.Millisecond) // let GTK settle before keys
			return &xWindow{x: x, wid: wid, pid: pid}
		}
	}
	state := "still running"
	select {
	case err := <-a.done:
		state = fmt.Sprintf("exited (%v) with stdout %q", err, a.stdout.String())
	default:
	}
	windows, _ := x.xdotool("search", "--onlyvisible", "--name", ".")
	alive := x.Cmd.Process.Signal(syscall.Signal(0)) == nil
	a.t.Fatalf("no new %s window appeared; askperm %s; stderr: %s; windows: %q; Xvfb alive %v: %s", class, state, a.stderr.String(), windows, alive, x.Stderr.String())
	return nil
}

// keys presses keys, one xdotool key argument each ("Tab", "ctrl+Return").
func (d *xWindow) keys(keys ...string) {
	d.x.t.Helper()
	if out, err := d.x.xdotool(append([]string{"key", "--delay", "120"}, keys...)...); err != nil {
		d.x.t.Fatalf("xdotool key %v: %v: %s", keys, err, out)
	}
}

// typeText types text into the focused field.
func (d *xWindow) typeText(text string) {
	d.x.t.Helper()
	if out, err := d.x.xdotool("type", "--delay", "50", text); err != nil {
		d.x.t.Fatalf("xdotool type: %v: %s", err, out)
	}
}

// xTabs is n presses of Tab.
func xTabs(n int) []string { return strings.Fields(strings.Repeat("Tab ", n)) }

// procGone reports whether process pid has exited (or is a zombie).
func procGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || bytes.Contains(stat, []byte(") Z "))
}

// waitGone fails unless the dialog's process exits within 5 s.
func (d *xWindow) waitGone() {
	d.x.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !procGone(d.pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			d.x.t.Fatalf("dialog %d is still running", d.pid)
		}
	}
}

// dialogRun is askperm running in the background.
type dialogRun struct {
	t              *testing.T
	x              *xDisplay
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// startDialog runs askperm on the display with the named frontend and
// request; its state and config live in a fresh directory.
func startDialog(t *testing.T, x *xDisplay, frontend, request string, args ...string) *dialogRun {
	t.Helper()
	return startAskperm(t, x, readFile(t, "requests/"+request), dialogEnv(x, t.TempDir()), append([]string{"--frontend", frontend, "--timeout", "60s"}, args...)...)
}

// dialogEnv is the environment of askperm on display x, its state and
// config in home.
func dialogEnv(x *xDisplay, home string) []string {
	return baseEnv("DISPLAY="+x.Display, "HOME="+home, "XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config")
}

// startAskperm runs askperm in the background with the request req, the
// environment env and args.
func startAskperm(t *testing.T, x *xDisplay, req []byte, env []string, args ...string) *dialogRun {
	t.Helper()
	a := &dialogRun{t: t, x: x, done: make(chan error, 1)}
	a.cmd = exec.Command(bin, args...)
	a.cmd.Stdin = bytes.NewReader(req)
	a.cmd.Stdout, a.cmd.Stderr = &a.stdout, &a.stderr
	a.cmd.Env = env
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.done <- a.cmd.Wait() }()
	t.Cleanup(func() { a.cmd.Process.Kill() })
	return a
}

// decision waits (at most 30 s) for askperm to exit 0 and returns its
// decision.
func (a *dialogRun) decision() map[string]any {
	a.t.Helper()
	return checkDecision(a.t, a.output())
}

// output waits (at most 30 s) for askperm to exit 0 and returns its stdout.
func (a *dialogRun) output() string {
	a.t.Helper()
	select {
	case err := <-a.done:
		if code := exitCode(a.t, err); code != 0 {
			a.t.Fatalf("askperm exited %d; stderr: %s", code, a.stderr.String())
		}
	case <-time.After(30 * time.Second):
		a.cmd.Process.Kill()
		a.t.Fatalf("askperm hung; stderr: %s", a.stderr.String())
	}
	return a.stdout.String()
}

var dialogPrograms = []string{"yad", "zenity"}

// forEachDialog runs test once per dialog program, in parallel, each on
// an X server of its own.
func forEachDialog(t *testing.T, test func(t *testing.T, prog string, x *xDisplay)) {
	for _, prog := range dialogPrograms {
		t.Run(prog, func(t *testing.T) {
			needDialogs(t, prog)
			t.Parallel()
			test(t, prog, startX(t))
		})
	}
}

// viewerTabs is how many Tabs reach each button of the viewer of
// write-file.json: yad's are Deny once, Deny always…, Allow always…,
// Allow once; zenity's Deny once (Cancel), Read again (OK), then Deny
// always…, Allow always…, Allow once (extra buttons).
var viewerTabs = map[string]map[string]int{
	"yad":    {"Deny once": 1, "Deny always…": 2, "Allow always…": 3, "Allow once": 4},
	"zenity": {"Deny once": 1, "Read again": 2, "Deny always…": 3, "Allow always…": 4, "Allow once": 5},
}

// viewerKeys are the keys that press the viewer's button named label:
// Tabs to it, then Return.
func viewerKeys(prog, label string) []string {
	n, ok := viewerTabs[prog][label]
	if !ok {
		panic(prog + " has no viewer button " + label)
	}
	return append(xTabs(n), "Return")
}

func TestDialogAllowOnce(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		v.keys(viewerKeys(prog, "Allow once")...)
		d := a.decision()
		if d["decision"] != "allow" || d["persist"] != "once" || d["cause"] != "user" || d["frontend"] != prog ||
			!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
			t.Fatalf("want allow once by the user through %s; got %v", prog, d)
		}
	})
}

// denyOnceKeys press Deny once in a viewer: in zenity's, Return on its
// Cancel button (named Deny once) presses OK (Read again), as Return
// anywhere in the window does; Escape is Cancel.
var denyOnceKeys = map[string][]string{"yad": {"Tab", "Return"}, "zenity": {"Escape"}}

func TestDialogDenyWithReason(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		v.keys(denyOnceKeys[prog]...)
		r := a.waitDialog(prog, v)
		r.typeText("not today")
		r.keys("Return")
		d := a.decision()
		wantDeny(t, d, "user", prog)
		if d["message"] != "not today" {
			t.Fatalf("message %q, want %q", d["message"], "not today")
		}
	})
}

// Enter never approves: on the first dialog it does nothing (yad: the
// text has the focus) or is Read again (zenity's OK), which shows the
// request again, as does Return with Deny once (zenity's Cancel) focused;
// Ctrl+Enter (yad) and Escape (zenity) deny once.
func TestDialogEnterDenies(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		v.keys("Return")
		if prog == "yad" {
			v.keys("ctrl+Return")
		} else {
			v = a.waitDialog(prog, v) // the request again
			v.checkArg("--cancel-label=Deny once", "--ok-label=Read again")
			v.keys("ctrl+Return")
			v = a.waitDialog(prog, v) // again
			v.keys(viewerKeys(prog, "Deny once")...)
			v = a.waitDialog(prog, v) // and again
			v.checkArg("--cancel-label=Deny once", "--ok-label=Read again")
			v.keys("Escape")
		}
		a.waitDialog(prog, v).keys("Return") // the reason, left empty
		d := a.decision()
		wantDeny(t, d, "user", prog)
		if _, ok := d["message"]; ok {
			t.Fatalf("an empty reason gave a message: %v", d)
		}
	})
}

// Allow always, going Back from the rule once and forward again, then
// saving a narrowed rule.
func TestDialogAllowAlwaysWithBack(t *testing.T) {
	t.Run("yad", func(t *testing.T) {
		needDialogs(t, "yad")
		t.Parallel()
		x := startX(t)
		a := startDialog(t, x, "yad", "write-file.json")
		v := a.waitDialog("yad", nil)
		v.keys("Tab", "Tab", "Tab", "Return") // Allow always…
		// Fields: Grant 1, Grant 2, Scope, Workdir, Lifetime; then « Back.
		r := a.waitDialog("yad", v)
		// Grant 2 (fs.create) unticked: fs.write stays, as fs.create
		// implies it and not the other way round.
		r.keys("Tab", "space", "Tab", "Down", "Tab", "Tab", "Down", "Tab", "Return")
		v = a.waitDialog("yad", r)
		v.keys("Tab", "Tab", "Tab", "Return")
		r = a.waitDialog("yad", v)            // the values chosen before Back are kept
		r.keys(append(xTabs(7), "Return")...) // Save rule
		d := a.decision()
		if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "yad" ||
			!reflect.DeepEqual(d["grants"], []any{"fs.write"}) {
			t.Fatalf("want allow always of fs.write by the user through yad; got %v", d)
		}
		rule, _ := d["rule"].(map[string]any)
		if !reflect.DeepEqual(rule["scopes"], map[string]any{"path": "/home/a/p/"}) || rule["workdir_scope"] != "selected" ||
			rule["lifetime"] != "900" || rule["expires"] == nil {
			t.Fatalf("rule %v", rule)
		}
	})
	t.Run("zenity", func(t *testing.T) {
		needDialogs(t, "zenity")
		t.Parallel()
		x := startX(t)
		a := startDialog(t, x, "zenity", "write-file.json")
		v := a.waitDialog("zenity", nil)
		v.keys(viewerKeys("zenity", "Allow always…")...)
		r := a.waitDialog("zenity", v)
		r.keys(append(xTabs(2), "Return")...) // « Back
		v = a.waitDialog("zenity", r)
		v.keys(viewerKeys("zenity", "Allow always…")...)
		r = a.waitDialog("zenity", v)
		r.keys(append(xTabs(3), "Return")...) // Change…
		l := a.waitDialog("zenity", r)
		l.keys("Tab", "Tab", "Return") // grants: all, as checked
		l = a.waitDialog("zenity", l)
		l.keys("Down", "Return") // path: the second scope
		l = a.waitDialog("zenity", l)
		l.keys("Tab", "Tab", "Return") // workdir: unchanged
		l = a.waitDialog("zenity", l)
		l.keys("Down", "Down", "Return") // lifetime: the third
		r = a.waitDialog("zenity", l)
		r.keys(append(xTabs(4), "Return")...) // Save rule
		d := a.decision()
		if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "zenity" ||
			!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
			t.Fatalf("want allow always of both grants by the user through zenity; got %v", d)
		}
		rule, _ := d["rule"].(map[string]any)
		if !reflect.DeepEqual(rule["scopes"], map[string]any{"path": "/home/a/p/"}) || rule["workdir_scope"] != "selected" ||
			rule["lifetime"] != "57600" || rule["expires"] == nil {
			t.Fatalf("rule %v", rule)
		}
	})
}

// A dialog killed under askperm is a cancellation.
func TestDialogKilled(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		if err := syscall.Kill(v.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		wantDeny(t, a.decision(), "cancelled", prog)
	})
}

// Escape dismisses yad's dialog: cancelled. zenity's Escape is its Cancel,
// named Deny once: the reason is asked, and Escape there denies without.
func TestDialogEscape(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		v.keys("Escape")
		if prog == "yad" {
			wantDeny(t, a.decision(), "cancelled", prog)
			return
		}
		a.waitDialog(prog, v).keys("Escape")
		d := a.decision()
		wantDeny(t, d, "user", prog)
		if _, ok := d["message"]; ok {
			t.Fatalf("no reason gave a message: %v", d)
		}
	})
}

// Nobody answers: the deadline denies, and no dialog is left behind.
func TestDialogDeadline(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json", "--timeout", "3s")
		v := a.waitDialog(prog, nil)
		wantDeny(t, a.decision(), "timeout", prog)
		v.waitGone()
		if out, err := x.xdotool("search", "--onlyvisible", "--class", prog); err == nil && out != "" {
			t.Fatalf("a %s window is still shown: %s", prog, out)
		}
	})
}

// A display that cannot be opened makes both dialogs unavailable.
func TestDialogNoDisplay(t *testing.T) {
	needDialogs(t, "yad")
	needDialogs(t, "zenity")
	r := runPipe(t, readFile(t, "requests/minimal.json"), baseEnv("DISPLAY=:9999"), "--frontend", "yad,zenity")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr: %s", r.code, r.stderr)
	}
	wantDeny(t, checkDecision(t, r.stdout), "unavailable", "none")
	if !strings.Contains(r.stderr, "cannot open display") {
		t.Errorf("stderr does not say why: %s", r.stderr)
	}
}

// writeConfig writes config.toml with content into a fresh directory and
// returns its path, for --config.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testArmDelay is the arming delay of TestDialogArmingDelay: longer than
// the keys of a dialog take after waitDialog (about 1.5 s).
const testArmDelay = 3 * time.Second

// An allow that comes sooner than the arming delay after the dialog
// appeared is refused and the dialog shown again; an allow after the delay
// counts. So for the choice and for Save rule; a deny counts at once.
func TestDialogArmingDelay(t *testing.T) {
	armed := `arm_delay = "3s"` + "\n"
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		allowOnce := viewerKeys(prog, "Allow once")
		a := startDialog(t, x, prog, "write-file.json", "--config", writeConfig(t, armed))
		v := a.waitDialog(prog, nil)
		v.keys(allowOnce...) // too soon
		v = a.waitDialog(prog, v)
		time.Sleep(testArmDelay)
		v.keys(allowOnce...)
		if d := a.decision(); d["decision"] != "allow" || d["persist"] != "once" || d["cause"] != "user" {
			t.Fatalf("want allow once by the user; got %v", d)
		}

		allowAlways := viewerKeys(prog, "Allow always…")
		save := append(xTabs(map[string]int{"yad": 7, "zenity": 4}[prog]), "Return")
		a = startDialog(t, x, prog, "write-file.json", "--config", writeConfig(t, armed))
		v = a.waitDialog(prog, nil)
		time.Sleep(testArmDelay)
		v.keys(allowAlways...)
		r := a.waitDialog(prog, v)
		r.keys(save...) // too soon
		r = a.waitDialog(prog, r)
		time.Sleep(testArmDelay)
		r.keys(save...)
		if d := a.decision(); d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" {
			t.Fatalf("want allow always by the user; got %v", d)
		}

		a = startDialog(t, x, prog, "write-file.json", "--config", writeConfig(t, armed))
		v = a.waitDialog(prog, nil)
		v.keys(denyOnceKeys[prog]...)
		a.waitDialog(prog, v).keys("Return")
		wantDeny(t, a.decision(), "user", prog)
	})
}

// hostileRequest is write-file.json's shape with every string the caller
// or a model writes replaced by one marked "ZQ" and holding markup,
// escapes, option look-alikes and separators.
func hostileRequest(t *testing.T) []byte {
	evil := []string{`<span size="1">rm</span>`, "--display=:9", "--text=ok", "^x", "@disabled@", `\n\\`, "a!b|c", "\x1f", "_Allow", "é中", "\u202e"}
	n := 0
	s := func() string { n++; return fmt.Sprintf("ZQ%d %s", n, evil[n%len(evil)]) }
	req := map[string]any{
		"server": s(), "tool": s(), "source": s(), "action": s(), "action_description": s(), "reason": s() + "\n" + s(),
		"dimensions": []any{map[string]any{"name": s(), "label": s(), "value": "/ZQ/a/b", "scopes": []any{
			map[string]any{"label": s(), "match": "/ZQ/a/b", "kind": "exact"},
			map[string]any{"label": s(), "match": "/ZQ/a/", "kind": "prefix"},
			map[string]any{"label": s(), "match": "*", "kind": "any"},
		}}},
		"workdir":    map[string]any{"value": "/ZQ/a", "label": s()},
		"grants":     []any{map[string]any{"name": s(), "description": s()}, map[string]any{"name": s(), "description": s()}},
		"details":    []any{map[string]any{"label": s(), "text": s() + "\n" + s()}},
		"arguments":  map[string]any{"x": s()},
		"session_id": s(),
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hugeRequest is a request at the protocol's limits for scopes: 1000
// scopes of 4096-byte labels, marked "ZQ".
func hugeRequest(t *testing.T) []byte {
	var scopes []any
	for i := range 1000 {
		label := fmt.Sprintf("ZQ%04d ", i) + strings.Repeat("scope label ", 341)
		scopes = append(scopes, map[string]any{"label": label[:4096], "match": fmt.Sprintf("/ZQ/%d", i), "kind": "exact"})
	}
	b, err := json.Marshal(map[string]any{"tool": "ZQ tool", "action": "write", "session_id": "ZQ",
		"dimensions": []any{map[string]any{"name": "path", "value": "/ZQ/0", "scopes": scopes}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cmdline is the command line of the dialog on screen, one argument each.
func (d *xWindow) cmdline() []string {
	d.x.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d.pid))
	if err != nil {
		d.x.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// checkArg fails unless the dialog on screen was given each of args.
func (d *xWindow) checkArg(args ...string) {
	d.x.t.Helper()
	have := d.cmdline()
	for _, a := range args {
		if !slices.Contains(have, a) {
			d.x.t.Fatalf("dialog %d lacks %q: %q", d.pid, a, have)
		}
	}
}

// checkCmdline fails if the command line of the dialog on screen (what ps
// shows every local user) holds request text, marked "ZQ".
func (d *xWindow) checkCmdline() {
	d.x.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d.pid))
	if err != nil {
		d.x.t.Fatal(err)
	}
	if i := bytes.Index(b, []byte("ZQ")); i >= 0 || len(b) > 16<<10 {
		d.x.t.Fatalf("dialog %d's command line (%d bytes) holds request text: %q", d.pid, len(b), b[max(0, i-60):min(len(b), i+60)])
	}
}

// While each dialog is on screen, its command line holds no request
// text: every dialog of both programs, for a hostile request and for one
// with 1000 scopes of 4096-byte labels (which no longer fails to start).
// Each step is the keys pressed on one dialog; the last dismisses it.
func TestDialogCmdlineHoldsNoRequestText(t *testing.T) {
	tabs := func(n int) []string { return append(xTabs(n), "Return") }
	walks := []struct {
		name  string
		req   func(*testing.T) []byte
		steps map[string][][]string
	}{
		{"hostile", hostileRequest, map[string][][]string{
			// viewer: Allow always…; rule form: « Back; viewer: Deny always…; reason;
			// deny rule form (no checkbox: the focus starts before its first combo).
			"yad": {tabs(3), tabs(5), tabs(2), {"Return"}, {"Escape"}},
			// viewer: Read again; viewer: Deny always…; reason; rule viewer: « Back;
			// viewer: Allow always…; rule viewer: Change…; grants, scope, workdir,
			// lifetime lists; rule viewer: Deny once; reason: none.
			"zenity": {{"Return"}, tabs(3), {"Return"}, tabs(2), tabs(4), tabs(3), tabs(2), tabs(2), tabs(2), tabs(2), {"Escape"}, {"Escape"}},
		}},
		{"huge", hugeRequest, map[string][][]string{
			"yad":    {tabs(3), {"Escape"}},
			"zenity": {tabs(4), tabs(3), tabs(2), tabs(2), {"Escape"}, {"Escape"}},
		}},
	}
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		for _, w := range walks {
			a := startAskperm(t, x, w.req(t), baseEnv("DISPLAY="+x.Display), "--frontend", prog, "--timeout", "120s", "--max-request", "8MiB")
			var d *xWindow
			for i, keys := range w.steps[prog] {
				t.Logf("%s request, dialog %d", w.name, i+1)
				d = a.waitDialog(prog, d)
				d.checkCmdline()
				d.keys(keys...)
			}
			wantDeny(t, a.decision(), map[string]string{"yad": "cancelled", "zenity": "user"}[prog], prog)
		}
	})
}

// Under an empty environment (only DISPLAY, no locale) both dialogs show
// and answer: askperm runs them under a UTF-8 locale.
func TestDialogWithoutLocale(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startAskperm(t, x, readFile(t, "requests/write-file.json"), []string{"DISPLAY=" + x.Display}, "--frontend", prog)
		v := a.waitDialog(prog, nil)
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", v.pid))
		if err != nil || !bytes.Contains(env, []byte("LC_ALL=C.UTF-8\x00")) {
			t.Errorf("the dialog's environment %q (%v) names no UTF-8 locale", env, err)
		}
		v.keys(viewerKeys(prog, "Allow once")...)
		if d := a.decision(); d["decision"] != "allow" || d["cause"] != "user" || d["frontend"] != prog {
			t.Fatalf("want allow once by the user through %s; got %v", prog, d)
		}
	})
}

// trustedDir is a fresh directory that askperm trusts to hold programs,
// with every directory above it (notifytest.Dir).
func trustedDir(t *testing.T) string { return notifytest.Dir(t) }

// A [dialogs] program anyone else could have written is refused with
// exit 64 naming the config file and the problem, before any request is
// read; a trusted one runs, and one that cannot start passes the request
// on as unavailable.
func TestDialogUntrustedProgram(t *testing.T) {
	base := trustedDir(t)
	prog := func(path string, mode os.FileMode) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mkdir := func(path string, mode os.FileMode) string {
		t.Helper()
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	worldWritable := prog(filepath.Join(base, "world-writable"), 0o777)
	toWorldWritable := filepath.Join(base, "link")
	if err := os.Symlink(worldWritable, toWorldWritable); err != nil {
		t.Fatal(err)
	}
	open := mkdir(filepath.Join(base, "open"), 0o777)
	cases := map[string]struct{ path, want string }{
		"world-writable":          {worldWritable, "group- or world-writable"},
		"group-writable":          {prog(filepath.Join(base, "group-writable"), 0o775), "group- or world-writable"},
		"world-writable dir":      {prog(filepath.Join(open, "yad"), 0o755), "directory " + open + " is writable by others"},
		"sticky world-writable":   {prog(filepath.Join(mkdir(filepath.Join(base, "sticky"), 0o777|os.ModeSticky), "yad"), 0o755), "a sticky bit does not count"},
		"link to world-writable":  {toWorldWritable, "group- or world-writable"},
		"in the system temp dir":  {prog(filepath.Join(t.TempDir(), "yad"), 0o755), "is writable by others"},
		"relative":                {"bin/yad", "not an absolute path"},
		"foreign owner (as root)": {prog(filepath.Join(base, "theirs"), 0o755), "owned by uid 65534"},
	}
	if os.Geteuid() != 0 || os.Lchown(cases["foreign owner (as root)"].path, 65534, 65534) != nil {
		delete(cases, "foreign owner (as root)")
	}
	req := readFile(t, "requests/minimal.json")
	for name, tc := range cases {
		cfg := writeConfig(t, fmt.Sprintf("[dialogs]\nyad = %q\n", tc.path))
		r := runPipe(t, req, baseEnv("DISPLAY=:9999"), "--config", cfg, "--frontend", "yad")
		if r.code != 64 || r.stdout != "" || !strings.Contains(r.stderr, cfg+": dialogs.yad: ") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 64 naming %s and %q", name, r.code, r.stdout, r.stderr, cfg, tc.want)
		}
	}

	trusted := filepath.Join(base, "yad")
	if err := os.Symlink("/usr/bin/yad", trusted); err != nil {
		t.Fatal(err)
	}
	r := runPipe(t, req, baseEnv(), "--config", writeConfig(t, fmt.Sprintf("[dialogs]\nyad = %q\n", trusted)), "--frontend", "yad")
	if r.code != 0 || !strings.Contains(r.stderr, "no display") {
		t.Errorf("a trusted program: exit %d, stderr %q; want 0, the dialog unavailable for want of a display", r.code, r.stderr)
	}
	mute := filepath.Join(base, "false")
	if err := os.Symlink("/bin/false", mute); err != nil {
		t.Fatal(err)
	}
	r = runPipe(t, req, baseEnv("DISPLAY=:9999"), "--config", writeConfig(t, fmt.Sprintf("[dialogs]\nyad = %q\n", mute)), "--frontend", "yad")
	if r.code != 0 || !strings.Contains(r.stderr, "before reading its input") {
		t.Fatalf("a program that cannot start: exit %d, stderr %q", r.code, r.stderr)
	}
	wantDeny(t, checkDecision(t, r.stdout), "unavailable", "none")
}

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The dialogs, for real: askperm runs yad or zenity on a private Xvfb
// display, and xdotool plays the person (security.md section 8): find the
// dialog's window, focus it, type plain keys. The keys were found by
// experiment with yad 0.40.0 and zenity 3.44.0:
//
//	yad viewer      focus in the text; Tab reaches the buttons in order
//	                (Deny once first); Ctrl+Enter is Deny once
//	yad rule form   focus on the first field; Tab through the fields, then
//	                « Back, Save rule, Deny once; space toggles a checkbox,
//	                Down picks a combo's next item
//	zenity viewer   Enter is Deny once (OK); Tab reaches Cancel, Deny once,
//	                then the extra buttons in order
//	zenity list     Down selects the next row (from the first), Enter
//	                confirms; Tab Tab Enter is OK with nothing selected
//	entry (both)    type, then Enter

// xDisplay is a private X server for one test.
type xDisplay struct {
	t       *testing.T
	display string // e.g. ":93"
	server  *exec.Cmd
	stderr  *bytes.Buffer
}

// needDialogs skips the test unless Xvfb, xdotool and the program are
// installed (the CI installs them: xvfb xdotool yad zenity).
func needDialogs(t *testing.T, program string) {
	t.Helper()
	for _, p := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("skipping: %s is not installed (Debian packages xvfb, xdotool, yad, zenity)", p)
		}
	}
	if _, err := os.Stat("/usr/bin/" + program); err != nil {
		t.Skipf("skipping: /usr/bin/%s is not installed (Debian packages xvfb, xdotool, yad, zenity)", program)
	}
}

// startX starts Xvfb on a display number it picks itself (-displayfd), so
// that tests running side by side never collide, and waits until it
// serves clients; a server that dies at once (a display taken after all)
// is replaced.
func startX(t *testing.T) *xDisplay {
	t.Helper()
	var failures []string
	for range 3 {
		x, cmd, err := tryX(t)
		if err == nil {
			t.Cleanup(func() {
				cmd.Process.Signal(syscall.SIGTERM) // it removes its lock and socket
				cmd.Wait()
			})
			return x
		}
		failures = append(failures, err.Error())
	}
	t.Fatalf("Xvfb did not start: %s", strings.Join(failures, "; "))
	return nil
}

func tryX(t *testing.T) (*xDisplay, *exec.Cmd, error) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// -noreset: without it the server resets whenever its last client
	// leaves, and refuses the next dialog while it does.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fail := func(why string) (*xDisplay, *exec.Cmd, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, fmt.Errorf("%s: %s", why, strings.TrimSpace(stderr.String()))
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var n string
	select {
	case n = <-line:
	case <-time.After(10 * time.Second):
		return fail("no display number in time")
	}
	if n == "" {
		return fail("no display number")
	}
	x := &xDisplay{t: t, display: ":" + n, server: cmd, stderr: &stderr}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := x.xdotool("getdisplaygeometry"); err == nil {
			return x, cmd, nil
		}
		if time.Now().After(deadline) {
			return fail("display " + x.display + " serves no client")
		}
	}
}

// xdotool runs xdotool on the display and returns its output.
func (x *xDisplay) xdotool(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = []string{"DISPLAY=" + x.display}
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
	alive := x.server.Process.Signal(syscall.Signal(0)) == nil
	a.t.Fatalf("no new %s window appeared; askperm %s; stderr: %s; windows: %q; Xvfb alive %v: %s", class, state, a.stderr.String(), windows, alive, x.stderr.String())
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
	home := t.TempDir()
	a := &dialogRun{t: t, x: x, done: make(chan error, 1)}
	a.cmd = exec.Command(bin, append([]string{"--frontend", frontend, "--timeout", "60s"}, args...)...)
	a.cmd.Stdin = bytes.NewReader(readFile(t, "requests/"+request))
	a.cmd.Stdout, a.cmd.Stderr = &a.stdout, &a.stderr
	a.cmd.Env = baseEnv("DISPLAY="+x.display, "HOME="+home, "XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config")
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
	select {
	case err := <-a.done:
		if code := exitCode(a.t, err); code != 0 {
			a.t.Fatalf("askperm exited %d; stderr: %s", code, a.stderr.String())
		}
	case <-time.After(30 * time.Second):
		a.cmd.Process.Kill()
		a.t.Fatalf("askperm hung; stderr: %s", a.stderr.String())
	}
	return checkDecision(a.t, a.stdout.String())
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

func TestDialogAllowOnce(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		// Deny once, Deny always…, Allow always…, Allow once (zenity: after Cancel).
		v.keys(append(xTabs(map[string]int{"yad": 4, "zenity": 5}[prog]), "Return")...)
		d := a.decision()
		if d["decision"] != "allow" || d["persist"] != "once" || d["cause"] != "user" || d["frontend"] != prog ||
			!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
			t.Fatalf("want allow once by the user through %s; got %v", prog, d)
		}
	})
}

func TestDialogDenyWithReason(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		v.keys(append(xTabs(map[string]int{"yad": 1, "zenity": 2}[prog]), "Return")...) // Deny once
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
// text has the focus) or denies (zenity: Deny once is OK), and Ctrl+Enter
// denies.
func TestDialogEnterDenies(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		v := a.waitDialog(prog, nil)
		v.keys("Return")
		if prog == "yad" {
			v.keys("ctrl+Return")
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
		// Fields: Grant 1, Grant 2, Dimension 1, Workdir, Lifetime; then « Back.
		r := a.waitDialog("yad", v)
		r.keys("space", "Tab", "Tab", "Down", "Tab", "Tab", "Down", "Tab", "Return")
		v = a.waitDialog("yad", r)
		v.keys("Tab", "Tab", "Tab", "Return")
		r = a.waitDialog("yad", v)            // the values chosen before Back are kept
		r.keys(append(xTabs(6), "Return")...) // Save rule
		d := a.decision()
		if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "yad" ||
			!reflect.DeepEqual(d["grants"], []any{"fs.create"}) {
			t.Fatalf("want allow always of fs.create by the user through yad; got %v", d)
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
		v.keys(append(xTabs(4), "Return")...) // Allow always…
		r := a.waitDialog("zenity", v)
		r.keys(append(xTabs(3), "Return")...) // « Back
		v = a.waitDialog("zenity", r)
		v.keys(append(xTabs(4), "Return")...)
		r = a.waitDialog("zenity", v)
		r.keys(append(xTabs(4), "Return")...) // Change…
		l := a.waitDialog("zenity", r)
		l.keys("Tab", "Tab", "Return") // grants: all, as checked
		l = a.waitDialog("zenity", l)
		l.keys("Down", "Return") // path: the second scope
		l = a.waitDialog("zenity", l)
		l.keys("Tab", "Tab", "Return") // workdir: unchanged
		l = a.waitDialog("zenity", l)
		l.keys("Down", "Down", "Return") // lifetime: the third
		r = a.waitDialog("zenity", l)
		r.keys(append(xTabs(5), "Return")...) // Save rule
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

// Escape dismisses a dialog: cancelled.
func TestDialogEscape(t *testing.T) {
	forEachDialog(t, func(t *testing.T, prog string, x *xDisplay) {
		a := startDialog(t, x, prog, "write-file.json")
		a.waitDialog(prog, nil).keys("Escape")
		wantDeny(t, a.decision(), "cancelled", prog)
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

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// tuiArmWait outlasts the terminal UI's default 500 ms arming delay, during
// which every key but Ctrl-C is discarded.
const tuiArmWait = 600 * time.Millisecond

// tuiEnv is the environment of a terminal UI run: a full-screen terminal,
// and no state or configuration of the user running the tests.
func tuiEnv(t testing.TB) []string {
	dir := t.TempDir()
	return baseEnv("TERM=xterm-256color", "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir)
}

// startTUI runs askperm's terminal UI on an 80x24 pty; later flags
// override earlier ones.
func startTUI(t *testing.T, request string, args ...string) *ptySession {
	t.Helper()
	args = append([]string{"--frontend", "tui", "--timeout", "20s"}, args...)
	return startPTY(t, readFile(t, "requests/"+request), tuiEnv(t), args...)
}

// tuiDecision waits for askperm to exit with want and returns its decision.
func tuiDecision(t *testing.T, s *ptySession, want int) map[string]any {
	t.Helper()
	r := s.wait()
	if r.code != want {
		t.Fatalf("exit %d, want %d; stderr: %s\ntranscript:\n%s", r.code, want, r.stderr, s.text())
	}
	return checkDecision(t, r.stdout)
}

// tuiShown waits until the stage has been drawn n times and for the
// arming delay, after which its keys count.
func tuiShown(s *ptySession, text string, n int) {
	s.t.Helper()
	s.waitForCount(text, n)
	time.Sleep(tuiArmWait)
}

// tuiKey types keys after a pause and waits for what they show: the
// terminal UI handles keys as they come, so the next must not arrive
// before this one showed, and a key that comes sooner than the arming
// delay after the one before is typing.
func tuiKey(s *ptySession, keys, shows string) {
	s.t.Helper()
	n := strings.Count(s.text(), shows)
	time.Sleep(tuiArmWait)
	s.send(keys)
	s.waitForCount(shows, n+1)
}

// tuiChoose moves the choice list's cursor up from Deny once, where each
// pass of stage choice starts unless Back brought another choice, to label.
func tuiChoose(s *ptySession, label string) {
	s.t.Helper()
	var offered []string // "Allow for this session" only with session memory
	for _, c := range []string{"Allow for this session", "Allow once", "Allow always…", "Deny always…", "Deny once"} {
		if strings.Contains(s.text(), c) {
			offered = append(offered, c)
		}
	}
	i := slices.Index(offered, label)
	if i < 0 {
		s.t.Fatalf("%q is not on offer:\n%s", label, s.text())
	}
	n := strings.Count(s.text(), "> "+label)
	for range len(offered) - 1 - i {
		tuiKey(s, tuiUp, "> ")
	}
	s.waitForCount("> "+label, n+1)
	time.Sleep(tuiArmWait) // Enter confirms an allow only after a pause
}

// Keys.
const (
	tuiUp    = "\x1b[A"
	tuiDown  = "\x1b[B"
	tuiEnter = "\r"
)

func TestTUIAllowOnce(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	s.waitFor("askperm — an agent asks for permission")
	s.waitFor("Tool: write_file (from engine:1)")
	tuiChoose(s, "Allow once")
	s.send(tuiEnter)
	d := tuiDecision(t, s, 0)
	if d["decision"] != "allow" || d["persist"] != "once" || d["cause"] != "user" || d["frontend"] != "tui" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
		t.Fatalf("want allow once of both grants by the user in the terminal UI; got %v", d)
	}
}

func TestTUIDenyOnceWithReason(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	tuiKey(s, tuiEnter, "Denial reason (optional)")
	tuiKey(s, "not now", "not now")
	s.send(tuiEnter)
	d := tuiDecision(t, s, 0)
	wantDeny(t, d, "user", "tui")
	if d["message"] != "not now" {
		t.Fatalf("message = %v, want the typed reason", d["message"])
	}
}

func TestTUIAllowAlwaysNarrowed(t *testing.T) {
	start := time.Now()
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	tuiChoose(s, "Allow always…")
	s.send(tuiEnter)
	tuiShown(s, "Rule to save: allow write_file", 1)
	tuiKey(s, " ", "[ ] fs.write")
	tuiKey(s, tuiEnter, "┃ Which File [path] the rule covers")
	tuiKey(s, tuiDown, `> files under /home/a/p/: anything under "/home/a/p/"`)
	tuiKey(s, tuiEnter, "┃ Workdir")
	tuiKey(s, tuiDown, "> in any workdir")
	tuiKey(s, tuiEnter, "┃ Lifetime")
	tuiKey(s, tuiDown, "> for 15 minutes")
	tuiKey(s, tuiEnter, "┃ Allow always… with the rule above?")
	s.waitFor("for 15 minutes")
	time.Sleep(tuiArmWait) // Save rule of an allow counts only after a pause
	s.send(tuiEnter)
	d := tuiDecision(t, s, 0)
	if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "tui" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) { // fs.create implies fs.write
		t.Fatalf("want allow always of fs.create by the user; got %v", d)
	}
	rule, _ := d["rule"].(map[string]any)
	if !reflect.DeepEqual(rule["scopes"], map[string]any{"path": "/home/a/p/"}) ||
		rule["workdir_scope"] != "all" || rule["lifetime"] != "900" {
		t.Fatalf("rule = %v", rule)
	}
	expires, _ := rule["expires"].(float64)
	if lo, hi := float64(start.Unix()), float64(time.Now().Unix()+900+60); expires < lo || expires > hi {
		t.Fatalf("expires %v, want within [%v, %v]", expires, lo, hi)
	}
}

func TestTUIDenyAlways(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	tuiChoose(s, "Deny always…")
	tuiKey(s, tuiEnter, "Denial reason (optional)")
	s.send(tuiEnter)
	// Keys within a stage's arming delay never act, a deny's included.
	tuiShown(s, "Rule to save: deny write_file", 1)
	tuiKey(s, tuiEnter, "┃ Workdir")
	tuiKey(s, tuiEnter, "┃ Lifetime")
	tuiKey(s, tuiEnter, "┃ Deny always… with the rule above?")
	s.send(tuiEnter)
	d := tuiDecision(t, s, 0)
	if d["decision"] != "deny" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "tui" {
		t.Fatalf("want deny always by the user; got %v", d)
	}
	want := map[string]any{"scopes": map[string]any{"path": "/home/a/p/report.md"}, "workdir_scope": "selected", "lifetime": "indefinite"}
	if !reflect.DeepEqual(d["rule"], want) {
		t.Fatalf("rule = %v, want %v", d["rule"], want)
	}
	if strings.Contains(s.text(), "Grants the rule gives") {
		t.Errorf("asked about grants for a deny:\n%s", s.text())
	}
}

// TestTUIBackAndForward: Back returns to the choice keeping the reason and
// the scope chosen so far.
func TestTUIBackAndForward(t *testing.T) {
	s := startTUI(t, "run-command.json")
	tuiShown(s, "Your decision", 1)
	tuiChoose(s, "Deny always…")
	tuiKey(s, tuiEnter, "Denial reason (optional)")
	tuiKey(s, "too broad", "too broad")
	s.send(tuiEnter)
	tuiShown(s, "Rule to save: deny run_command", 1)
	s.waitFor(`host: this host: exactly "localhost" (the only scope offered)`)
	tuiKey(s, tuiDown, "> commands starting with 'go test'")
	tuiKey(s, tuiEnter, "┃ Lifetime")
	tuiKey(s, tuiEnter, "┃ Deny always… with the rule above?")
	tuiKey(s, tuiDown, "> « Back")
	s.send(tuiEnter)

	tuiShown(s, "Your decision", 2)
	tuiKey(s, tuiEnter, "too broad")
	s.send(tuiEnter)
	tuiShown(s, "Rule to save: deny run_command", 2)
	tuiKey(s, tuiEnter, "┃ Lifetime")
	tuiKey(s, tuiEnter, "┃ Deny always… with the rule above?")
	s.send(tuiEnter)
	d := tuiDecision(t, s, 0)
	if d["decision"] != "deny" || d["persist"] != "always" || d["message"] != "too broad" {
		t.Fatalf("want deny always with the kept reason; got %v", d)
	}
	rule, _ := d["rule"].(map[string]any)
	if !reflect.DeepEqual(rule["scopes"], map[string]any{"command": "go test", "host": "localhost"}) {
		t.Fatalf("rule = %v, want the scope chosen before going back", rule)
	}
}

func TestTUITimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"plain", nil, 0},
		{"exit status", []string{"--exit-status"}, 124},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTUI(t, "write-file.json", append([]string{"--timeout", "2s"}, tc.args...)...)
			s.waitFor("Your decision")
			wantDeny(t, tuiDecision(t, s, tc.code), "timeout", "tui")
		})
	}
}

// TestTUICancelled: Ctrl-C and Esc (keys in raw mode), SIGINT, SIGTERM and
// SIGHUP each deny as cancelled, with the terminal restored.
func TestTUICancelled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel func(*ptySession)
		args   []string
		code   int
	}{
		{"ctrl-c", func(s *ptySession) { s.send("\x03") }, nil, 0},
		{"ctrl-c exit status", func(s *ptySession) { s.send("\x03") }, []string{"--exit-status"}, 130},
		{"esc", func(s *ptySession) { s.send("\x1b") }, []string{"--exit-status"}, 130},
		{"SIGINT", func(s *ptySession) { s.signal(syscall.SIGINT) }, []string{"--exit-status"}, 130},
		{"SIGTERM", func(s *ptySession) { s.signal(syscall.SIGTERM) }, nil, 0},
		{"SIGHUP", func(s *ptySession) { s.signal(syscall.SIGHUP) }, []string{"--exit-status"}, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTUI(t, "write-file.json", tc.args...)
			tuiShown(s, "Your decision", 1)
			tc.cancel(s)
			wantDeny(t, tuiDecision(t, s, tc.code), "cancelled", "tui")
		})
	}
}

// TestTUICtrlZIgnored: Ctrl-Z does not suspend an open prompt.
func TestTUICtrlZIgnored(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	s.send("\x1a")
	time.Sleep(100 * time.Millisecond)
	tuiKey(s, tuiEnter, "Denial reason (optional)")
	s.send(tuiEnter)
	wantDeny(t, tuiDecision(t, s, 0), "user", "tui")
}

// TestTUIHangup: the terminal going away (its master side closed) denies
// as cancelled, on the controlling terminal (which also sends SIGHUP) and
// on a --tty that is not (which does not).
func TestTUIHangup(t *testing.T) {
	skipSlow(t)
	t.Run("controlling terminal", func(t *testing.T) {
		s := startTUI(t, "write-file.json")
		s.waitFor("Your decision")
		// A blocking read on the master holds it open until the next
		// frame; the countdown draws one every second.
		s.ptm.Close()
		wantDeny(t, tuiExit(t, s.done, &s.stdout, &s.stderr, 0), "cancelled", "tui")
	})
	t.Run("--tty", func(t *testing.T) {
		ptm, pts, err := pty.Open()
		if err != nil {
			t.Skip("no pty:", err)
		}
		defer pts.Close()
		if err := pty.Setsize(ptm, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--frontend", "tui", "--timeout", "20s", "--tty", pts.Name())
		cmd.Stdin = strings.NewReader(string(readFile(t, "requests/write-file.json")))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Env = tuiEnv(t)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		screen := make(chan string, 1)
		go func() {
			var out []byte
			buf := make([]byte, 4096)
			for {
				n, err := ptm.Read(buf)
				out = append(out, buf[:n]...)
				if err != nil || strings.Contains(ansi.Strip(string(out)), "Your decision") {
					screen <- string(out)
					return
				}
			}
		}()
		select {
		case <-screen:
		case <-time.After(10 * time.Second):
			t.Fatalf("no prompt on --tty; stderr: %s", stderr.String())
		}
		ptm.Close() // no read pending: closes at once
		wantDeny(t, tuiExit(t, done, &stdout, &stderr, 0), "cancelled", "tui")
	})
}

// tuiExit waits for a run whose terminal is gone (so its settings cannot
// be compared) and returns its decision.
func tuiExit(t *testing.T, done <-chan error, stdout, stderr interface{ String() string }, want int) map[string]any {
	t.Helper()
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("askperm hung after the terminal went away; stderr: %s", stderr.String())
	}
	if code := exitCode(t, err); code != want {
		t.Fatalf("exit %d, want %d; stderr: %s", code, want, stderr.String())
	}
	return checkDecision(t, stdout.String())
}

// TestTUITypeahead: keys typed before the prompt appeared, or during the
// arming delay, never approve.
func TestTUITypeahead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		early func(*ptySession)
	}{
		{"before the prompt", func(s *ptySession) { s.send(tuiUp + tuiUp + tuiUp + tuiEnter + tuiEnter) }},
		{"during the arming delay", func(s *ptySession) {
			s.waitFor("Your decision")
			s.send(tuiUp + tuiUp + tuiUp + tuiEnter + tuiEnter)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTUI(t, "write-file.json")
			tc.early(s)
			tuiShown(s, "Your decision", 1)
			s.send("\x03") // if still asking
			d := tuiDecision(t, s, 0)
			if d["decision"] != "deny" {
				t.Fatalf("typeahead decided %v", d)
			}
		})
	}
}

// TestTUIHostile: none of the request's control sequences reaches the
// terminal, on any page of the request.
func TestTUIHostile(t *testing.T) {
	s := startTUI(t, "hostile.json")
	tuiShown(s, "Your decision", 1)
	s.waitFor("WARNING: This request contains hidden or reordering characters")
	s.waitFor(`write_file\r\e[1Als -la`)
	for range 4 {
		s.send("\x1b[6~") // PgDn
		time.Sleep(50 * time.Millisecond)
	}
	s.waitFor(`│ - bad\r+ \e[32mhidden\e[0m`)
	s.send("\x03")
	wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
	raw := s.raw()
	for _, bad := range []string{"\x1b]0;", "\x1b]52", "\x1b]8;;", "\x9b", "\u202e", "fs\x1b[2J", "\x1b[6n", "\x1b[8m", "\r\x1b[1Als", "\x07"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the terminal got %q from the request", bad)
		}
	}
}

// TestTUIResize: a terminal too small for the prompt shows only how big it
// must be and takes no answer; the prompt comes back when it grows.
func TestTUIResize(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	if err := pty.Setsize(s.ptm, &pty.Winsize{Rows: 10, Cols: 30}); err != nil {
		t.Fatal(err)
	}
	s.waitFor("terminal too small")
	s.send(tuiEnter + tuiEnter)
	time.Sleep(100 * time.Millisecond)
	if err := pty.Setsize(s.ptm, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	s.waitForCount("Your decision", 2)
	s.send("\x03")
	wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
}

// TestTUINoColor: with NO_COLOR the terminal gets no styling at all.
func TestTUINoColor(t *testing.T) {
	s := startPTY(t, readFile(t, "requests/write-file.json"), append(tuiEnv(t), "NO_COLOR=1"),
		"--frontend", "tui", "--timeout", "20s")
	tuiShown(s, "Your decision", 1)
	s.send("\x03")
	wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
	if sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`).FindString(s.raw()); sgr != "" {
		t.Fatalf("styled output %q despite NO_COLOR", sgr)
	}
}

// tuiCountdown matches the time left shown in the header.
var tuiCountdown = regexp.MustCompile(`\d+:\d\d left`)

// TestCallerGoneEndsThePrompt: when the caller closes its end of stdout
// (it died), nobody can read a decision, so the prompt is taken down at
// once and the terminal restored, instead of waiting for the deadline.
func TestCallerGoneEndsThePrompt(t *testing.T) {
	s := preparePTY(t, readFile(t, "requests/write-file.json"), baseEnv("TERM=xterm-256color"), "--frontend", "tui", "--timeout", "60s")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = pw
	s.start()
	pw.Close()
	s.waitFor("Deny once")
	pr.Close()
	select {
	case <-s.done: // exit or SIGPIPE on the decision's write: either is a deny
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt outlived its caller")
	}
	after, err := unix.IoctlGetTermios(int(s.pts.Fd()), unix.TCGETS)
	if err != nil || !reflect.DeepEqual(s.before, after) {
		t.Errorf("terminal settings changed: %v", err)
	}
}

// tuiRequest is write-file.json as change leaves it.
func tuiRequest(t *testing.T, change func(req map[string]any)) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(readFile(t, "requests/write-file.json"), &req); err != nil {
		t.Fatal(err)
	}
	change(req)
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tuiLargeRequest is write-file.json with a thousand scopes whose labels
// come near the protocol's 4096 bytes.
func tuiLargeRequest(t *testing.T) []byte {
	return tuiRequest(t, func(req map[string]any) {
		scopes := make([]any, 1000)
		for i := range scopes {
			scopes[i] = map[string]any{"label": fmt.Sprintf("scope %04d %s", i, strings.Repeat("long label ", 370)),
				"match": fmt.Sprintf("/home/a/p/%04d/", i), "kind": "prefix"}
		}
		req["dimensions"].([]any)[0].(map[string]any)["scopes"] = scopes
	})
}

// TestTUIEarlyKeysDiscarded: keys that arrive before a stage's question
// has been on the terminal for the arming delay never act, in either
// stage, whenever they are processed: typed before the prompt, with its
// first frame, with the Enter that opens the rule stage of a request of a
// thousand long scopes, and with that stage's first frame.
func TestTUIEarlyKeysDiscarded(t *testing.T) {
	s := startPTY(t, tuiLargeRequest(t), tuiEnv(t), "--frontend", "tui", "--timeout", "30s", "--max-request", "8MiB")
	s.send(tuiUp + tuiUp + tuiEnter)
	s.waitFor("Your decision")
	s.send(tuiUp + tuiUp + tuiUp + tuiEnter + tuiEnter)
	tuiShown(s, "Your decision", 1)
	if strings.Contains(s.text(), "Denial reason") {
		t.Fatalf("an early Enter acted:\n%s", s.text())
	}
	tuiChoose(s, "Allow always…")
	s.send(strings.Repeat(tuiEnter, 6))
	s.waitFor("Rule to save: allow write_file")
	s.send(strings.Repeat(tuiEnter, 6))
	time.Sleep(tuiArmWait)
	s.send("\x03")
	wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
}

// TestTUITypingForAnotherProgram: only askperm's keys act. A line typed
// for another program, Enter included, typed twice, is typing: it leaves
// the choice on Deny once, its Enter discarded, and decides nothing. No
// letter jumps to an option, no "/" filters the list.
func TestTUITypingForAnotherProgram(t *testing.T) {
	var printable strings.Builder
	for c := byte(0x20); c < 0x7f; c++ {
		printable.WriteByte(c)
	}
	for _, line := range []string{"git status", "/allow o", "g", "G", "jjjj", "kkk", "yes", printable.String()} {
		t.Run(line, func(t *testing.T) {
			s := startTUI(t, "write-file.json")
			tuiShown(s, "Your decision", 1)
			s.send(line + tuiEnter + line + tuiEnter)
			time.Sleep(tuiArmWait)
			tuiKey(s, tuiEnter, "Denial reason (optional)") // the focus is on Deny once
			s.send(tuiEnter)
			d := tuiDecision(t, s, 0)
			wantDeny(t, d, "user", "tui")
			if _, ok := d["message"]; ok {
				t.Fatalf("message %q: a line typed became the reason", d["message"])
			}
		})
	}
}

// TestTUIDownFromDenyOnce: the choice list does not wrap around; Down on
// Deny once, the last choice, never reaches an allow.
func TestTUIDownFromDenyOnce(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	for range 3 {
		s.send(tuiDown)
		time.Sleep(50 * time.Millisecond)
	}
	tuiKey(s, tuiEnter, "Denial reason (optional)")
	s.send(tuiEnter)
	wantDeny(t, tuiDecision(t, s, 0), "user", "tui")
}

// TestTUIZeroSizeTerminal: a terminal that reports no rows and no
// columns gets no full-screen UI; the chain falls to the line prompt,
// which answers.
func TestTUIZeroSizeTerminal(t *testing.T) {
	s := preparePTY(t, readFile(t, "requests/write-file.json"), tuiEnv(t), "--timeout", "20s")
	if err := pty.Setsize(s.ptm, &pty.Winsize{Rows: 0, Cols: 0}); err != nil {
		t.Fatal(err)
	}
	s.start()
	s.waitFor("Answer [")
	time.Sleep(tuiArmWait)
	s.send("y\r")
	d := tuiDecision(t, s, 0)
	if d["decision"] != "allow" || d["frontend"] != "line" {
		t.Fatalf("want allow by the line prompt; got %v", d)
	}
	if strings.Contains(s.text(), "Your decision") {
		t.Fatalf("the full-screen UI drew on a terminal of no size:\n%s", s.text())
	}
}

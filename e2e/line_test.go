package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// lineArmWait outlasts the line prompt's default 500 ms arming delay.
const lineArmWait = 600 * time.Millisecond

// startLine runs askperm's line prompt on a TERM=dumb pty; later flags
// override earlier ones.
func startLine(t *testing.T, request string, args ...string) *ptySession {
	t.Helper()
	args = append([]string{"--frontend", "line", "--timeout", "20s"}, args...)
	return startPTY(t, readFile(t, "requests/"+request), baseEnv("TERM=dumb"), args...)
}

// lineAnswer waits until prompt has been shown n times, waits out the
// arming delay, then types line and Enter.
func lineAnswer(s *ptySession, prompt string, n int, line string) {
	s.t.Helper()
	s.waitForCount(prompt, n)
	time.Sleep(lineArmWait)
	s.send(line + "\r")
}

// writeFileHeadline is the question of requests/write-file.json in one
// line.
const writeFileHeadline = "write_file (fs-default) wants to write /home/a/p/report.md"

// lineClosing waits for the closing line of write-file.json's prompt
// saying what, on a line of its own, laid out by askperm (its continuation
// indented), and checks that nothing but the terminal's echo follows.
func lineClosing(s *ptySession, what string) {
	s.t.Helper()
	want := "\r\naskperm: " + what + ": " + writeFileHeadline + "\r\n"
	deadline := time.Now().Add(10 * time.Second)
	for {
		text := strings.ReplaceAll(s.text(), "\r\n    ", " ")
		if i := strings.Index(text, want); i >= 0 {
			if rest := text[i+len(want):]; rest != "" {
				s.t.Errorf("the closing line is not the last: %q follows", rest)
			}
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for the closing line %q; transcript:\n%s", want, s.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lineDecision waits for askperm to exit with want and returns its decision.
func lineDecision(t *testing.T, s *ptySession, want int) map[string]any {
	t.Helper()
	r := s.wait()
	if r.code != want {
		t.Fatalf("exit %d, want %d; stderr: %s\ntranscript:\n%s", r.code, want, r.stderr, s.text())
	}
	return checkDecision(t, r.stdout)
}

func TestLineAllowOnce(t *testing.T) {
	s := startLine(t, "write-file.json")
	s.waitFor("Tool: write_file (from engine:1)")
	lineAnswer(s, "Answer [y/a/d/n/m/?] (", 1, "y")
	d := lineDecision(t, s, 0)
	if d["decision"] != "allow" || d["persist"] != "once" || d["cause"] != "user" || d["frontend"] != "line" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
		t.Fatalf("want allow once of both grants by the user on the line prompt; got %v", d)
	}
	lineClosing(s, "allowed once")
}

func TestLineDenyOnceWithReason(t *testing.T) {
	s := startLine(t, "write-file.json")
	lineAnswer(s, "Answer [", 1, "m")
	lineAnswer(s, "Denial reason (Enter alone clears it) (", 1, "not today")
	s.waitFor("Denial reason: not today")
	lineAnswer(s, "Answer [", 2, "n")
	d := lineDecision(t, s, 0)
	wantDeny(t, d, "user", "line")
	if d["message"] != "not today" {
		t.Fatalf("message = %v, want the typed reason", d["message"])
	}
}

// TestLineAllowAlwaysNarrowed runs on a terminal 200 columns wide: the
// prompt wraps at the terminal's width, and the rule sentence matched below
// is 150 characters (TestLineRuleWrapped shows it wrapped at 80).
func TestLineAllowAlwaysNarrowed(t *testing.T) {
	start := time.Now()
	s := startLineOn(t, 200, readFile(t, "requests/write-file.json"))
	lineAnswer(s, "Answer [", 1, "a")
	lineAnswer(s, "Grants [1-2] (", 1, "2")
	lineAnswer(s, "Scope [1-3] (", 1, "2")
	lineAnswer(s, "Workdir [1-2] (", 1, "2")
	lineAnswer(s, "Lifetime [1-3] (", 1, "2")
	s.waitFor(`Rule: allow write_file, with File [path] anything under "/home/a/p/", in any workdir, granting fs.create, fs.write (implied by fs.create), for 15 minutes`)
	lineAnswer(s, "Save this rule? ", 1, "save")
	d := lineDecision(t, s, 0)
	end := time.Now()
	if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "line" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) { // fs.create implies fs.write
		t.Fatalf("want allow always of fs.create; got %v", d)
	}
	rule, _ := d["rule"].(map[string]any)
	if !reflect.DeepEqual(rule["scopes"], map[string]any{"path": "/home/a/p/"}) || rule["workdir_scope"] != "all" || rule["lifetime"] != "900" {
		t.Fatalf("rule = %v", rule)
	}
	exp, _ := rule["expires"].(float64)
	if lo, hi := start.Unix()+900, end.Unix()+900; int64(exp) < lo || int64(exp) > hi {
		t.Fatalf("expires = %v, want within [%d, %d]", rule["expires"], lo, hi)
	}
}

func TestLineDenyAlways(t *testing.T) {
	s := startLine(t, "run-command.json")
	lineAnswer(s, "Answer [", 1, "d")
	lineAnswer(s, "Scope [1-2] (", 1, "2")
	lineAnswer(s, "Lifetime [1-3] (", 1, "")
	lineAnswer(s, "Save this rule? ", 1, "save")
	d := lineDecision(t, s, 0)
	if d["decision"] != "deny" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "line" {
		t.Fatalf("want deny always by the user; got %v", d)
	}
	want := map[string]any{"scopes": map[string]any{"command": "go test", "host": "localhost"}, "lifetime": "indefinite"}
	if !reflect.DeepEqual(d["rule"], want) {
		t.Fatalf("rule = %v, want %v", d["rule"], want)
	}
	if strings.Contains(s.text(), "Grants [") || strings.Contains(s.text(), "Workdir [") {
		t.Errorf("asked about grants or workdirs the request does not have:\n%s", s.text())
	}
}

// TestLineBackAndForward: b returns to the choice keeping the reason and
// the rule answers typed so far.
func TestLineBackAndForward(t *testing.T) {
	s := startLine(t, "write-file.json")
	lineAnswer(s, "Answer [", 1, "m")
	lineAnswer(s, "Denial reason (Enter alone clears it) (", 1, "why")
	lineAnswer(s, "Answer [", 2, "a")
	lineAnswer(s, "Grants [1-2] (", 1, "")
	lineAnswer(s, "Scope [1-3] (", 1, "3")
	lineAnswer(s, "Workdir [1-2] (", 1, "b")
	lineAnswer(s, "Answer [", 3, "d")
	s.waitForCount("3. [x] any file: any value", 1)
	lineAnswer(s, "Scope [1-3] (", 2, "")
	lineAnswer(s, "Workdir [1-2] (", 2, "")
	lineAnswer(s, "Lifetime [1-3] (", 1, "")
	lineAnswer(s, "Save this rule? ", 1, "save")
	d := lineDecision(t, s, 0)
	if d["decision"] != "deny" || d["persist"] != "always" || d["message"] != "why" {
		t.Fatalf("want deny always with the kept reason; got %v", d)
	}
	rule, _ := d["rule"].(map[string]any)
	if !reflect.DeepEqual(rule["scopes"], map[string]any{"path": "*"}) || rule["workdir_scope"] != "selected" {
		t.Fatalf("rule = %v, want the scope chosen before going back", rule)
	}
}

func TestLineTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"plain", nil, 0},
		{"exit status", []string{"--exit-status"}, 124},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startLine(t, "write-file.json", append([]string{"--timeout", "2s"}, tc.args...)...)
			s.waitFor("Answer [")
			wantDeny(t, lineDecision(t, s, tc.code), "timeout", "line")
			lineClosing(s, "denied: timed out")
		})
	}
}

// TestLineCancelled: Ctrl-C (SIGINT from the terminal), Ctrl-D at the
// start of a line, SIGTERM and SIGHUP each deny as cancelled.
func TestLineCancelled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel func(*ptySession)
		args   []string
		code   int
	}{
		{"ctrl-c", func(s *ptySession) { s.send("\x03") }, nil, 0},
		{"ctrl-c exit status", func(s *ptySession) { s.send("\x03") }, []string{"--exit-status"}, 130},
		{"ctrl-d", func(s *ptySession) { s.send("\x04") }, []string{"--exit-status"}, 130},
		{"SIGTERM", func(s *ptySession) { s.signal(syscall.SIGTERM) }, []string{"--exit-status"}, 130},
		{"SIGHUP", func(s *ptySession) { s.signal(syscall.SIGHUP) }, []string{"--exit-status"}, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startLine(t, "write-file.json", tc.args...)
			s.waitFor("Answer [")
			time.Sleep(lineArmWait)
			tc.cancel(s)
			wantDeny(t, lineDecision(t, s, tc.code), "cancelled", "line")
			lineClosing(s, "denied: cancelled")
		})
	}
}

// TestLineCtrlZIgnored: Ctrl-Z does not suspend an open prompt. askperm
// runs as a job of an interactive bash on the pty, in the terminal's
// foreground process group, as when a person starts it from a shell: a
// session leader's own group is orphaned, and there the kernel drops
// Ctrl-Z whatever askperm does.
func TestLineCtrlZIgnored(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash: the job-control shell this test runs askperm from")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "req.json"), readFile(t, "requests/write-file.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := preparePTY(t, nil, baseEnv("TERM=dumb", "PS1=$ ", "HISTFILE="), "--norc", "--noprofile", "--noediting", "-i")
	s.cmd.Path, s.cmd.Args[0] = bash, bash
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = s.pts, s.pts, s.pts
	s.start()
	s.send(fmt.Sprintf("cd %q && %q --frontend line --timeout 20s <req.json >out.json 2>err.txt; echo exit''=$?.\r", dir, bin))
	s.waitFor("Answer [")
	time.Sleep(lineArmWait)
	s.send("\x1a")
	time.Sleep(100 * time.Millisecond)
	s.send("n\r")
	s.waitFor("exit=") // not in the echo of the command line
	if !strings.Contains(s.text(), "exit=0.") {
		t.Fatalf("askperm did not answer; transcript:\n%s", s.text())
	}
	out, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantDeny(t, checkDecision(t, string(out)), "user", "line")
	s.send("exit\r")
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("bash did not exit; transcript:\n%s", s.text())
	}
}

// TestLineTypeahead: an allow typed before the question was ready, or
// pasted together with other lines, never decides.
func TestLineTypeahead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		early  func(*ptySession)
		notice string
	}{
		{"before the prompt", func(s *ptySession) { s.send("y\r") }, ""},
		{"during the arming delay", func(s *ptySession) {
			s.waitFor("Answer [")
			s.send("y\r")
		}, "askperm: ignored what was typed before the question was ready."},
		{"pasted lines", func(s *ptySession) {
			s.waitFor("Answer [")
			time.Sleep(lineArmWait)
			s.send("y\ry\r")
		}, "askperm: ignored input that arrived all at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startLine(t, "write-file.json")
			tc.early(s)
			n := 1
			if tc.notice != "" {
				s.waitFor(tc.notice)
				n = 2
			}
			lineAnswer(s, "Answer [", n, "n")
			wantDeny(t, lineDecision(t, s, 0), "user", "line")
		})
	}
}

// TestLineHostilePlain: whatever the request holds, the line prompt writes
// no escape sequence and no control character but newline (the terminal
// turns it into CR LF).
func TestLineHostilePlain(t *testing.T) {
	s := startLine(t, "hostile.json")
	s.waitFor(`Tool: write_file\r\e[1Als -la`)
	lineAnswer(s, "Answer [", 1, "n")
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
	raw := s.raw()
	if !utf8.ValidString(raw) {
		t.Fatalf("transcript is not valid UTF-8: %q", raw)
	}
	for i, r := range strings.ReplaceAll(raw, "\r\n", "\n") {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r == '\u202e' {
			t.Fatalf("transcript holds %U at %d:\n%q", r, i, raw)
		}
	}
	s.waitFor("WARNING: This request contains hidden or reordering characters")
}

// TestLineDefaultChain: with TERM=dumb and no --frontend the line prompt
// asks (the terminal UI reports itself unavailable there).
func TestLineDefaultChain(t *testing.T) {
	s := startPTY(t, readFile(t, "requests/write-file.json"), baseEnv("TERM=dumb"), "--timeout", "20s")
	lineAnswer(s, "Answer [", 1, "y")
	d := lineDecision(t, s, 0)
	if d["decision"] != "allow" || d["frontend"] != "line" {
		t.Fatalf("want allow by the line prompt; got %v", d)
	}
}

// startLineOn runs the line prompt on a TERM=dumb pty cols columns wide,
// with req as the request.
func startLineOn(t *testing.T, cols uint16, req []byte, args ...string) *ptySession {
	t.Helper()
	s := preparePTY(t, req, baseEnv("TERM=dumb"), append([]string{"--frontend", "line", "--timeout", "20s"}, args...)...)
	if err := pty.Setsize(s.ptm, &pty.Winsize{Rows: 24, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	s.start()
	return s
}

// lineFakes are lines of askperm's that request text tries to start a
// screen row with; each ends in a word askperm never writes.
var lineFakes = []string{
	"Tool: rm -rf ~ PWNED",
	"Answer [y/a/d/n/m/?] (20s left): y PWNED",
	"askperm: allowed once: PWNED",
	"Request: rm -rf ~ PWNED",
	"Key facts: PWNED",
	"  y  Allow once PWNED",
	"Server: trusted PWNED",
}

// hostileLineRequest is a request whose text tries to put lineFakes at the
// start of a row of a terminal cols wide: behind fills of every length
// around the width (spaces, tabs, letters, wide characters), in the
// reason, a detail, the tool, dimension values, grants and the title.
func hostileLineRequest(t *testing.T, cols int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(cols), 2))
	fake := func() string { return lineFakes[rng.IntN(len(lineFakes))] }
	fills := []func(n int) string{
		func(n int) string { return "w" + strings.Repeat(" ", max(0, n-1)) },
		func(n int) string { return strings.Repeat("x", n) },
		func(n int) string { return strings.Repeat("ab ", n/3) + strings.Repeat("c", n%3) },
		func(n int) string { return strings.Repeat("一", n/2) + strings.Repeat("z", n%2) },
		func(n int) string { return "t" + strings.Repeat("\t", n/8) },
	}
	var text []string
	for n := max(1, cols-24); n <= cols+2; n++ {
		text = append(text, fills[n%len(fills)](n)+fake())
	}
	var dims []map[string]any
	for i := range 6 {
		n := max(1, cols-30+5*i)
		dims = append(dims, map[string]any{
			"name": fmt.Sprintf("d%d", i), "label": "Target", "value": fills[i%4](n) + fake(),
			"scopes": []map[string]any{{"label": fills[i%4](n/2) + fake(), "match": fmt.Sprintf("m%d", i)}},
		})
	}
	req := map[string]any{
		"id": "hostile", "server": "fs", "tool": fills[1](cols-6) + fake(), "action": "write",
		"reason":      strings.Join(text, "\n"),
		"dimensions":  dims,
		"grants":      []map[string]any{{"name": "g", "description": fills[2](max(1, cols-30)) + fake()}},
		"details":     []map[string]any{{"label": "diff", "text": strings.Join(text, "\n")}},
		"annotations": map[string]any{"title": fills[3](max(1, cols-25)) + fake()},
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLineRows checks rows of a terminal cols wide: none wider, each
// starting with askperm's words (a letter), the gutter or indentation, and
// no fake line at the start of a row or right after the few columns of
// askperm's indentation (behind the gutter, fakes are plain to see as
// request text).
func checkLineRows(t *testing.T, rows []string, cols int) {
	t.Helper()
	for i, row := range rows {
		if w := ansi.StringWidth(row); w > cols {
			t.Fatalf("row %d is %d cells wide, the terminal %d:\n%s", i+1, w, cols, row)
		}
		if r, _ := utf8.DecodeRuneInString(row + " "); r != ' ' && r != '│' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			t.Fatalf("row %d starts with request text:\n%s", i+1, row)
		}
		body := strings.TrimLeft(row, " ")
		for _, f := range lineFakes {
			if strings.HasPrefix(body, strings.TrimLeft(f, " ")) && len(row)-len(body) < 4 {
				t.Fatalf("row %d passes for askperm's own line:\n%s\nrows around it:\n%s", i+1, row, strings.Join(rows[max(0, i-3):min(len(rows), i+2)], "\n"))
			}
		}
	}
}

// checkPlainStderr: askperm's own stderr lines hold no escape sequence and
// no control character but newline.
func checkPlainStderr(t *testing.T, stderr string) {
	t.Helper()
	for _, r := range stderr {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f {
			t.Fatalf("stderr holds %U: %q", r, stderr)
		}
	}
}

// TestLineWrapsAtTerminalWidth: on a real pty of several widths, a request
// built to wrap into fake lines is laid out by askperm: no row wider than
// the terminal (so the terminal wraps none), and no request text at the
// start of a row. The gutter lines behind the fakes do show them.
func TestLineWrapsAtTerminalWidth(t *testing.T) {
	for _, cols := range []int{20, 41, 80, 133} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			runParallel(t)
			s := startLineOn(t, uint16(cols), hostileLineRequest(t, cols))
			lineAnswer(s, "/m/?] (", 1, "n")
			r := s.wait()
			wantDeny(t, checkDecision(t, r.stdout), "user", "line")
			checkPlainStderr(t, r.stderr)
			rows := strings.Split(strings.ReplaceAll(s.raw(), "\r\n", "\n"), "\n")
			checkLineRows(t, rows, cols)
			if !strings.Contains(s.raw(), "PWNED") || !strings.Contains(s.raw(), "\n│ ") {
				t.Fatalf("the request was not shown:\n%s", s.raw())
			}
		})
	}
}

// TestLineRuleWrapped: TestLineAllowAlwaysNarrowed's rule sentence, 120
// characters, on a terminal 80 wide: wrapped by askperm at a space, its
// continuation indented.
func TestLineRuleWrapped(t *testing.T) {
	s := startLineOn(t, 80, readFile(t, "requests/write-file.json"))
	lineAnswer(s, "Answer [", 1, "a")
	lineAnswer(s, "Grants [1-2] (", 1, "2")
	lineAnswer(s, "Scope [1-3] (", 1, "2")
	lineAnswer(s, "Workdir [1-2] (", 1, "2")
	lineAnswer(s, "Lifetime [1-3] (", 1, "2")
	s.waitFor("Rule: allow write_file, with File [path] anything under \"/home/a/p/\", in any\r\n    workdir, granting fs.create, fs.write (implied by fs.create), for 15 minutes")
	lineAnswer(s, "Save this rule? ", 1, "n")
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
}

// TestLineLayoutInTerminal: in a real terminal emulator, padded and wide
// request text never wraps into a row that starts with request text, nor
// into one that passes for askperm's own.
func TestLineLayoutInTerminal(t *testing.T) {
	for _, cols := range []int{37, 80} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			runParallel(t)
			p := startTmux(t, cols, 50, hostileLineRequest(t, cols), "line")
			p.waitForCount("/m/?] (", 1)
			checkLineRows(t, p.history(), cols)
			p.answer("n")
			d, stderr := p.result()
			wantDeny(t, d, "user", "line")
			checkPlainStderr(t, stderr)
		})
	}
}

// TestLineFactsRightAboveQuestion: however long the agent's words (a
// reason of hundreds of lines, dozens of details), the visible screen ends
// with the facts and the question, each time the question is asked.
func TestLineFactsRightAboveQuestion(t *testing.T) {
	var req map[string]any
	if err := json.Unmarshal(readFile(t, "requests/write-file.json"), &req); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Tool: harmless_read (from engine:1)\nAction: read\n", 200)
	req["reason"] = long
	var details []map[string]any
	for i := range 30 {
		details = append(details, map[string]any{"label": fmt.Sprint("part ", i), "text": long})
	}
	req["details"] = details
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	p := startTmux(t, 80, 24, b, "line")
	want := []string{
		"Key facts:",
		"Server: fs-default",
		"Tool: write_file (from engine:1)",
		"Action: write",
		"Value of File [path]: /home/a/p/report.md",
		"Workdir: /home/a/p",
		"Grant: fs.write",
		"Grant: fs.create (implies fs.write)",
	}
	for n, key := range []string{"x", "n"} {
		rows := p.waitForCount("Answer [y/a/d/n/m/?] (", 1)
		for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
			rows = rows[:len(rows)-1]
		}
		if len(rows) < len(want)+1 || !reflect.DeepEqual(rows[len(rows)-len(want)-1:len(rows)-1], want) ||
			!strings.HasPrefix(rows[len(rows)-1], "Answer [y/a/d/n/m/?] (") {
			t.Fatalf("question %d: the screen does not end with the facts and the question:\n%s", n+1, strings.Join(rows, "\n"))
		}
		p.answer(key)
		if key == "x" {
			p.waitForCount("Type one of the keys listed", 1)
		}
	}
	d, _ := p.result()
	wantDeny(t, d, "user", "line")
}

// TestLineDelayRestartsOnInput: lines typed without a pause as long as the
// arming delay keep restarting it: none counts, one notice follows, and an
// answer after a pause decides.
func TestLineDelayRestartsOnInput(t *testing.T) {
	s := startLine(t, "write-file.json")
	s.waitFor("Answer [")
	for range 8 { // 8 × 150 ms: more than twice the 500 ms delay
		s.send("y\r")
		time.Sleep(150 * time.Millisecond)
	}
	const notice = "askperm: ignored what was typed before the question was ready."
	s.waitFor(notice)
	lineAnswer(s, "Answer [", 2, "n")
	r := s.wait()
	wantDeny(t, checkDecision(t, r.stdout), "user", "line")
	if n := strings.Count(s.text(), notice); n != 1 {
		t.Errorf("%d notices, want 1: the delay restarts while lines keep arriving; transcript:\n%s", n, s.text())
	}
	checkPlainStderr(t, r.stderr)
}

// TestLineStraddlingLineJudgedWhole: a line begun within the arming delay
// and ended after it is judged whole, never cut down to its tail: typing
// meant for another program ("git apply", "y y") whose last letter is a
// key does not answer.
func TestLineStraddlingLineJudgedWhole(t *testing.T) {
	for _, tc := range [][2]string{{"git appl", "y"}, {"y ", "y"}, {"sure, tr", "y"}, {"ls -", "a"}} {
		t.Run(tc[0]+tc[1], func(t *testing.T) {
			runParallel(t)
			s := startLine(t, "write-file.json")
			s.waitFor("Answer [")
			s.send(tc[0])
			time.Sleep(lineArmWait + 200*time.Millisecond)
			s.send(tc[1] + "\r")
			s.waitFor("Type one of the keys listed")
			lineAnswer(s, "Answer [", 2, "n")
			r := s.wait()
			wantDeny(t, checkDecision(t, r.stdout), "user", "line")
		})
	}
}

// TestLineTypingForAnotherProgram: whole lines that are no key ("git
// status", "yes please", "y y") never answer; three of them deny once.
func TestLineTypingForAnotherProgram(t *testing.T) {
	s := startLine(t, "write-file.json")
	for i, line := range []string{"git status", "yes please", "y y"} {
		lineAnswer(s, "Answer [", i+1, line)
	}
	s.waitFor("askperm: no valid answer; denying once.")
	r := s.wait()
	wantDeny(t, checkDecision(t, r.stdout), "user", "line")
	checkPlainStderr(t, r.stderr)
}

// TestLineTooNarrow: on a terminal too narrow to lay the prompt out, the
// line prompt does not start; with nobody else to ask that is a deny, and
// stderr says why on one plain line.
func TestLineTooNarrow(t *testing.T) {
	s := startLineOn(t, 12, readFile(t, "requests/write-file.json"))
	r := s.wait()
	wantDeny(t, checkDecision(t, r.stdout), "unavailable", "none")
	if !strings.Contains(r.stderr, "the terminal is 12 columns wide") {
		t.Errorf("stderr does not say why: %q", r.stderr)
	}
	checkPlainStderr(t, r.stderr)
}

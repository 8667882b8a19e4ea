package e2e

import (
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
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
	lineAnswer(s, "Answer [y/a/d/n/m/?]: ", 1, "y")
	d := lineDecision(t, s, 0)
	if d["decision"] != "allow" || d["persist"] != "once" || d["cause"] != "user" || d["frontend"] != "line" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.write", "fs.create"}) {
		t.Fatalf("want allow once of both grants by the user on the line prompt; got %v", d)
	}
	s.waitFor("Answered: Allow once.")
}

func TestLineDenyOnceWithReason(t *testing.T) {
	s := startLine(t, "write-file.json")
	lineAnswer(s, "Answer [", 1, "m")
	lineAnswer(s, "Denial reason (Enter alone clears it): ", 1, "not today")
	s.waitFor("Denial reason: not today")
	lineAnswer(s, "Answer [", 2, "n")
	d := lineDecision(t, s, 0)
	wantDeny(t, d, "user", "line")
	if d["message"] != "not today" {
		t.Fatalf("message = %v, want the typed reason", d["message"])
	}
}

func TestLineAllowAlwaysNarrowed(t *testing.T) {
	start := time.Now()
	s := startLine(t, "write-file.json")
	lineAnswer(s, "Answer [", 1, "a")
	lineAnswer(s, "Grants [1-2]: ", 1, "2")
	lineAnswer(s, "Scope [1-3]: ", 1, "2")
	lineAnswer(s, "Workdir [1-2]: ", 1, "2")
	lineAnswer(s, "Lifetime [1-3]: ", 1, "2")
	s.waitFor(`Rule: allow write_file, with File [path] anything under "/home/a/p/", in any workdir, granting fs.create, for 15 minutes`)
	lineAnswer(s, "Save this rule? ", 1, "save")
	d := lineDecision(t, s, 0)
	end := time.Now()
	if d["decision"] != "allow" || d["persist"] != "always" || d["cause"] != "user" || d["frontend"] != "line" ||
		!reflect.DeepEqual(d["grants"], []any{"fs.create"}) {
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
	lineAnswer(s, "Scope [1-2]: ", 1, "2")
	lineAnswer(s, "Lifetime [1-3]: ", 1, "")
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
	lineAnswer(s, "Denial reason (Enter alone clears it): ", 1, "why")
	lineAnswer(s, "Answer [", 2, "a")
	lineAnswer(s, "Grants [1-2]: ", 1, "")
	lineAnswer(s, "Scope [1-3]: ", 1, "3")
	lineAnswer(s, "Workdir [1-2]: ", 1, "b")
	lineAnswer(s, "Answer [", 3, "d")
	s.waitForCount("3. [x] any file: any value", 1)
	lineAnswer(s, "Scope [1-3]: ", 2, "")
	lineAnswer(s, "Workdir [1-2]: ", 2, "")
	lineAnswer(s, "Lifetime [1-3]: ", 1, "")
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
			s.waitFor("askperm: timed out; denied.")
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
			s.waitFor("askperm: cancelled; denied.")
		})
	}
}

// TestLineCtrlZIgnored: Ctrl-Z does not suspend an open prompt.
func TestLineCtrlZIgnored(t *testing.T) {
	s := startLine(t, "write-file.json")
	s.waitFor("Answer [")
	time.Sleep(lineArmWait)
	s.send("\x1a")
	time.Sleep(100 * time.Millisecond)
	s.send("n\r")
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
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

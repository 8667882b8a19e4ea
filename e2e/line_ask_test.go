package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLineHeadlineFirst: the request opens with the question in one line,
// behind askperm's label; the agent's words come below it, marked.
func TestLineHeadlineFirst(t *testing.T) {
	s := startLineOn(t, 200, readFile(t, "requests/write-file.json"))
	lineAnswer(s, "Answer [", 1, "n")
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
	text := strings.TrimLeft(s.text(), "\r\n")
	if first, _, _ := strings.Cut(text, "\r\n"); first != "Request: "+writeFileHeadline {
		t.Fatalf("first line %q, want the headline; transcript:\n%s", first, s.text())
	}
	if i, j := strings.Index(text, "Title (agent's words): Write file"), strings.Index(text, "Keys ("); i < 0 || j < i {
		t.Errorf("the agent's words are not below the headline, marked:\n%s", text)
	}
}

// TestLineYesNo: "yes" allows once and "no" denies once, whatever their
// case and the spaces around them; at the rule's save, "no" denies once.
func TestLineYesNo(t *testing.T) {
	for _, tc := range []struct {
		keys     []string
		decision string
		persist  string
	}{
		{[]string{" Yes"}, "allow", "once"},
		{[]string{"NO "}, "deny", "once"},
		{[]string{"a", "", "", "", "", "no"}, "deny", "once"},
	} {
		t.Run(strings.Join(tc.keys, ","), func(t *testing.T) {
			runParallel(t)
			s := startLine(t, "write-file.json")
			for i, k := range tc.keys {
				lineAnswer(s, " left): ", i+1, k)
			}
			d := lineDecision(t, s, 0)
			if d["decision"] != tc.decision || d["persist"] != tc.persist || d["cause"] != "user" {
				t.Fatalf("want %s %s by the user; got %v", tc.decision, tc.persist, d)
			}
		})
	}
}

const earlyNotice = "askperm: ignored what was typed before the question was ready."

// TestLineNoticeOnlyWhenEarly: an answer typed with the question on screen
// and ready (right after an unknown key, right after the notice) counts
// with no notice blaming it; a line typed before the question was ready is
// discarded and said so.
func TestLineNoticeOnlyWhenEarly(t *testing.T) {
	t.Run("right after an unknown key", func(t *testing.T) {
		runParallel(t)
		s := startLine(t, "write-file.json")
		lineAnswer(s, "Answer [", 1, "x")
		s.waitFor("Type one of the keys listed")
		s.waitForCount("Answer [", 2)
		time.Sleep(150 * time.Millisecond)
		s.send("y\r")
		d := lineDecision(t, s, 0)
		if d["decision"] != "allow" || strings.Contains(s.text(), earlyNotice) {
			t.Fatalf("want allow with no notice; got %v; transcript:\n%s", d, s.text())
		}
	})
	t.Run("before the question was ready, then right after the notice", func(t *testing.T) {
		runParallel(t)
		s := startLine(t, "write-file.json")
		s.waitFor("Answer [")
		s.send("y\r")
		s.waitFor(earlyNotice)
		s.waitForCount("Answer [", 2)
		time.Sleep(150 * time.Millisecond)
		s.send("n\r")
		wantDeny(t, lineDecision(t, s, 0), "user", "line")
		if n := strings.Count(s.text(), earlyNotice); n != 1 {
			t.Errorf("%d notices, want 1; transcript:\n%s", n, s.text())
		}
		lineClosing(s, "denied")
	})
}

var leftRE = regexp.MustCompile(`Answer \[y/a/d/n/m/\?\] \((\d+)s left\): `)

// TestLineTimeLeft: each question says how long is left, counting down.
func TestLineTimeLeft(t *testing.T) {
	s := startLine(t, "write-file.json", "--timeout", "30s")
	for i := range 3 {
		s.waitForCount("Answer [", i+1)
		time.Sleep(1200 * time.Millisecond)
		s.send("x\r")
	}
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
	var left []int
	for _, m := range leftRE.FindAllStringSubmatch(s.text(), -1) {
		n, _ := strconv.Atoi(m[1])
		left = append(left, n)
	}
	if len(left) != 3 || left[0] > 30 || left[0] < 25 || left[1] >= left[0] || left[2] >= left[1] {
		t.Fatalf("time left %v, want 3 values from 30 down; transcript:\n%s", left, s.text())
	}
}

// TestLineClosingLineDeny: a denial leaves a line saying so (allow once
// and time-outs: TestLineAllowOnce, TestLineTimeout).
func TestLineClosingLineDeny(t *testing.T) {
	s := startLine(t, "write-file.json")
	lineAnswer(s, "Answer [", 1, "")
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
	lineClosing(s, "denied")
}

// TestLineBell: with bell = true in the config the prompt opens with BEL,
// and only then.
func TestLineBell(t *testing.T) {
	for _, bell := range []bool{true, false} {
		t.Run(strconv.FormatBool(bell), func(t *testing.T) {
			runParallel(t)
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "askperm"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "askperm", "config.toml"), []byte("bell = "+strconv.FormatBool(bell)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s := startPTY(t, readFile(t, "requests/write-file.json"), baseEnv("TERM=dumb", "XDG_CONFIG_HOME="+dir), "--frontend", "line", "--timeout", "20s")
			lineAnswer(s, "Answer [", 1, "n")
			wantDeny(t, lineDecision(t, s, 0), "user", "line")
			raw := s.raw()
			if got := strings.Count(raw, "\a"); bell && (got != 1 || !strings.HasPrefix(raw, "\a")) || !bell && got != 0 {
				t.Fatalf("bell %v: %d bells, transcript opens %q", bell, got, raw[:min(len(raw), 20)])
			}
		})
	}
}

// TestLineViewFullDetail: a detail of 1 MiB, cut in the request view, is
// shown whole by v, to its last line, behind the gutter; then the question
// comes again, armed anew.
func TestLineViewFullDetail(t *testing.T) {
	var req map[string]any
	if err := json.Unmarshal(readFile(t, "requests/write-file.json"), &req); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("0123456789abcdef", 1<<16) + "\nTHE LAST LINE\n"
	req["details"] = []map[string]any{{"label": "content", "text": text}}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	s := startLineOn(t, 80, b, "--max-request", "4MiB")
	s.waitFor("WARNING: only the first 65536 of 1048591 characters are shown.")
	lineAnswer(s, "Answer [y/a/d/n/m/v/?] (", 1, "v")
	s.waitFor("\r\n│ THE LAST LINE\r\nEnd of the detail content.\r\n")
	s.waitForCount("Answer [", 2)
	s.send("y\r") // right away: the question is new
	s.waitFor(earlyNotice)
	lineAnswer(s, "Answer [", 3, "n")
	wantDeny(t, lineDecision(t, s, 0), "user", "line")
	if before, _, _ := strings.Cut(s.text(), "Answer ["); strings.Contains(before, "THE LAST LINE") {
		t.Error("the request view shows the detail whole")
	}
}

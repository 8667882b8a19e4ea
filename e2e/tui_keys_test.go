package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tuiHeadline is write-file.json's question in one line.
const tuiHeadline = "write_file (fs-default) wants to write /home/a/p/report.md"

// TestTUIShortcuts: the headline comes first; a, Enter, s, Enter, each
// after a pause, save the allow-always rule with its default scopes, and
// y, pause, Enter allows once.
func TestTUIShortcuts(t *testing.T) {
	t.Run("allow always", func(t *testing.T) {
		s := startTUI(t, "write-file.json")
		tuiShown(s, "Your decision", 1)
		text := s.text()
		if h, f := strings.Index(text, "» "+tuiHeadline), strings.Index(text, "Server: fs-default"); h < 0 || f < h {
			t.Fatalf("no headline above the facts:\n%s", text)
		}
		tuiToRule(s)
		tuiKey(s, "s", "> Save rule")
		time.Sleep(tuiArmWait)
		s.send(tuiEnter)
		d := tuiDecision(t, s, 0)
		want := map[string]any{"scopes": map[string]any{"path": "/home/a/p/report.md"}, "workdir_scope": "selected", "lifetime": "indefinite"}
		if d["decision"] != "allow" || d["persist"] != "always" || !reflect.DeepEqual(d["rule"], want) {
			t.Fatalf("want allow always with the default rule; got %v", d)
		}
	})
	t.Run("allow once", func(t *testing.T) {
		s := startTUI(t, "write-file.json")
		tuiShown(s, "Your decision", 1)
		tuiKey(s, "y", "> Allow once (y)")
		time.Sleep(tuiArmWait)
		s.send(tuiEnter)
		if d := tuiDecision(t, s, 0); d["decision"] != "allow" || d["persist"] != "once" {
			t.Fatalf("want allow once; got %v", d)
		}
	})
}

// tuiToRule chooses Allow always… with its letter and, after a pause,
// Enter, and waits out the rule stage's arming delay.
func tuiToRule(s *ptySession) {
	s.t.Helper()
	tuiKey(s, "a", "> Allow always… (a)")
	time.Sleep(tuiArmWait)
	s.send(tuiEnter)
	tuiShown(s, "Rule to save: allow write_file", 1)
}

// TestTUIEnterRightAfterShortcut: an Enter typed right after the letter
// that chose an allow is discarded, and the screen says why.
func TestTUIEnterRightAfterShortcut(t *testing.T) {
	s := startTUI(t, "write-file.json")
	tuiShown(s, "Your decision", 1)
	tuiKey(s, "y", "> Allow once (y)")
	s.send(tuiEnter)
	s.waitFor("Enter ignored: wait a moment after choosing an allow")
	s.send("\x03")
	wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
}

// TestTUIShellTypingNeverAllows: command lines typed for a shell, key by
// key at 30-120 ms or in one chunk, with and without a pause before the
// Enter, each after a pause of its own, never allow: a prompt ends in a
// deny or not at all, and never gets to the rule of an always-choice. A
// sample of the class TestShellTypingNeverAllows (prompt/tui) checks in
// full.
func TestTUIShellTypingNeverAllows(t *testing.T) {
	var lines [][]string
	for _, l := range []string{"yes", "ya", "y y", "ls -la", "git add -A", "a b", "sudo rm -rf /tmp/x", "d n", "echo y", "s ss",
		"yy", "cat ./a | grep -n y", "go test ./...", "n 42", "y 2>&1", "vim q"} {
		lines = append(lines, strings.Split(l, ""))
	}
	tuiBurstsNeverAllow(t, rand.New(rand.NewPCG(11, 12)), lines, 30, 120)
}

// TestTUINavigationBurstsNeverAllow: bursts of the keys that move (the
// arrows, Home, End, PgUp, PgDn, Tab, Shift+Tab, the pane's Ctrl keys),
// some with letters, typed as TestTUIShellTypingNeverAllows types lines
// but key by key at 10-60 ms, never allow. A sample of the class
// TestNavigationBurstsNeverAllow (prompt/tui) checks in full.
func TestTUINavigationBurstsNeverAllow(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	nav := []string{tuiUp, tuiDown, "\x1bOA", "\x1b[H", "\x1b[1~", "\x1b[F", "\x1b[5~", "\x1b[6~", "\t", "\x1b[Z",
		"\x1b[5;5~", "\x1b[1;5H"}
	bursts := [][]string{{tuiUp, tuiUp, tuiUp}, {"\x1b[H", tuiDown}, {"\x1b[5~", "\x1b[5~"}}
	for len(bursts) < 16 {
		b := []string{}
		for range 2 + rng.IntN(5) {
			if rng.IntN(4) == 0 {
				b = append(b, string("ysanv"[rng.IntN(5)]))
			} else {
				b = append(b, nav[rng.IntN(len(nav))])
			}
		}
		bursts = append(bursts, b)
	}
	tuiBurstsNeverAllow(t, rng, bursts, 10, 60)
}

// tuiBurstsNeverAllow types each burst of keys and Enter on
// write-file.json's prompt, each after a pause: key by key at minGap to
// maxGap ms (way 0), the same with a pause before Enter (1), in one write
// with Enter (2), in one write and Enter after a pause (3). A prompt
// ends in a deny or not at all and never gets to the rule of an
// always-choice; a prompt that ended is started again. The prompt offers
// Allow for this session first, where Home and runs of Up land.
func tuiBurstsNeverAllow(t *testing.T, rng *rand.Rand, bursts [][]string, minGap, maxGap int) {
	start := func() *ptySession {
		s := startTUI(t, "write-file.json", "--timeout", "60s")
		tuiShown(s, "Allow for this session (s)", 1)
		return s
	}
	s, prompts := start(), 1
	for i, keys := range bursts {
		typed := strings.Join(keys, "")
		time.Sleep(tuiArmWait + time.Duration(rng.IntN(300))*time.Millisecond)
		switch i % 4 {
		case 0, 1: // key by key
			for _, k := range keys {
				s.send(k)
				time.Sleep(time.Duration(minGap+rng.IntN(maxGap-minGap+1)) * time.Millisecond)
			}
			if i%4 == 1 {
				time.Sleep(tuiArmWait)
			}
			s.send(tuiEnter)
		case 2:
			s.send(typed + tuiEnter)
		case 3:
			s.send(typed)
			time.Sleep(tuiArmWait)
			s.send(tuiEnter)
		}
		select {
		case err := <-s.done:
			s.done <- err // for wait
			d := tuiDecision(t, s, 0)
			if d["decision"] != "deny" {
				t.Fatalf("typing %q decided %v", typed, d)
			}
			s = start()
			prompts++
		case <-time.After(200 * time.Millisecond):
		}
		if strings.Contains(s.text(), "Rule to save") {
			t.Fatalf("typing %q chose an always-choice:\n%s", typed, s.text())
		}
	}
	s.send("\x03")
	if d := tuiDecision(t, s, 0); d["decision"] != "deny" {
		t.Fatalf("typing decided %v", d)
	}
	t.Logf("%d bursts, %d prompts", len(bursts), prompts)
}

// tuiBigDetail is write-file.json with one detail of 1 MiB whose last
// line is "the very last line".
func tuiBigDetail(t *testing.T) []byte {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-64; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%150))
	}
	return tuiRequest(t, func(req map[string]any) {
		req["details"] = []any{map[string]any{"label": "big", "text": b.String() + "the very last line\n"}}
	})
}

// TestTUIViewer: v opens askperm's own viewer of a detail of 1 MiB, which
// the pane cuts short; End shows its last line; q closes it, and the
// question takes keys again after the arming delay.
func TestTUIViewer(t *testing.T) {
	s := startPTY(t, tuiBigDetail(t), tuiEnv(t), "--frontend", "tui", "--timeout", "30s", "--max-request", "8MiB")
	tuiShown(s, "Your decision", 1)
	start := time.Now()
	tuiKey(s, "v", "the agent's words in full")
	opened := time.Since(start)
	time.Sleep(tuiArmWait)
	start = time.Now()
	tuiKey(s, "\x1b[F", "the very last line") // End
	t.Logf("viewer of 1 MiB: opened in %v, End in %v (each to its frame on the terminal)", opened, time.Since(start))
	time.Sleep(tuiArmWait)
	tuiKey(s, "q", "Your decision")
	tuiShown(s, "Your decision", strings.Count(s.text(), "Your decision"))
	tuiKey(s, "y", "> Allow once (y)")
	time.Sleep(tuiArmWait)
	s.send(tuiEnter)
	if d := tuiDecision(t, s, 0); d["decision"] != "allow" {
		t.Fatalf("want allow once; got %v", d)
	}
}

// TestTUIDiffColour: a detail that is a unified diff is drawn with its
// added lines green, removed lines red and hunk headers cyan, after the
// gutter; with NO_COLOR without any colour.
func TestTUIDiffColour(t *testing.T) {
	body := tuiRequest(t, func(req map[string]any) {
		req["details"] = []any{map[string]any{"label": "diff", "text": "--- a/report.md\n+++ b/report.md\n@@ -1,2 +1,2 @@\n # Report\n-All red.\n+All green.\n"}}
	})
	for _, noColor := range []bool{false, true} {
		env := tuiEnv(t)
		if noColor {
			env = append(env, "NO_COLOR=1")
		}
		s := startPTY(t, body, env, "--frontend", "tui", "--timeout", "20s")
		tuiShown(s, "Your decision", 1)
		for range 6 {
			s.send("\x1b[6~") // PgDn
			time.Sleep(50 * time.Millisecond)
		}
		s.waitFor("+All green.")
		s.send("\x03")
		wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
		raw := s.raw()
		for _, sgr := range []string{"\x1b[32m+All green.", "\x1b[31m-All red.", "\x1b[36m@@ -1,2 +1,2 @@"} {
			if strings.Contains(raw, sgr) == noColor {
				t.Errorf("NO_COLOR %v: %q on the terminal: %v", noColor, sgr, !noColor)
			}
		}
	}
}

// TestTUIClosingLine: once the prompt is gone and the terminal restored,
// one line on the terminal (never on stdout) says what was decided.
func TestTUIClosingLine(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		args       []string
		answer     func(*ptySession)
	}{
		{"allow", "askperm: allowed once: " + tuiHeadline, nil, func(s *ptySession) {
			tuiShown(s, "Your decision", 1)
			tuiKey(s, "y", "> Allow once (y)")
			time.Sleep(tuiArmWait)
			s.send(tuiEnter)
		}},
		{"timeout", "askperm: denied: timed out: " + tuiHeadline, []string{"--timeout", "2s"}, func(s *ptySession) {
			s.waitFor("Your decision")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTUI(t, "write-file.json", tc.args...)
			tc.answer(s)
			r := s.wait()
			checkDecision(t, r.stdout)
			raw := s.raw()
			i := strings.LastIndex(raw, "\x1b[?1049l") // the alternate screen left
			if i < 0 || !strings.Contains(raw[i:], tc.want+"\r\n") {
				t.Fatalf("no %q after the prompt:\n%q", tc.want, raw[max(0, i):])
			}
			if strings.Contains(r.stdout, "askperm:") {
				t.Fatalf("the closing line went to stdout: %q", r.stdout)
			}
		})
	}
}

// TestTUIBell: with bell = true the terminal gets BEL as the prompt
// opens; without it none.
func TestTUIBell(t *testing.T) {
	for _, bell := range []bool{true, false} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(cfg, fmt.Appendf(nil, "bell = %v\n", bell), 0o600); err != nil {
			t.Fatal(err)
		}
		s := startTUI(t, "write-file.json", "--config", cfg)
		s.waitFor("Your decision")
		s.send("\x03")
		wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
		if got := strings.Contains(s.raw(), "\a"); got != bell {
			t.Fatalf("bell = %v: BEL on the terminal: %v", bell, got)
		}
	}
}

// tuiRecallHabits are the shell habits of issue 19 as a terminal sends
// them: Up four times to recall an older command, in one write or key by
// key 30 ms apart, and Home in two spellings.
var tuiRecallHabits = []struct {
	name string
	keys []string
}{
	{"Up×4 in one write", []string{strings.Repeat(tuiUp, 4)}},
	{"Up×4 key by key", []string{tuiUp, tuiUp, tuiUp, tuiUp}},
	{"Home", []string{"\x1b[H"}},
	{"Home VT", []string{"\x1b[1~"}},
}

// tuiType sends keys 30 ms apart, then waits out the arming delay.
func tuiType(s *ptySession, keys []string) {
	for _, k := range keys {
		s.send(k)
		time.Sleep(30 * time.Millisecond)
	}
	time.Sleep(tuiArmWait)
}

// tuiStillAsking fails the test if askperm ended within a second: what
// was typed decided.
func tuiStillAsking(t *testing.T, s *ptySession, typed string) {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for wait
		t.Fatalf("%s, a pause and Enter decided %v", typed, tuiDecision(t, s, 0))
	case <-time.After(time.Second):
	}
}

// TestTUIRecallHabitNeverAllows (issue 19): Up four times or Home, a
// pause and Enter gave Allow for this session. A burst of moves is
// typing and Home jumps: the choice is back on Deny once, the Enter opens
// the denial reason, and the prompt ends in a deny.
func TestTUIRecallHabitNeverAllows(t *testing.T) {
	for _, h := range tuiRecallHabits {
		t.Run(h.name, func(t *testing.T) {
			s := startPTY(t, readFile(t, "requests/write-file.json"), memoryEnv("TERM=xterm-256color"),
				"--frontend", "tui", "--timeout", "20s")
			tuiShown(s, "Allow for this session (s)", 1)
			tuiType(s, h.keys)
			s.send(tuiEnter)
			tuiStillAsking(t, s, h.name)
			s.waitFor("Denial reason (optional)")
			s.send(tuiEnter)
			wantDeny(t, tuiDecision(t, s, 0), "user", "tui")
		})
	}
}

// TestTUIRuleRecallHabitNeverSaves (issue 19): in the rule stage, on
// « Back, the same habits chose Save rule and the Enter saved it; they
// choose « Back.
func TestTUIRuleRecallHabitNeverSaves(t *testing.T) {
	for _, h := range tuiRecallHabits {
		t.Run(h.name, func(t *testing.T) {
			s := startTUI(t, "write-file.json")
			tuiShown(s, "Your decision", 1)
			tuiToRule(s)
			tuiKey(s, "b", "> « Back")
			time.Sleep(tuiArmWait)
			tuiType(s, h.keys)
			s.send(tuiEnter)
			tuiStillAsking(t, s, h.name)
			s.send("\x03")
			wantDeny(t, tuiDecision(t, s, 0), "cancelled", "tui")
		})
	}
}

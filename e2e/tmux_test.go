package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// tmuxPane is askperm in a tmux pane: a real terminal emulator, which
// wraps what is wider than it, and whose screen capture-pane shows as a
// person sees it.
type tmuxPane struct {
	t         *testing.T
	sock, dir string
}

// startTmux runs askperm's frontend (tui or line) with req on stdin in a
// detached tmux pane cols × rows, on its own tmux server, in baseEnv (no
// state, no configuration); stdout, stderr and the exit code go to files.
func startTmux(t *testing.T, cols, rows int, req []byte, frontend string) *tmuxPane {
	t.Helper()
	term := ""
	if frontend == "line" {
		term = "TERM=dumb "
	}
	return startTmuxProgram(t, cols, rows, req, fmt.Sprintf("%s%q --frontend %s --timeout 60s", term, bin, frontend))
}

// startTmuxProgram runs the shell command line program (askperm or
// another program in its place) with req on stdin in a detached tmux
// pane cols × rows, as startTmux does.
func startTmuxProgram(t *testing.T, cols, rows int, req []byte, program string) *tmuxPane {
	t.Helper()
	skipSlow(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	p := &tmuxPane{t: t, dir: t.TempDir()}
	p.sock = filepath.Join(p.dir, "sock")
	if err := os.WriteFile(filepath.Join(p.dir, "req.json"), req, 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("cd %q && %s <req.json >out.json 2>err.txt; echo $? >code", p.dir, program)
	p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...)
	cmd.Env = baseEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// rows are the pane's visible rows.
func (p *tmuxPane) rows() []string {
	return strings.Split(strings.TrimRight(p.tmux("capture-pane", "-p", "-t", "t"), "\n"), "\n")
}

// history is every row the pane shows or scrolled away.
func (p *tmuxPane) history() []string {
	return strings.Split(strings.TrimRight(p.tmux("capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"), "\n"), "\n")
}

// waitRows waits until the rows satisfy ok, and returns them.
func (p *tmuxPane) waitRows(what string, ok func([]string) bool) []string {
	p.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rows := p.rows()
		if ok(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, strings.Join(rows, "\n"))
		}
	}
}

// waitForCount waits until text shows at least n times on the screen.
func (p *tmuxPane) waitForCount(text string, n int) []string {
	p.t.Helper()
	return p.waitRows(fmt.Sprintf("%q ×%d", text, n), func(rows []string) bool {
		return strings.Count(strings.Join(rows, "\n"), text) >= n
	})
}

// answer waits out the line prompt's arming delay and types line and
// Enter.
func (p *tmuxPane) answer(line string) {
	p.t.Helper()
	time.Sleep(lineArmWait)
	if line != "" {
		p.tmux("send-keys", "-t", "t", "-l", line)
	}
	p.tmux("send-keys", "-t", "t", "Enter")
}

// result waits for askperm to exit 0 and returns its decision and stderr.
func (p *tmuxPane) result() (map[string]any, string) {
	p.t.Helper()
	out, stderr := p.output()
	return checkDecision(p.t, out), stderr
}

// output waits for the program in the pane to exit 0 and returns its
// stdout and stderr.
func (p *tmuxPane) output() (string, string) {
	p.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, err := os.ReadFile(filepath.Join(p.dir, "code")); err == nil && len(code) > 0 {
			out, _ := os.ReadFile(filepath.Join(p.dir, "out.json"))
			stderr, _ := os.ReadFile(filepath.Join(p.dir, "err.txt"))
			if strings.TrimSpace(string(code)) != "0" {
				p.t.Fatalf("exit %s; stderr: %s", code, stderr)
			}
			return string(out), string(stderr)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the program did not exit; screen:\n%s", strings.Join(p.rows(), "\n"))
		}
	}
}

// decision waits for askperm to exit 0 and returns its decision.
func (p *tmuxPane) decision() map[string]any {
	d, _ := p.result()
	return d
}

// tmuxPlanted ends every label planted in the agent's words.
const tmuxPlanted = "PLANTED"

// tmuxFakes are askperm's labels, planted in the agent's words.
var tmuxFakes = []string{
	"Command [command]: go test ./...",
	"Value of Command [command]: go test ./...",
	"Server: trusted",
	"Tool: read_file (from engine:1)",
	"Action: read",
	"Grant: fs.read",
	"Rule to save: allow read_file",
	"┃ > Allow once",
}

// tmuxHostileText is free text that tries to start a row of a pane cols
// wide with a fake label: behind fills of every length around the width
// (letters, spaces, tabs, wide characters), over many lines.
func tmuxHostileText(rng *rand.Rand, cols int, multi bool) string {
	fills := []func(n int) string{
		func(n int) string { return strings.Repeat("x", n) },
		func(n int) string { return "word " + strings.Repeat(" ", n) },
		func(n int) string { return strings.Repeat("全", n/2) },
		func(n int) string { return strings.Repeat("漢a", n/3) },
	}
	if multi {
		fills = append(fills, func(n int) string { return strings.Repeat("\t", n/8) + "\n" })
	}
	var b strings.Builder
	for range 2 + rng.IntN(8) {
		n := cols - 4 + rng.IntN(8)
		if rng.IntN(3) == 0 {
			n += cols
		}
		b.WriteString(fills[rng.IntN(len(fills))](n))
		b.WriteString(tmuxFakes[rng.IntN(len(tmuxFakes))] + " " + tmuxPlanted + " ")
		if multi && rng.IntN(2) == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// tmuxHostileRequest is a request with short facts and hostile agent's
// words: a long reason, title, action and grant descriptions, arguments,
// many details. It returns the fact rows a person must see.
func tmuxHostileRequest(t *testing.T, rng *rand.Rand, cols int) ([]byte, []string) {
	t.Helper()
	text := func(multi bool) string { return tmuxHostileText(rng, cols, multi) }
	n := rng.IntN(1000)
	var details []map[string]string
	for range rng.IntN(40) {
		details = append(details, map[string]string{"label": text(false), "text": text(true)})
	}
	req := map[string]any{
		"server": fmt.Sprintf("srv-%d", n), "tool": fmt.Sprintf("tool_%d", n), "source": "engine:1",
		"action": "exec", "action_description": text(false), "reason": text(true),
		"dimensions": []any{map[string]any{"name": "command", "label": "Command", "value": fmt.Sprintf("rm -rf /tmp/%d", n),
			"scopes": []any{map[string]any{"label": "this command", "match": "rm"}}}},
		"workdir":     map[string]string{"value": "/w", "label": text(false)},
		"grants":      []any{map[string]string{"name": fmt.Sprintf("g.%d", n), "description": text(false)}},
		"details":     details,
		"arguments":   map[string]string{"command": text(true)},
		"annotations": map[string]string{"title": text(false)},
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b, []string{
		fmt.Sprintf("Server: srv-%d", n),
		fmt.Sprintf("Tool: tool_%d (from engine:1)", n),
		"Action: exec",
		fmt.Sprintf("Value of Command [command]: rm -rf /tmp/%d", n),
		"Workdir: /w",
		fmt.Sprintf("Grant: g.%d", n),
	}
}

// tmuxRangeRow is the pane's rule while not all the agent's words fit.
var tmuxRangeRow = regexp.MustCompile(`lines (\d+)-(\d+) of (\d+)`)

// TestTUILayoutInTmux: in a real terminal emulator, for generated hostile
// requests at several sizes, the facts are on the first screen, at the
// top, each whole on its row, and stay there on every page of the agent's
// words; no planted label starts a row, on any page.
func TestTUILayoutInTmux(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {57, 40}, {132, 43}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(size[0]), uint64(size[1])))
			for range 3 {
				req, facts := tmuxHostileRequest(t, rng, size[0])
				tmuxCheckPages(t, startTmux(t, size[0], size[1], req, "tui"), facts)
			}
		})
	}
}

// tmuxCheckPages checks every page of the agent's words in the pane: the
// facts stay whole on the rows of the first page, and no planted label
// starts a row. Then it cancels the prompt.
func tmuxCheckPages(t *testing.T, p *tmuxPane, facts []string) {
	t.Helper()
	first := p.waitRows("the prompt", func(rows []string) bool { return slices.Contains(rows, "┃ > Deny once (n)") })
	at := tmuxFactRows(t, first, facts)
	time.Sleep(tuiArmWait)
	for rows := first; ; {
		tmuxNoPlantedLabel(t, rows)
		if got := tmuxFactRows(t, rows, facts); !slices.Equal(got, at) {
			t.Fatalf("the facts moved from rows %v to %v:\n%s", at, got, strings.Join(rows, "\n"))
		}
		m := tmuxRangeRow.FindStringSubmatch(strings.Join(rows, "\n"))
		if m == nil || m[2] == m[3] {
			break
		}
		p.tmux("send-keys", "-t", "t", "NPage")
		rows = p.waitRows("the next page", func(rows []string) bool {
			return !strings.Contains(strings.Join(rows, "\n"), m[0])
		})
	}
	p.tmux("send-keys", "-t", "t", "C-c")
	wantDeny(t, p.decision(), "cancelled", "tui")
}

// TestTUIWidthDisputeInTmux: Yijing hexagrams (U+4DC0-U+4DFF) are 1 cell
// wide in Unicode 15.0 but 2 in tmux (glibc's wcwidth). A reason that fills
// rows with them, each fill followed by a planted label, in the TUI in
// tmux, leaves askperm's facts whole on their rows and starts no row with a
// planted label, on every page.
func TestTUIWidthDisputeInTmux(t *testing.T) {
	const cols, rows = 80, 24
	var reason strings.Builder
	hexagram := rune(0x4dc0)
	for n := cols/2 - 8; n <= cols+4; n++ {
		for range n {
			reason.WriteRune(hexagram)
			if hexagram++; hexagram > 0x4dff {
				hexagram = 0x4dc0
			}
		}
		reason.WriteString(" " + tmuxFakes[n%len(tmuxFakes)] + " " + tmuxPlanted + "\n")
	}
	req, err := json.Marshal(map[string]any{
		"server": "srv", "tool": "exec", "source": "engine:1", "action": "exec", "reason": reason.String(),
		"dimensions": []any{map[string]any{"name": "command", "label": "Command", "value": "rm -rf /tmp/x",
			"scopes": []any{map[string]any{"label": "this command", "match": "rm"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tmuxCheckPages(t, startTmux(t, cols, rows, req, "tui"), []string{
		"Server: srv",
		"Tool: exec (from engine:1)",
		"Action: exec",
		"Value of Command [command]: rm -rf /tmp/x",
	})
}

// tmuxFactRows returns the row of each fact; each must be a row whole.
func tmuxFactRows(t *testing.T, rows, facts []string) []int {
	t.Helper()
	at := make([]int, len(facts))
	for i, f := range facts {
		if at[i] = slices.Index(rows, f); at[i] < 0 {
			t.Fatalf("fact %q is not a row of the screen:\n%s", f, strings.Join(rows, "\n"))
		}
	}
	return at
}

// tmuxNoPlantedLabel fails when a row holding planted text starts with
// anything but askperm's gutter or one of its labels of the agent's words.
func tmuxNoPlantedLabel(t *testing.T, rows []string) {
	t.Helper()
	for _, r := range rows {
		if strings.Contains(r, tmuxPlanted) && !tmuxAgentRow.MatchString(r) {
			t.Fatalf("planted text starts a row: %q\n%s", r, strings.Join(rows, "\n"))
		}
	}
}

// tmuxAgentRow is how a row holding the agent's words starts.
var tmuxAgentRow = regexp.MustCompile(`^(│ |Detail \(agent's words\): |Description of grant )`)

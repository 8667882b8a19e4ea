package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// privateCopy copies a testdata file into a private temporary file: user
// files are refused when others can write them, and a checkout's modes
// depend on its umask.
func privateCopy(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(p, readFile(t, name), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// goldenCases are the requests of testdata/requests answered without a
// human; each must produce exactly testdata/decisions/NAME.json.
var goldenCases = []struct {
	name, request string
	args          []string
}{
	{"write-file--allow-once", "write-file.json", []string{"--answer", "allow-once"}},
	{"write-file--deny-once", "write-file.json", []string{"--answer", "deny-once", "--message", "not now"}},
	{"write-file--deny-always", "write-file.json", []string{"--answer", "deny-always", "--message", "never"}},
	{"write-file--allow-always-defaults", "write-file.json", []string{"--answer", "allow-always"}},
	{"write-file--ci-answers", "write-file.json", []string{"--answers", "answers/ci.toml"}},
	{"run-command--ci-answers", "run-command.json", []string{"--answers", "answers/ci.toml"}},
	{"run-command--allow-always-defaults", "run-command.json", []string{"--answer", "allow-always"}},
	{"minimal--ci-answers", "minimal.json", []string{"--answers", "answers/ci.toml"}},
	{"read-only--allow-once", "read-only.json", []string{"--answer", "allow-once"}},
	{"hostile--deny-once", "hostile.json", []string{"--answer", "deny-once"}},
	{"minimal--unavailable", "minimal.json", nil},
}

func TestGoldenDecisions(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if strings.HasPrefix(a, "answers/") {
					args[i] = privateCopy(t, a)
				}
			}
			before := time.Now().Unix()
			r := runPipe(t, readFile(t, "requests/"+tc.request), baseEnv(), args...)
			after := time.Now().Unix()
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			got := checkDecision(t, r.stdout)
			golden := filepath.Join("..", "testdata", "decisions", tc.name+".json")
			if os.Getenv("ASKPERM_UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var want map[string]any
			if err := json.Unmarshal(readFile(t, "decisions/"+tc.name+".json"), &want); err != nil {
				t.Fatal(err)
			}
			// expires is absolute: check it by range, the rest exactly.
			if rule, ok := got["rule"].(map[string]any); ok {
				if exp, ok := rule["expires"].(float64); ok {
					life, _ := time.ParseDuration(rule["lifetime"].(string) + "s")
					lo, hi := before+int64(life.Seconds()), after+int64(life.Seconds())
					if int64(exp) < lo || int64(exp) > hi {
						t.Errorf("expires %v outside [%d, %d]", exp, lo, hi)
					}
					delete(rule, "expires")
					delete(want["rule"].(map[string]any), "expires")
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decision differs from %s:\n got %s\nwant %s", golden, r.stdout, readFile(t, "decisions/"+tc.name+".json"))
			}
		})
	}
}

func TestStdinTerminalIsAUsageError(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptm.Close()
	defer pts.Close()
	cmd := exec.Command(bin, "--answer", "allow-once")
	cmd.Stdin = pts
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = baseEnv()
	code := exitCode(t, cmd.Run())
	if code != 64 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "stdin is a terminal") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestUnclosedStdinTimesOut: a caller that never closes stdin gets exit 65
// at the deadline, never an answer to a half-read request.
func TestUnclosedStdinTimesOut(t *testing.T) {
	for _, stop := range []string{"deadline", "SIGTERM"} {
		t.Run(stop, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pw.Close()
			cmd := exec.Command(bin, "--answer", "allow-once", "--timeout", "1s")
			cmd.Stdin = pr
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Env = baseEnv()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pr.Close()
			if _, err := pw.Write([]byte(`{"action": "wri`)); err != nil {
				t.Fatal(err)
			}
			if stop == "SIGTERM" {
				time.Sleep(200 * time.Millisecond)
				cmd.Process.Signal(syscall.SIGTERM)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("askperm waited for stdin past its deadline")
			}
			if code := exitCode(t, err); code != 65 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "request not fully read") {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
		})
	}
}

// TestNoTerminalQueryAtStart: with a terminal that answers nothing as
// stdout (and as the controlling terminal, where a query would be sent),
// a canned decision is not held up waiting for an answer, and the terminal
// receives the decision and nothing else: no query, no escape sequence.
// (The UI libraries' start-up once asked for the background colour here
// and waited five seconds.)
func TestNoTerminalQueryAtStart(t *testing.T) {
	keepSerial(t)
	s := preparePTY(t, readFile(t, "requests/minimal.json"), baseEnv("TERM=xterm-256color", "COLORTERM=truecolor"), "--answer", "allow-once")
	s.cmd.Stdout = s.pts
	out := startedAlone(t, s)
	line, ok := strings.CutSuffix(out, "\r\n")
	if !ok || strings.ContainsAny(line, "\x1b\r\n") {
		t.Fatalf("the terminal received more than the decision: %q", s.raw())
	}
	checkDecision(t, line+"\n")
}

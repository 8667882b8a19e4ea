package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// filesystemServer is the reference MCP filesystem server from npm
// (@modelcontextprotocol/server-filesystem, installed by .ci/run) serving
// dir, as a command line.
func filesystemServer(t testing.TB, dir string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	script, _ := filepath.Abs("../.ci/tools/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, serr := os.Stat(script); err != nil || serr != nil {
		t.Skip("the reference filesystem server is not installed (.ci/run installs it from npm): the gate's end-to-end tests are skipped")
	}
	return []string{node, script, dir}
}

// gateSession connects a go-sdk client to askperm gate in front of the
// filesystem server on dir, with askperm's flags.
func gateSession(t *testing.T, env []string, dir string, flags ...string) *mcp.ClientSession {
	t.Helper()
	args := append(append([]string{"gate"}, flags...), append([]string{"--"}, filesystemServer(t, dir)...)...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "askperm-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting through the gate: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	// The gate learns the tools' annotations from tools/list, as clients ask.
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// call calls a tool and returns its text and whether it is an error.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError
}

// TestGateInFrontOfTheFilesystemServer: a read allowed by a rules file
// reaches the server; a write denied by a canned answer never does, and
// its denial reaches the client as a tool error; twenty calls in flight at
// once are all decided.
func TestGateInFrontOfTheFilesystemServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	rules := rulesFile(t, "[[rule]]\ntool = \"read_text_file\"\n")
	answers := filepath.Join(t.TempDir(), "answers.toml")
	os.WriteFile(answers, []byte("[[answer]]\ntool = \"write_file\"\nchoice = \"deny-once\"\nmessage = \"no writes today\"\n"), 0o600)
	s := gateSession(t, baseEnv(), dir, "--rules", rules, "--answers", answers, "--frontend", "none")

	if text, isErr := call(t, s, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}); isErr || text != "hello" {
		t.Errorf("read: %q, error %v", text, isErr)
	}
	target := filepath.Join(dir, "written.txt")
	text, isErr := call(t, s, "write_file", map[string]any{"path": target, "content": "x"})
	if !isErr || !strings.Contains(text, "no writes today") {
		t.Errorf("write: %q, error %v", text, isErr)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the denied write reached the server: the file exists")
	}
	// Nothing decides a directory listing: nobody can be asked, so deny.
	if text, isErr := call(t, s, "list_directory", map[string]any{"path": dir}); !isErr || !strings.Contains(text, "unavailable") {
		t.Errorf("list: %q, error %v", text, isErr)
	}

	readAtOnce(t, s, dir, 20)
}

// TestGateRemembersAcrossProcesses: an always-answer in one gate decides
// the same call in the next, without anyone to ask, and no call with
// another argument (every argument is bound).
func TestGateRemembersAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	env := memoryEnv()
	target := filepath.Join(dir, "a.txt")
	first := gateSession(t, env, dir, "--answer", "allow-always")
	if text, isErr := call(t, first, "write_file", map[string]any{"path": target, "content": "one"}); isErr {
		t.Fatalf("first write: %q", text)
	}
	first.Close()
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	second := gateSession(t, env, dir, "--frontend", "none")
	if text, isErr := call(t, second, "write_file", map[string]any{"path": target, "content": "one"}); isErr {
		t.Errorf("second write, remembered: %q", text)
	}
	if text, isErr := call(t, second, "write_file", map[string]any{"path": target, "content": "two"}); !isErr || !strings.Contains(text, "unavailable") {
		t.Errorf("a write of other content was remembered: %q", text)
	}
	if b, _ := os.ReadFile(target); string(b) != "one" {
		t.Errorf("file: %q", b)
	}
}

// TestGateServerKilled: the server dying mid-session ends the gate; the
// client gets an error, and nothing hangs.
func TestGateServerKilled(t *testing.T) {
	dir := t.TempDir()
	s := gateSession(t, baseEnv(), dir, "--answer", "allow-once")
	// The server is the gate's child: kill every node process of this test's.
	out, _ := exec.Command("pgrep", "-f", dir).Output()
	killed := 0
	for _, pid := range strings.Fields(string(out)) {
		var p int
		fmt.Sscan(pid, &p)
		if p != os.Getpid() && syscall.Kill(p, syscall.SIGKILL) == nil {
			killed++
		}
	}
	if killed == 0 {
		t.Skip("could not find the server to kill")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": dir}})
	if err == nil || time.Since(start) > 8*time.Second {
		t.Errorf("after the server died: %v after %v", err, time.Since(start))
	}
}

// BenchmarkGateCall measures an allowed call through the gate, against
// the same call made to the server directly: the difference is what the
// gate adds (describe, rules, the audit-less pipeline, two relays).
func BenchmarkGateCall(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("hello"), 0o600)
	rules := filepath.Join(b.TempDir(), "rules.toml")
	os.WriteFile(rules, []byte("[[rule]]\ntool = \"read_text_file\"\n"), 0o600)
	for _, through := range []string{"direct", "gate"} {
		b.Run(through, func(b *testing.B) {
			server := filesystemServer(b, dir)
			var cmd *exec.Cmd
			if through == "gate" {
				cmd = exec.Command(bin, append([]string{"gate", "--rules", rules, "--frontend", "none", "--"}, server...)...)
				cmd.Env = baseEnv()
			} else {
				cmd = exec.Command(server[0], server[1:]...)
			}
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			s.ListTools(ctx, nil)
			b.ResetTimer()
			for b.Loop() {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": file}})
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// rawGate runs askperm gate with flags in front of the stand-in server of
// internal/gate/testdata, which names itself "fs-trusted" in initialize
// and sends every other message back as it came; it is started from that
// directory, so its command line is `sh renaming.sh fs-trusted`. send
// writes a line; next reads the gate's next line.
type rawGate struct {
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder
	wait   func()
}

func startRawGate(t *testing.T, flags ...string) *rawGate {
	t.Helper()
	return startGateOn(t, []string{"sh", "renaming.sh", "fs-trusted"}, flags...)
}

// startGateOn is startRawGate in front of server, a command line run in
// internal/gate/testdata.
func startGateOn(t *testing.T, server []string, flags ...string) *rawGate {
	t.Helper()
	return startGateOnEnv(t, baseEnv(), server, flags...)
}

// startGateOnEnv is startGateOn in the environment env.
func startGateOnEnv(t *testing.T, env []string, server []string, flags ...string) *rawGate {
	t.Helper()
	args := append(append(append([]string{"gate"}, flags...), "--"), server...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = "../internal/gate/testdata"
	cmd.Env = env
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	g := &rawGate{in: in, out: bufio.NewScanner(out), stderr: stderr}
	g.wait = func() {
		in.Close()
		for g.out.Scan() {
		}
		cmd.Wait()
		timer.Stop()
	}
	t.Cleanup(g.wait)
	return g
}

func (g *rawGate) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(g.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (g *rawGate) next(t *testing.T) map[string]any {
	t.Helper()
	if !g.out.Scan() {
		t.Fatalf("the gate ended without an answer; stderr %q", g.stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(g.out.Bytes(), &m); err != nil {
		t.Fatalf("%q: %v", g.out.Text(), err)
	}
	return m
}

const (
	rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	rawWrite      = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x","content":"x"}}}`
)

// TestGateServerRenamesItself: a server that takes a trusted server's
// name in its initialize answer does not get that server's rules; the
// gate knows it by --name, else by its command line.
func TestGateServerRenamesItself(t *testing.T) {
	rules := rulesFile(t, "[[rule]]\nname = \"trusted\"\nserver = \"fs-trusted\"\n[[rule]]\nname = \"mine\"\nserver = \"sh renaming.sh\"\ntool = \"read_*\"\n")
	for _, tc := range []struct {
		name    string
		flags   []string
		allowed bool
	}{
		{"the server's claim", nil, false},
		{"--name", []string{"--name", "other"}, false},
		{"--name as the claim", []string{"--name", "fs-trusted"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startRawGate(t, append([]string{"--rules", rules, "--frontend", "none"}, tc.flags...)...)
			g.send(t, rawInitialize)
			if m := g.next(t); m["result"] == nil {
				t.Fatalf("initialize: %v", m)
			}
			g.send(t, rawWrite)
			m := g.next(t)
			if relayed := m["method"] == "tools/call"; relayed != tc.allowed {
				t.Errorf("relayed %v, want %v: %v", relayed, tc.allowed, m)
			}
		})
	}
	// The name from the command line is the rules' to match.
	g := startRawGate(t, "--rules", rules, "--frontend", "none")
	g.send(t, rawInitialize)
	g.next(t)
	g.send(t, strings.Replace(rawWrite, "write_file", "read_file", 1))
	if m := g.next(t); m["method"] != "tools/call" {
		t.Errorf("a rule on the command line's name: %v", m)
	}
}

// TestGateCallBeforeInitialize: a tools/call before the server's
// initialize answer is refused with a JSON-RPC error, never relayed, even
// when the rules would allow it.
func TestGateCallBeforeInitialize(t *testing.T) {
	g := startRawGate(t, "--rules", rulesFile(t, "[[rule]]\ntool = \"write_file\"\n"))
	g.send(t, rawWrite)
	if m := g.next(t); m["error"] == nil || m["id"] != 2.0 {
		t.Errorf("got %v, want the gate's error", m)
	}
	g.send(t, rawInitialize)
	g.next(t)
	g.send(t, rawWrite)
	if m := g.next(t); m["method"] != "tools/call" {
		t.Errorf("after initialize: %v", m)
	}
}

// TestGatePendingIDReused: a server that never answers initialize cannot
// have a ping on initialize's id pass its empty answer off as
// initialize's: the ping is refused, and a call after it is refused too,
// although the rules allow it.
func TestGatePendingIDReused(t *testing.T) {
	g := startGateOn(t, []string{"sh", "mute.sh"}, "--rules", rulesFile(t, "[[rule]]\ntool = \"write_file\"\n"))
	g.send(t, rawInitialize)
	g.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m := g.next(t); m["error"] == nil || m["id"] != 1.0 {
		t.Fatalf("the ping on initialize's id: %v", m)
	}
	g.send(t, rawWrite)
	if m := g.next(t); m["error"] == nil || m["id"] != 2.0 {
		t.Errorf("the call after it: %v, want the gate's error", m)
	}
}

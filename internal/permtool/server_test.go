package permtool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/jsonrpc"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/ptytest"
	"github.com/askperm/askperm/prompt"
)

// session is Serve over in-memory pipes, as a client sees it.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func serve(t *testing.T, p *pipeline.Pipeline) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 16), done: make(chan error, 1)}
	go func() {
		err := Serve(context.Background(), Config{Pipeline: p, Version: "test"}, inR, outW)
		outW.Close()
		s.done <- err
	}()
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { inW.Close(); inR.Close(); outR.Close() })
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("sending %s: %v", line, err)
	}
}

// next is the next message the server wrote.
func (s *session) next() string {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server wrote nothing more")
		}
		return line
	case <-time.After(10 * time.Second):
		s.t.Fatal("no answer within 10 s")
	}
	return ""
}

// end closes the client's side and returns what Serve wrote that was not
// read yet (a few lines at most: more would block it), and how it ended.
func (s *session) end() ([]string, error) {
	s.t.Helper()
	s.in.Close()
	var err error
	select {
	case err = <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Fatal("Serve did not return within 10 s of the end of its input")
	}
	var rest []string
	for line := range s.lines {
		rest = append(rest, line)
	}
	return rest, err
}

func canned(t *testing.T, choice, message string) *pipeline.Pipeline {
	t.Helper()
	a, err := answers.Single(choice, message)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.New(pipeline.Config{Timeout: time.Minute, MaxRequest: 1 << 20, Answers: a})
}

// waiting is a pipeline that asks on a terminal nobody answers: its calls
// wait until they are cancelled. asked says when the first prompt is up;
// decided receives each decision.
func waiting(t *testing.T) (p *pipeline.Pipeline, asked <-chan struct{}, decided <-chan decision.Decision) {
	t.Helper()
	ptm, pane := ptytest.Foreground(t, "sleep", "30")
	up := make(chan struct{})
	go func() {
		var screen strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			screen.Write(buf[:n])
			if strings.Contains(screen.String(), "Answer [") {
				close(up)
				io.Copy(io.Discard, ptm)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	ds := make(chan decision.Decision, 4)
	p = pipeline.New(pipeline.Config{
		Timeout: time.Minute, MaxRequest: 1 << 20, Frontends: []decision.Frontend{decision.FrontendLine},
		Prompt: prompt.Options{TTY: pane, Getenv: func(k string) string {
			if k == "TERM" {
				return "dumb"
			}
			return ""
		}},
		Record: func(r pipeline.Record) { ds <- r.Decision },
	})
	return p, up, ds
}

func wait[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10 s", what)
	}
	var zero T
	return zero
}

func call(id, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"approve","arguments":` + args + `}}`
}

const bash = `{"tool_name":"Bash","input":{"command":"ls -la"},"tool_use_id":"toolu_1"}`

// answerLine is the message carrying a call's answer text, as the SDK's
// server wrote it for the approve tool's handler.
func answerLine(id, text string) string {
	b, _ := json.Marshal(text)
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"text":` + string(b) + `,"type":"text"}]}}`
}

func TestServeInitialize(t *testing.T) {
	for _, tc := range []struct{ name, params, want string }{
		{"a version askperm speaks", `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, "2024-11-05"},
		{"the newest", `{"protocolVersion":"2025-11-25"}`, "2025-11-25"},
		{"a version askperm does not speak", `{"protocolVersion":"2099-01-01"}`, "2025-11-25"},
		{"none", `{}`, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, canned(t, "allow-once", ""))
			s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + tc.params + `}`)
			want := `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{}},"protocolVersion":"` + tc.want + `","serverInfo":{"name":"askperm","version":"test"}}}`
			if got := s.next(); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// Notifications are not answered; ping, tools/list and the errors of
// JSON-RPC are, in the order asked.
func TestServeProtocol(t *testing.T) {
	s := serve(t, canned(t, "allow-once", ""))
	for _, tc := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{}}`, ""},
		{`{"jsonrpc":"2.0","id":"r","result":{}}`, ""}, // a response to nothing askperm asked
		{``, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`, `{"jsonrpc":"2.0","id":"list","result":{"tools":[{"name":"approve","description":"Asks askperm whether the tool call may run.","inputSchema":` + string(inputSchema) + `}]}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: \"resources/list\""}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"other","arguments":{}}}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool \"other\""}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[]}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: json: cannot unmarshal array into Go value of type struct { Name string \"json:\\\"name\\\"\"; Arguments json.RawMessage \"json:\\\"arguments\\\"\" }"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not JSON"}}`},
		{`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 request object"}}`},
		{`7`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 request object"}}`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 request object"}}`},
		{`{"jsonrpc":"2.0","id":8}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"invalid request: a request needs \"jsonrpc\":\"2.0\" and a method"}}`},
		{`{"id":9,"method":"ping"}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"invalid request: a request needs \"jsonrpc\":\"2.0\" and a method"}}`},
	} {
		s.send(tc.send)
		if tc.want == "" {
			continue
		}
		if got := s.next(); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.send, got, tc.want)
		}
	}
	if rest, err := s.end(); err != nil || len(rest) != 0 {
		t.Errorf("the end: %v, %q", err, rest)
	}
}

// A call is decided by the pipeline and answered as Answer says; a
// malformed call is a deny answer, not a protocol error.
func TestServeCall(t *testing.T) {
	for _, tc := range []struct {
		name, choice, message, args, want string
	}{
		{"allow", "allow-once", "", bash, `{"behavior":"allow","updatedInput":{"command":"ls -la"}}`},
		{"deny", "deny-once", "no", bash, `{"behavior":"deny","message":"askperm: denied (user): no"}`},
		{"no tool", "allow-once", "", `{"input":{}}`, `{"behavior":"deny","message":"askperm: the call names no tool (tool_name)"}`},
		{"input not an object", "allow-once", "", `{"tool_name":"Bash","input":"ls"}`, `{"behavior":"deny","message":"askperm: input: expected a JSON object"}`},
		{"arguments not an object", "allow-once", "", `[1]`, `{"behavior":"deny","message":"askperm: not a permission prompt call: json: cannot unmarshal array into Go value of type permtool.Call"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, canned(t, tc.choice, tc.message))
			s.send(call(`"c1"`, tc.args))
			if got, want := s.next(), answerLine(`"c1"`, tc.want); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	t.Run("no arguments", func(t *testing.T) {
		s := serve(t, canned(t, "allow-once", ""))
		s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve"}}`)
		var m struct {
			Result struct{ Content []struct{ Text string } }
		}
		got := s.next()
		if json.Unmarshal([]byte(got), &m) != nil || len(m.Result.Content) != 1 ||
			!strings.HasPrefix(m.Result.Content[0].Text, `{"behavior":"deny","message":"askperm: not a permission prompt call: `) {
			t.Errorf("got %s, want a deny", got)
		}
	})
}

// A call waiting for a person does not hold up the session, and the
// client's cancellation ends it: its denial is recorded and no answer
// written (MCP: the receiver should not answer a cancelled request).
// Meanwhile a second call under the same id (1 is 1.0) is refused: a
// cancellation could not tell them apart.
func TestServeCancel(t *testing.T) {
	p, asked, decided := waiting(t)
	s := serve(t, p)
	s.send(call("1.0", bash))
	wait(t, asked, "prompt")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := s.next(); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("ping while a call waits: %s", got)
	}
	s.send(call("1", bash))
	if got := s.next(); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: a call with this id is still running"}}` {
		t.Errorf("a second call under the id: %s", got)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user pressed Escape"}}`)
	if d := wait(t, decided, "decision"); d.Decision != decision.Deny || d.Cause != decision.CauseCancelled {
		t.Errorf("the cancelled call's decision: %+v", d)
	}
	time.Sleep(50 * time.Millisecond) // an answer, if written, would be out by now
	s.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := s.next(); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("after the cancellation: %s", got)
	}
	if rest, err := s.end(); err != nil || len(rest) != 0 {
		t.Errorf("the end: %v, %q", err, rest)
	}
}

// The end of the input cancels the calls still running, which nobody can
// receive answers for, and Serve returns once they are decided.
func TestServeEOFWithACallInFlight(t *testing.T) {
	p, asked, decided := waiting(t)
	s := serve(t, p)
	s.send(call("1", bash))
	wait(t, asked, "prompt")
	rest, err := s.end()
	if err != nil || len(rest) != 0 {
		t.Errorf("the end: %v, %q", err, rest)
	}
	select {
	case d := <-decided:
		if d.Cause != decision.CauseCancelled {
			t.Errorf("the call's decision: %+v", d)
		}
	default:
		t.Error("Serve returned before the call was decided")
	}
}

// The caller's context (its signals) ends the session as the end of the
// input does.
func TestServeContextEnds(t *testing.T) {
	p, asked, decided := waiting(t)
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Config{Pipeline: p}, inR, outW) }()
	io.WriteString(inW, call("1", bash)+"\n")
	wait(t, asked, "prompt")
	cancel()
	if err := wait(t, done, "return"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if d := wait(t, decided, "decision"); d.Cause != decision.CauseCancelled {
		t.Errorf("the call's decision: %+v", d)
	}
}

// A message over the cap ends the session with an error, and nothing
// after it is read.
func TestServeLineTooLong(t *testing.T) {
	in := io.MultiReader(io.LimitReader(repeat('x'), jsonrpc.MaxLine+1), strings.NewReader("\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"))
	var out strings.Builder
	err := Serve(context.Background(), Config{Pipeline: canned(t, "allow-once", "")}, in, &out)
	if !errors.Is(err, jsonrpc.ErrTooLong) || out.Len() != 0 {
		t.Errorf("got %v, wrote %q", err, out.String())
	}
}

// repeat reads b forever.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

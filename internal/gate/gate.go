// Package gate is an MCP proxy on stdio that asks before a tool runs: it
// starts the MCP server, relays every message both ways unchanged, and
// holds each tools/call until the pipeline decided it. What the client
// sends that the gate cannot read unambiguously (not JSON, a batch, a
// name given twice or in two cases) is answered with an error instead of
// relayed: the server might read a tools/call in it. An allowed call goes
// on to the server; a denied one never reaches it, and the client gets a
// tool error carrying the denial. Calls in flight are decided at once
// (their prompts queue in the pipeline); a call before the server's
// initialize answer (an InitializeResult) reached the client is refused,
// and so is any request on the id of one still pending, whose answers
// the gate could not tell apart. The server is known by
// the name the person configured (or DefaultName of its command line),
// never by the name it gives itself, which a call shows only as the
// server's own words. Its annotations, from its latest tools/list answer
// and dropped when it says the list changed, describe the calls
// (internal/describe).
package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/jsonnames"
	"github.com/askperm/askperm/internal/jsonrpc"
	"github.com/askperm/askperm/internal/pipeline"
)

// Config is what a gate runs.
type Config struct {
	// Command is the MCP server and its arguments.
	Command []string
	// Name is the server's name in requests; "" is DefaultName(Command).
	Name string
	// Pipeline decides each call.
	Pipeline *pipeline.Pipeline
	// Client is the MCP client's side: its messages in, ours out.
	In  io.Reader
	Out io.Writer
	// Stderr receives the server's diagnostics and the gate's.
	Stderr io.Writer
}

// closeGrace is how long the server may take to exit once its client has
// gone, before it is terminated.
const closeGrace = 2 * time.Second

// gate is one running proxy.
type gate struct {
	c        Config
	toServer *jsonrpc.Writer
	toClient *jsonrpc.Writer

	name string // the server's, as configured

	mu          sync.Mutex
	pending     map[string]string // idKey -> method, of the client's requests not yet answered
	annotations map[string]*decision.Annotations
	initialized bool   // the server's initialize answer went to the client
	claim       string // the name the server gives itself
}

// Methods of pending requests whose answers the gate reads; a tools/list
// with a non-empty cursor asks for a further page of the same list (an
// empty one, as none, asks for the list anew).
const (
	initialize    = "initialize"
	toolsList     = "tools/list"
	toolsListMore = "tools/list, a further page"
)

// Run runs the gate until the server exits, and returns its exit status.
// The client's end (EOF) closes the server's stdin, once the calls it sent
// are decided, and ends it.
func Run(ctx context.Context, c Config) (int, error) {
	if len(c.Command) == 0 {
		return 0, errors.New("gate: no MCP server to run")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Stderr = c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	serverIn, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	serverOut, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("gate: starting %s: %w", c.Command[0], err)
	}
	g := &gate{
		c: c, toServer: jsonrpc.NewWriter(serverIn), toClient: jsonrpc.NewWriter(c.Out),
		pending: map[string]string{}, annotations: map[string]*decision.Annotations{}, name: c.Name,
	}
	if g.name == "" {
		g.name = DefaultName(c.Command)
	}
	var calls sync.WaitGroup
	go func() {
		g.fromClient(ctx, c.In, &calls)
		// The client sends no more: the calls it sent are decided, then
		// the server's stdin closes, and a server that does not exit then
		// is terminated.
		calls.Wait()
		serverIn.Close()
		time.AfterFunc(closeGrace, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) })
	}()
	g.fromServer(serverOut)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), nil
	case err != nil:
		return 0, err
	}
	return 0, nil
}

// fromClient relays the client's messages, holding each tools/call for a
// decision. A message over jsonrpc.MaxLine ends the client's side.
func (g *gate) fromClient(ctx context.Context, in io.Reader, calls *sync.WaitGroup) {
	r := jsonrpc.NewReader(in)
	for {
		line, err := r.Read()
		if len(line) > 0 {
			g.clientMessage(ctx, line, calls)
		}
		if err != nil {
			return
		}
	}
}

func (g *gate) clientMessage(ctx context.Context, line []byte, calls *sync.WaitGroup) {
	trimmed := bytes.TrimSpace(line)
	switch {
	case len(trimmed) == 0:
		return
	case trimmed[0] == '[':
		// A batch could carry a tools/call past the gate: MCP has none
		// since 2025-06-18, and the gate takes none.
		g.toClient.Write(jsonrpc.Error(nil, jsonrpc.InvalidRequest, "askperm gate: JSON-RPC batches are not supported"))
		return
	}
	env, code := jsonrpc.Decode(trimmed)
	if code == 0 && !jsonnames.Unambiguous(trimmed) {
		code = jsonrpc.InvalidRequest
	}
	if code != 0 {
		// What the gate cannot read for sure, a lenient server might read
		// as a tools/call: it is answered here, never relayed.
		g.toClient.Write(jsonrpc.Error(nil, code, "askperm gate: not a JSON-RPC message the gate can read unambiguously"))
		return
	}
	if env.Method != "" && env.ID != nil && !g.open(env) {
		// The server's answer to either could be read as the other's
		// (an empty result as initialize's): MCP forbids reusing an id,
		// and the gate relays no such request.
		g.toClient.Write(jsonrpc.Error(env.ID, jsonrpc.InvalidRequest, "askperm gate: a request with this id is still pending"))
		return
	}
	if env.Method == "tools/call" {
		if env.ID == nil {
			return // a call without an id gets no answer, and never runs
		}
		g.mu.Lock()
		initialized := g.initialized
		g.mu.Unlock()
		if !initialized {
			// Before initialize, the gate knows nothing of the server's
			// tools, and the server may not be the one that answers.
			g.answer(env.ID, jsonrpc.Error(env.ID, jsonrpc.InvalidRequest, "askperm gate: tools/call before initialize completed"))
			return
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			g.call(ctx, line, env)
		}()
		return
	}
	g.toServer.Write(line)
}

// open records env, a client's request with an id, as pending, unless a
// request with its id is pending already.
func (g *gate) open(env jsonrpc.Message) bool {
	method := env.Method
	if method == toolsList {
		var params struct {
			Cursor string `json:"cursor"`
		}
		if json.Unmarshal(env.Params, &params) == nil && params.Cursor != "" {
			method = toolsListMore
		}
	}
	key := idKey(env.ID)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, dup := g.pending[key]; dup {
		return false
	}
	g.pending[key] = method
	return true
}

// answer sends the client the gate's own answer to its request id, which
// is then no longer pending.
func (g *gate) answer(id json.RawMessage, msg []byte) {
	g.mu.Lock()
	delete(g.pending, idKey(id))
	g.mu.Unlock()
	g.toClient.Write(msg)
}

// idKey is the pending key of a request id: a number in one form
// (1, 1.0 and 1e0 are one id to a server that reads numbers), a string
// as written.
func idKey(id json.RawMessage) string {
	if id[0] == '"' {
		return string(id)
	}
	f, err := strconv.ParseFloat(string(id), 64)
	if err != nil {
		return string(id)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// call decides one tools/call and forwards it, or answers it with the
// denial.
func (g *gate) call(ctx context.Context, line []byte, env jsonrpc.Message) {
	g.mu.Lock()
	claim := g.claim
	g.mu.Unlock()
	req, err := describeCall(g.name, env.Params, func(tool string) *decision.Annotations {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.annotations[tool]
	})
	reason := "askperm: denied"
	if err == nil {
		if claim != "" && claim != g.name {
			req.Reason = claimed(claim)
		}
		out := g.c.Pipeline.DecideRequest(ctx, req)
		switch {
		case out.Decision != nil && out.Decision.Decision == decision.Allow:
			g.toServer.Write(line)
			return
		case out.Decision != nil:
			reason = denialText(*out.Decision)
		default:
			err = out.Err
		}
	}
	if err != nil {
		reason = "askperm: denied: " + err.Error()
	}
	g.answer(env.ID, denial(env.ID, reason))
}

// denialText is what the client reads of a deny.
func denialText(d decision.Decision) string {
	s := "askperm: denied (" + string(d.Cause) + ")"
	if d.Message != "" {
		s += ": " + d.Message
	}
	return s
}

// claimed is the request's reason for a server that names itself other
// than configured: its own words, shown as such, cut to a line.
func claimed(name string) string {
	const most = 200
	if len(name) > most {
		name = strings.ToValidUTF8(name[:most], "") + "…"
	}
	return fmt.Sprintf("The server calls itself %q; askperm knows it by the name configured for it", name)
}

// fromServer relays the server's messages, reading its annotations and
// name from the answers the gate waits for, and its notices that the
// tools changed. A message over jsonrpc.MaxLine ends the server's side.
func (g *gate) fromServer(out io.Reader) {
	r := jsonrpc.NewReader(out)
	for {
		line, err := r.Read()
		if len(line) > 0 {
			g.serverMessage(line)
			g.toClient.Write(line)
		}
		if err != nil {
			return
		}
	}
}

// serverMessage reads what the gate learns of one of the server's
// messages, before the client gets it: a call the client sends once it
// has the initialize answer finds the gate initialized.
func (g *gate) serverMessage(line []byte) {
	var env jsonrpc.Message
	if json.Unmarshal(line, &env) != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if env.Method == "notifications/tools/list_changed" {
		// What the old list said of a tool no longer holds: until the
		// next tools/list answer, every tool is unknown (destructive).
		g.annotations = map[string]*decision.Annotations{}
		return
	}
	if env.ID == nil || env.Method != "" {
		return
	}
	key := idKey(env.ID)
	method, ok := g.pending[key]
	if !ok {
		return
	}
	delete(g.pending, key)
	switch method {
	case initialize:
		// Only an InitializeResult initializes: an error, or any other
		// result (a ping's {}), is no sign the server is ready.
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      *struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		}
		if env.Result == nil || json.Unmarshal(env.Result, &res) != nil || res.ProtocolVersion == "" || res.ServerInfo == nil {
			return
		}
		g.initialized, g.claim = true, res.ServerInfo.Name
	case toolsList, toolsListMore:
		var res struct {
			Tools []struct {
				Name        string `json:"name"`
				Annotations *struct {
					Title           string `json:"title"`
					ReadOnlyHint    *bool  `json:"readOnlyHint"`
					DestructiveHint *bool  `json:"destructiveHint"`
					IdempotentHint  *bool  `json:"idempotentHint"`
					OpenWorldHint   *bool  `json:"openWorldHint"`
				} `json:"annotations"`
			} `json:"tools"`
		}
		if method == toolsList {
			// Each listing replaces the last: a tool it leaves out, or
			// lists without annotations, is unknown again (all of them,
			// when the answer is an error).
			g.annotations = map[string]*decision.Annotations{}
		}
		if json.Unmarshal(env.Result, &res) != nil {
			return
		}
		for _, t := range res.Tools {
			if a := t.Annotations; a != nil {
				g.annotations[t.Name] = &decision.Annotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint,
					DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
			}
		}
	}
}

// denial is a tool result that is an error, carrying text.
func denial(id json.RawMessage, text string) []byte {
	return jsonrpc.Response(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true})
}

package permtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/askperm/askperm/internal/jsonrpc"
)

// protocolVersions are the MCP versions askperm speaks, newest first. For
// one tool on stdio they ask the same of a server.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Serve is the approve tool's MCP server on stdio: it reads the client's
// messages from in, one per line, and writes its answers to out, until in
// ends (nil), ctx ends (nil: the caller's signal) or in cannot be read (the
// error; a message over jsonrpc.MaxLine is one). Each call is decided on its
// own, at once: their prompts queue in the pipeline. When the session ends,
// the calls still running are cancelled and waited for: their denials are
// recorded, but nobody reads their answers any more, so none is written.
func Serve(ctx context.Context, c Config, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{c: c, ctx: ctx, out: jsonrpc.NewWriter(out), running: map[string]*running{}}
	read := make(chan error, 1)
	go func() { read <- s.read(in) }()
	var err error
	select {
	case err = <-read:
	case <-ctx.Done():
	}
	s.end()
	cancel()
	s.calls.Wait()
	return err
}

// server is one session.
type server struct {
	c   Config
	ctx context.Context // ends with the session
	out *jsonrpc.Writer

	mu      sync.Mutex
	ended   bool
	running map[string]*running // by idKey
	calls   sync.WaitGroup
}

// running is a call being decided.
type running struct {
	cancel context.CancelFunc
	// withdrawn says the client cancelled it: it reads no answer.
	withdrawn bool
}

func (s *server) read(in io.Reader) error {
	r := jsonrpc.NewReader(in)
	for {
		line, err := r.Read()
		if len(line) > 0 {
			s.message(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// end stops the session from starting calls or writing answers.
func (s *server) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.out.Close()
}

func (s *server) message(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	m, code := jsonrpc.Decode(line)
	switch code {
	case jsonrpc.ParseError:
		s.out.Write(jsonrpc.Error(nil, code, "parse error: the message is not JSON"))
		return
	case jsonrpc.InvalidRequest:
		s.out.Write(jsonrpc.Error(nil, code, "invalid request: not a JSON-RPC 2.0 request object"))
		return
	}
	switch {
	case m.Method == "" && (m.Result != nil || m.Error != nil):
		// A response: askperm sends no requests, so it answers none.
	case m.JSONRPC != "2.0" || m.Method == "":
		s.out.Write(jsonrpc.Error(m.ID, jsonrpc.InvalidRequest, `invalid request: a request needs "jsonrpc":"2.0" and a method`))
	case m.ID == nil:
		s.notification(m)
	default:
		s.request(m)
	}
}

// idKey identifies a request by its id's value, not its spelling, as the
// client's cancellation may spell it otherwise (1.0 for 1).
func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) == nil {
		switch v := v.(type) {
		case float64:
			return strconv.FormatFloat(v, 'g', -1, 64)
		case string:
			return strconv.Quote(v)
		}
	}
	return string(id) // a number beyond float64's range: as written
}

func (s *server) request(m jsonrpc.Message) {
	switch m.Method {
	case "initialize":
		s.out.Write(jsonrpc.Response(m.ID, map[string]any{
			"protocolVersion": negotiate(m.Params),
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]string{"name": "askperm", "version": s.c.Version},
		}))
	case "ping":
		s.out.Write(jsonrpc.Response(m.ID, map[string]any{}))
	case "tools/list":
		s.out.Write(jsonrpc.Response(m.ID, map[string]any{"tools": []tool{approveTool}}))
	case "tools/call":
		s.call(m)
	default:
		s.out.Write(jsonrpc.Error(m.ID, jsonrpc.MethodNotFound, fmt.Sprintf("method not found: %q", m.Method)))
	}
}

// negotiate is the protocol version of the session: the client's when
// askperm speaks it, else askperm's newest, as MCP's lifecycle says (the
// client then speaks it or hangs up).
func negotiate(params json.RawMessage) string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p) // unreadable params ask for no version
	if slices.Contains(protocolVersions, p.ProtocolVersion) {
		return p.ProtocolVersion
	}
	return protocolVersions[0]
}

// call starts deciding a tools/call. Only a call to another tool is a
// protocol error: the approve tool's arguments are checked by Decide, so
// that a malformed call is a deny answer.
func (s *server) call(m jsonrpc.Message) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		s.out.Write(jsonrpc.Error(m.ID, jsonrpc.InvalidParams, "invalid params: "+err.Error()))
		return
	}
	if p.Name != Name {
		s.out.Write(jsonrpc.Error(m.ID, jsonrpc.InvalidParams, fmt.Sprintf("unknown tool %q", p.Name)))
		return
	}
	key := idKey(m.ID)
	s.mu.Lock()
	_, twin := s.running[key]
	if s.ended || twin {
		s.mu.Unlock()
		if twin { // a cancellation could not tell them apart
			s.out.Write(jsonrpc.Error(m.ID, jsonrpc.InvalidRequest, "invalid request: a call with this id is still running"))
		}
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	r := &running{cancel: cancel}
	s.running[key] = r
	s.calls.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.calls.Done()
		defer cancel()
		text := Answer(Decide(ctx, s.c, p.Arguments))
		s.mu.Lock()
		delete(s.running, key)
		withdrawn := r.withdrawn
		s.mu.Unlock()
		if !withdrawn {
			s.out.Write(jsonrpc.Response(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}}))
		}
	}()
}

// notification handles what a notification asks of a one-tool server:
// only a cancellation asks anything.
func (s *server) notification(m jsonrpc.Message) {
	if m.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.RequestID == nil || !jsonrpc.ValidID(p.RequestID) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.running[idKey(p.RequestID)]; ok {
		// MCP: the receiver of a cancellation should not answer the
		// request. The pipeline still records the call's denial.
		r.withdrawn = true
		r.cancel()
	}
}

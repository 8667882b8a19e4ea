package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// toolCall is the one call a mock model asks for: a tool's name, within
// a namespace of tools when the API has them (the Responses API's MCP
// servers), and its input.
type toolCall struct {
	name      string
	input     map[string]any
	namespace string
}

// anthropicMock is a model behind the Anthropic Messages API on loopback:
// a request that offers the tool it wants asks for that one call; the
// request that carries the call's result is answered with a final text,
// and the result is kept for the test. Any other request (the agent's own
// side questions: titles, quota checks) gets a short text.
type anthropicMock struct {
	srv  *httptest.Server
	call toolCall

	mu      sync.Mutex
	results []string // the tool_result texts the agent sent back
	log     []string // every request's path, for failure messages
}

func newAnthropicMock(t *testing.T, call toolCall) *anthropicMock {
	t.Helper()
	m := &anthropicMock{call: call}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// anthropicRequest is the part of a Messages API request the mock reads.
type anthropicRequest struct {
	Stream   bool `json:"stream"`
	Tools    []struct{ Name string }
	Messages []struct {
		Role    string
		Content json.RawMessage
	}
}

// block is one content block of a message.
type block struct {
	Type    string
	Text    string
	Content json.RawMessage
}

func (m *anthropicMock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.log = append(m.log, r.Method+" "+r.URL.Path+" "+toolNames(body))
	m.mu.Unlock()
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			fmt.Fprint(w, `{"input_tokens":10}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	offered := false
	for _, tool := range req.Tools {
		offered = offered || tool.Name == m.call.name
	}
	var last []block
	if n := len(req.Messages); n > 0 {
		if json.Unmarshal(req.Messages[n-1].Content, &last) != nil {
			last = nil // a plain string: the user's prompt
		}
	}
	var result *string
	for _, b := range last {
		if b.Type == "tool_result" {
			s := toolResultText(b.Content)
			result = &s
		}
	}
	switch {
	case result != nil:
		m.mu.Lock()
		m.results = append(m.results, *result)
		m.mu.Unlock()
		writeAnthropic(w, req.Stream, map[string]any{"type": "text", "text": "done"}, "end_turn")
	case offered:
		writeAnthropic(w, req.Stream, map[string]any{"type": "tool_use", "id": "toolu_mock1", "name": m.call.name, "input": m.call.input}, "tool_use")
	default:
		writeAnthropic(w, req.Stream, map[string]any{"type": "text", "text": "ok"}, "end_turn")
	}
}

// toolNames lists the tools a request offers, for failure messages.
func toolNames(body []byte) string {
	var req anthropicRequest
	json.Unmarshal(body, &req)
	names := make([]string, len(req.Tools))
	for i, tool := range req.Tools {
		names[i] = tool.Name
	}
	return "(tools: " + strings.Join(names, " ") + ")"
}

// toolResultText is a tool_result's content: a string or text blocks.
func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// writeAnthropic answers with one content block, as one JSON message or
// as the event stream the streaming API sends.
func writeAnthropic(w http.ResponseWriter, stream bool, content map[string]any, stop string) {
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_mock", "type": "message", "role": "assistant",
			"model": "claude-mock", "content": []any{content}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"message": map[string]any{"id": "msg_mock", "type": "message", "role": "assistant",
		"model": "claude-mock", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	start, delta := map[string]any{}, map[string]any{}
	for k, v := range content {
		start[k] = v
	}
	if content["type"] == "tool_use" {
		start["input"] = map[string]any{}
		in, _ := json.Marshal(content["input"])
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
	} else {
		start["text"] = ""
		delta = map[string]any{"type": "text_delta", "text": content["text"]}
	}
	event("content_block_start", map[string]any{"index": 0, "content_block": start})
	event("content_block_delta", map[string]any{"index": 0, "delta": delta})
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	event("message_stop", map[string]any{})
}

// toolResults is what the agent sent back as the tool's results so far.
func (m *anthropicMock) toolResults() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.results...)
}

func (m *anthropicMock) requests() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.log, ", ")
}

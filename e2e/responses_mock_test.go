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

// responsesMock is a model behind the OpenAI Responses API on loopback, as
// Codex's custom model providers speak it: a request that offers the tool
// it wants asks for that one call (a function call, its arguments as a
// JSON string); the request that carries the call's output is answered
// with a final message, and the output is kept for the test.
type responsesMock struct {
	srv  *httptest.Server
	call toolCall

	mu      sync.Mutex
	outputs []string // the function_call_output texts the agent sent back
	tools   []string // the tools the first request offered
}

func newResponsesMock(t *testing.T, call toolCall) *responsesMock {
	t.Helper()
	m := &responsesMock{call: call}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *responsesMock) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Tools []struct{ Type, Name string }
		Input []struct {
			Type   string
			CallID string `json:"call_id"`
			Output json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	offered := false
	if m.tools == nil {
		for _, tool := range req.Tools {
			m.tools = append(m.tools, tool.Type+":"+tool.Name)
		}
	}
	want := m.call.name
	if m.call.namespace != "" {
		want = m.call.namespace
	}
	for _, tool := range req.Tools {
		offered = offered || tool.Name == want
	}
	answered := false
	for _, item := range req.Input {
		if item.Type == "function_call_output" && item.CallID == "call_mock1" {
			answered = true
			m.outputs = append(m.outputs, outputText(item.Output))
		}
	}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_mock"}})
	if offered && !answered {
		args, _ := json.Marshal(m.call.input)
		item := map[string]any{"type": "function_call", "call_id": "call_mock1", "name": m.call.name, "arguments": string(args)}
		if m.call.namespace != "" {
			item["namespace"] = m.call.namespace
		}
		event(map[string]any{"type": "response.output_item.done", "item": item})
	} else {
		event(map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "message", "role": "assistant", "id": "msg_mock",
			"content": []any{map[string]any{"type": "output_text", "text": "done"}}}})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_mock",
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}})
}

// outputText is a function_call_output's output: a string or content items.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct{ Text string }
	json.Unmarshal(raw, &items)
	var parts []string
	for _, it := range items {
		parts = append(parts, it.Text)
	}
	return strings.Join(parts, "\n")
}

// callOutputs is what the agent sent back as the call's output so far.
func (m *responsesMock) callOutputs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.outputs...)
}

// offeredTools names the tools the agent offered the model.
func (m *responsesMock) offeredTools() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.tools, ", ")
}

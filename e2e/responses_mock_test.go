package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// responsesMock is a model behind the OpenAI Responses API on loopback, as
// Codex's custom model providers speak it: a request that offers the tool
// it wants asks for that one call (a function call, its arguments as a
// JSON string); the request that carries the call's output is answered
// with a final message, and the output is kept for the test.
type responsesMock struct{ modelLog }

func newResponsesMock(t *testing.T, call toolCall) *responsesMock {
	m := &responsesMock{}
	m.start(t, call, m.serve)
	return m
}

func (m *responsesMock) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tools []struct{ Type, Name string }
		Input []struct {
			Type   string
			CallID string `json:"call_id"`
			Output json.RawMessage
		}
	}
	if !m.decode(w, r, "/responses", &req) {
		return
	}
	want := m.call.name
	if m.call.namespace != "" {
		want = m.call.namespace
	}
	offered := false
	names := make([]string, len(req.Tools))
	for i, tool := range req.Tools {
		names[i] = tool.Type + ":" + tool.Name
		offered = offered || tool.Name == want
	}
	var result *string
	for _, item := range req.Input {
		if item.Type == "function_call_output" && item.CallID == "call_mock1" {
			s := contentText(item.Output)
			result = &s
		}
	}
	m.record(result, r.URL.Path+" offering "+strings.Join(names, " "))
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		sseEvent(w, data["type"].(string), data)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_mock"}})
	if offered && result == nil {
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

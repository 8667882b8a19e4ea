package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// anthropicMock is a model behind the Anthropic Messages API on loopback:
// a request that offers the tool it wants asks for that one call; the
// request that carries the call's result is answered with a final text,
// and the result is kept for the test. Any other request (the agent's own
// side questions: titles, quota checks) gets a short text.
type anthropicMock struct{ modelLog }

func newAnthropicMock(t *testing.T, call toolCall) *anthropicMock {
	m := &anthropicMock{}
	m.start(t, call, m.serve)
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

// contentBlock is one content block of a message.
type contentBlock struct {
	Type    string
	Content json.RawMessage
}

func (m *anthropicMock) serve(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	if !m.decode(w, r, "/v1/messages", &req) {
		return
	}
	offered := false
	names := make([]string, len(req.Tools))
	for i, tool := range req.Tools {
		names[i] = tool.Name
		offered = offered || tool.Name == m.call.name
	}
	var last []contentBlock
	if n := len(req.Messages); n > 0 {
		if json.Unmarshal(req.Messages[n-1].Content, &last) != nil {
			last = nil // a plain string: the user's prompt
		}
	}
	var result *string
	for _, b := range last {
		if b.Type == "tool_result" {
			s := contentText(b.Content)
			result = &s
		}
	}
	m.record(result, r.URL.Path+" offering "+strings.Join(names, " "))
	switch {
	case result != nil:
		writeAnthropic(w, req.Stream, map[string]any{"type": "text", "text": "done"}, "end_turn")
	case offered:
		writeAnthropic(w, req.Stream, map[string]any{"type": "tool_use", "id": "toolu_mock1", "name": m.call.name, "input": m.call.input}, "tool_use")
	default:
		writeAnthropic(w, req.Stream, map[string]any{"type": "text", "text": "ok"}, "end_turn")
	}
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
		sseEvent(w, name, data)
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

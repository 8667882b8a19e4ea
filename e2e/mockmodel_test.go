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

// modelLog is what a mock model saw: the results of its call the agent
// sent back, and notes on each request for failure messages.
type modelLog struct {
	srv  *httptest.Server
	call toolCall

	mu      sync.Mutex
	sent    []string
	remarks []string
}

// start serves handler on loopback until the test ends.
func (l *modelLog) start(t *testing.T, call toolCall, handler http.HandlerFunc) {
	l.call = call
	l.srv = httptest.NewServer(handler)
	t.Cleanup(l.srv.Close)
}

// decode reads a request to the path ending in suffix into req; any other
// request is noted and answered 404, and decode reports false.
func (l *modelLog) decode(w http.ResponseWriter, r *http.Request, suffix string, req any) bool {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, suffix) || json.Unmarshal(body, req) != nil {
		l.record(nil, r.Method+" "+r.URL.Path+" (not served)")
		http.NotFound(w, r)
		return false
	}
	return true
}

// sseEvent writes one server-sent event, as both APIs stream them.
func sseEvent(w io.Writer, name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
}

func (l *modelLog) record(result *string, remark string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if result != nil {
		l.sent = append(l.sent, *result)
	}
	l.remarks = append(l.remarks, remark)
}

// results is what the agent sent back as the call's results so far.
func (l *modelLog) results() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent...)
}

// notes describes the requests so far, for failure messages.
func (l *modelLog) notes() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.remarks, "\n")
}

// contentText is a tool result's content as both APIs send it: a string,
// or items with text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct{ Text string }
	json.Unmarshal(raw, &items)
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.Text
	}
	return strings.Join(parts, "\n")
}

package gate

import (
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

func TestCallRequest(t *testing.T) {
	ro := &decision.Annotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)}
	req, err := CallRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/etc/hosts"}}}`+"\n"), "fs", ro)
	if err != nil || req.Server != "fs" || req.Tool != "read_file" || req.Action != "read" || req.Dimensions[0].Value != "/etc/hosts" {
		t.Fatalf("CallRequest = %+v, %v", req, err)
	}
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                    `method "tools/list"`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`:          "names no tool",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"x","params":{"name":"t"}}`: "unambiguously",
		`not json`: "unambiguously",
	} {
		if _, err := CallRequest([]byte(line), "fs", nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CallRequest(%s) = %v, want an error saying %q", line, err, want)
		}
	}
}

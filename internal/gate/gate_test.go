package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/pipeline"
)

// run runs the gate in front of `cat`, which answers every message with
// itself, feeding it in; it returns what the client got.
func run(t *testing.T, p *pipeline.Pipeline, in string) []map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, err := Run(ctx, Config{Command: []string{"cat"}, Pipeline: p, In: strings.NewReader(in), Out: &out, Stderr: &errOut})
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v; stderr %s", code, err, errOut.String())
	}
	var msgs []map[string]any
	dec := json.NewDecoder(&out)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return msgs
		} else if err != nil {
			t.Fatalf("the client got %q: %v", out.String(), err)
		}
		msgs = append(msgs, m)
	}
}

// byID indexes messages by their numeric id: the gate's own answers and
// the server's come in no fixed order.
func byID(msgs []map[string]any) map[float64]map[string]any {
	out := map[float64]map[string]any{}
	for _, m := range msgs {
		id, _ := m["id"].(float64)
		out[id] = m
	}
	return out
}

func deciding(t *testing.T, choice string) *pipeline.Pipeline {
	t.Helper()
	a, err := answers.Single(choice, "not this one")
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.New(pipeline.Config{Timeout: time.Minute, MaxRequest: 1 << 20, Answers: a})
}

// Messages that are not tool calls pass unchanged; an allowed call
// reaches the server; a denied one is answered by the gate with a tool
// error, and the server never sees it.
func TestRelayAndDecide(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x"}}}
`
	allowed := byID(run(t, deciding(t, "allow-once"), in))
	if len(allowed) != 2 || allowed[1]["method"] != "ping" || allowed[2]["method"] != "tools/call" {
		t.Errorf("allowed: %v", allowed)
	}
	denied := byID(run(t, deciding(t, "deny-once"), in))
	if len(denied) != 2 || denied[1]["method"] != "ping" {
		t.Fatalf("denied: %v", denied)
	}
	res, _ := denied[2]["result"].(map[string]any)
	text, _ := json.Marshal(res["content"])
	if denied[2]["method"] != nil || res["isError"] != true || !strings.Contains(string(text), "not this one") {
		t.Errorf("the denial: %v", denied[2])
	}
}

// A batch could carry a call past the gate: it is refused whole.
func TestBatchRefused(t *testing.T) {
	msgs := run(t, deciding(t, "allow-once"), `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]`+"\n")
	if len(msgs) != 1 || msgs[0]["error"] == nil {
		t.Errorf("got %v", msgs)
	}
}

// The server's annotations from tools/list describe later calls.
func TestAnnotationsLearned(t *testing.T) {
	var got []*decision.Request
	p := pipeline.New(pipeline.Config{Timeout: time.Minute, MaxRequest: 1 << 20, Record: func(r pipeline.Record) { got = append(got, r.Request) }})
	in := `{"jsonrpc":"2.0","id":"l","method":"tools/list"}
`
	// cat answers tools/list with itself, which has no result: nothing is
	// learned, and a call is destructive.
	run(t, p, in+`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{}}}`+"\n")
	if len(got) != 1 || got[0].Action != "destructive" {
		t.Fatalf("got %+v", got)
	}
	g := &gate{pending: map[string]string{`"l"`: "tools/list"}, annotations: map[string]*decision.Annotations{}}
	g.serverMessage([]byte(`{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"read_file","annotations":{"readOnlyHint":true}}]}}`))
	if a := g.annotations["read_file"]; a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
		t.Errorf("annotations: %+v", g.annotations)
	}
}

// A message another reader could take for a tools/call the gate did not
// see is answered with an error and never reaches the server.
func TestAmbiguousRefused(t *testing.T) {
	for name, line := range map[string]string{
		"a method in two cases":          `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":"write_file"}}`,
		"a method given twice":           `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"write_file"}}`,
		"a method escaped the same":      `{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"tools/call","params":{"name":"write_file"}}`,
		"params folded (long s)":         `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"},"paramſ":{"name":"read_file"}}`,
		"a tool name in two cases":       `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","Name":"read_file"}}`,
		"an argument given twice":        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x","path":"/etc/passwd"}}}`,
		"a jsonrpc version not a string": `{"jsonrpc":2.0,"id":1,"method":"tools/call","params":{"name":"write_file"}}`,
		"NaN, which some servers read":   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"n":NaN}}}`,
		"two values":                     `{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file"}}`,
		"invalid UTF-8":                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"p\":\"\xff\"}}}",
	} {
		t.Run(name, func(t *testing.T) {
			msgs := run(t, deciding(t, "allow-once"), line+"\n\n")
			if len(msgs) != 1 || msgs[0]["error"] == nil || msgs[0]["method"] != nil {
				t.Errorf("got %v, want the gate's error alone", msgs)
			}
		})
	}
}

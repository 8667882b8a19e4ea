package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/jsonrpc"
	"github.com/askperm/askperm/internal/pipeline"
)

// server is the stand-in MCP server: it names itself "fs-trusted" in its
// initialize answer and sends every other message back as it came.
var server = []string{"sh", "testdata/renaming.sh", "fs-trusted"}

// run runs the gate in front of server with p, initializes it, then feeds
// in; it returns what the client got after the initialize answer.
func run(t *testing.T, p *pipeline.Pipeline, in string) []map[string]any {
	t.Helper()
	return exchange(t, Config{Command: server, Pipeline: p}, true, in)
}

// exchange runs the gate of c as a client would: when initialize is set,
// it sends initialize and waits for its answer, which it leaves out of
// what it returns; then it sends in and reads until the gate ends.
func exchange(t *testing.T, c Config, initialize bool, in string) []map[string]any {
	t.Helper()
	clientIn, toGate := io.Pipe()
	fromGate, clientOut := io.Pipe()
	var errOut bytes.Buffer
	c.In, c.Out, c.Stderr = clientIn, clientOut, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := Run(ctx, c)
		clientOut.Close()
		done <- result{code, err}
	}()
	lines := bufio.NewScanner(fromGate)
	lines.Buffer(nil, 1<<20)
	if initialize {
		io.WriteString(toGate, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n")
		if !lines.Scan() || !strings.Contains(lines.Text(), `"serverInfo"`) {
			t.Fatalf("no initialize answer: %q", lines.Text())
		}
	}
	go func() {
		io.WriteString(toGate, in)
		toGate.Close()
	}()
	var msgs []map[string]any
	for lines.Scan() {
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("the client got %q: %v", lines.Text(), err)
		}
		msgs = append(msgs, m)
	}
	if r := <-done; r.err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v; stderr %s", r.code, r.err, errOut.String())
	}
	return msgs
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

// recorded runs the gate of c (the stand-in server unless given),
// initialized, with in, and returns the requests its calls made.
func recorded(t *testing.T, c Config, in string) []*decision.Request {
	t.Helper()
	var got []*decision.Request
	c.Pipeline = pipeline.New(pipeline.Config{Timeout: time.Minute, MaxRequest: 1 << 20, Record: func(r pipeline.Record) { got = append(got, r.Request) }})
	if c.Command == nil {
		c.Command = server
	}
	exchange(t, c, true, in)
	return got
}

const readCall = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{}}}` + "\n"

// The server's annotations from tools/list describe later calls; each
// listing replaces the last, and the server's notice that its tools
// changed drops them: a tool then unknown is destructive.
func TestAnnotationsLearned(t *testing.T) {
	// The stand-in answers tools/list with itself, which has no result:
	// nothing is learned, and a call is destructive.
	got := recorded(t, Config{}, `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`+"\n"+readCall)
	if len(got) != 1 || got[0].Action != "destructive" {
		t.Fatalf("got %+v", got)
	}
	g := &gate{pending: map[string]string{}, annotations: map[string]*decision.Annotations{}}
	list := func(id, cursor, tools string) {
		g.pending[`"`+id+`"`] = toolsList
		if cursor != "" {
			g.pending[`"`+id+`"`] = toolsListMore
		}
		g.serverMessage([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"tools":[` + tools + `]}}`))
	}
	readOnly := func(name string) bool {
		a := g.annotations[name]
		return a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint
	}
	list("1", "", `{"name":"read_file","annotations":{"readOnlyHint":true}},{"name":"search","annotations":{"readOnlyHint":true}}`)
	if !readOnly("read_file") || !readOnly("search") {
		t.Fatalf("annotations: %+v", g.annotations)
	}
	list("2", "c", `{"name":"list_dir","annotations":{"readOnlyHint":true}}`)
	if !readOnly("read_file") || !readOnly("list_dir") {
		t.Errorf("a further page dropped the first: %+v", g.annotations)
	}
	list("3", "", `{"name":"read_file"}`)
	if readOnly("read_file") || readOnly("search") || readOnly("list_dir") {
		t.Errorf("a new listing was merged with the last: %+v", g.annotations)
	}
	list("4", "", `{"name":"read_file","annotations":{"readOnlyHint":true}}`)
	g.serverMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	if len(g.annotations) != 0 {
		t.Errorf("list_changed kept %+v", g.annotations)
	}
	list("5", "", `{"name":"read_file","annotations":{"readOnlyHint":true}}`)
	g.pending[`"6"`] = toolsList
	g.serverMessage([]byte(`{"jsonrpc":"2.0","id":"6","error":{"code":-32603,"message":"no"}}`))
	if len(g.annotations) != 0 {
		t.Errorf("a listing that failed kept %+v", g.annotations)
	}
}

// The gate knows its server by the configured name, or by its command
// line, never by the name the server gives itself in initialize; that
// claim reaches the person as the server's own words.
func TestServerNameConfigured(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"fs", "fs"},
		{"", "sh testdata/renaming.sh"},
	} {
		got := recorded(t, Config{Name: tc.name}, readCall)
		if len(got) != 1 || got[0].Server != tc.want {
			t.Fatalf("name %q: %+v", tc.name, got)
		}
		if !strings.Contains(got[0].Reason, `"fs-trusted"`) {
			t.Errorf("the server's claim is not shown: reason %q", got[0].Reason)
		}
	}
	// A server that names itself as configured says nothing more.
	if got := recorded(t, Config{Name: "fs-trusted"}, readCall); len(got) != 1 || got[0].Reason != "" {
		t.Errorf("%+v", got)
	}
}

func TestDefaultName(t *testing.T) {
	for want, command := range map[string][]string{
		"npx @modelcontextprotocol/server-filesystem": {"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/a/p"},
		"python3 mcp_server_git":                      {"/usr/bin/python3", "-m", "mcp_server_git", "--repository", "."},
		"node /opt/srv/dist/index.js":                 {"node", "/opt/srv/dist/index.js", "/tmp"},
		"uv server.py":                                {"uv", "run", "server.py"},
		"mcp-fs":                                      {"/opt/bin/mcp-fs", "/home/a/p"},
		"node":                                        {"node"},
	} {
		if got := DefaultName(command); got != want {
			t.Errorf("%q: %q, want %q", command, got, want)
		}
	}
}

// A tools/call before the server's initialize answer reached the client
// is answered with an error and never reaches the server.
func TestCallBeforeInitialize(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x"}}}` + "\n"
	msgs := exchange(t, Config{Command: server, Pipeline: deciding(t, "allow-once")}, false, call)
	if len(msgs) != 1 || msgs[0]["error"] == nil || msgs[0]["id"] != 5.0 || msgs[0]["method"] != nil {
		t.Errorf("got %v, want the gate's error alone", msgs)
	}
	// An initialize the server answered with an error initializes nothing.
	g := &gate{pending: map[string]string{"1": initialize}, annotations: map[string]*decision.Annotations{}}
	g.serverMessage([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}}`))
	if g.initialized {
		t.Error("an error answer initialized the gate")
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

// A request on the id of one still pending is refused, never relayed: a
// ping on the id of an initialize the server never answers cannot pass
// its empty answer off as initialize's, and a call after it is refused.
func TestPendingIDReused(t *testing.T) {
	clientIn, toGate := io.Pipe()
	fromGate, clientOut := io.Pipe()
	var errOut bytes.Buffer
	c := Config{Command: []string{"sh", "testdata/mute.sh"}, Pipeline: deciding(t, "allow-once"), In: clientIn, Out: clientOut, Stderr: &errOut}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, c)
		clientOut.Close()
		done <- err
	}()
	lines := bufio.NewScanner(fromGate)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the gate ended: %s", errOut.String())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	io.WriteString(toGate, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n")
	for _, id := range []string{"1", "1.0", "1e0"} {
		io.WriteString(toGate, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`+"\n")
		if m := next(); m["error"] == nil || m["id"] != 1.0 {
			t.Fatalf("the ping on pending id %s: %v", id, m)
		}
	}
	// What the ping would have brought back has had its time.
	io.WriteString(toGate, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
	if m := next(); m["id"] != 3.0 {
		t.Fatalf("a ping on a free id: %v", m)
	}
	io.WriteString(toGate, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x"}}}`+"\n")
	if m := next(); m["error"] == nil || m["id"] != 2.0 {
		t.Errorf("the call was relayed: %v", m)
	}
	toGate.Close()
	for lines.Scan() {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Only an InitializeResult (protocolVersion and serverInfo) initializes
// the gate: an error or another result does not.
func TestInitializeAnswerRead(t *testing.T) {
	for result, want := range map[string]bool{
		`{}`:                               false,
		`{"serverInfo":{"name":"x"}}`:      false,
		`{"protocolVersion":"2025-06-18"}`: false,
		`{"protocolVersion":"","serverInfo":{"name":"x"}}`: false,
		`[]`: false,
		`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`: true,
	} {
		g := &gate{pending: map[string]string{"1": initialize}, annotations: map[string]*decision.Annotations{}}
		g.serverMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`))
		if g.initialized != want {
			t.Errorf("%s: initialized %v", result, g.initialized)
		}
	}
}

// A tools/list with an empty cursor asks for the list anew: its answer
// replaces the annotations, as one without a cursor does.
func TestEmptyCursorListsAnew(t *testing.T) {
	g := &gate{pending: map[string]string{}, annotations: map[string]*decision.Annotations{}, toServer: jsonrpc.NewWriter(io.Discard)}
	yes := true
	g.annotations["delete_all"] = &decision.Annotations{ReadOnlyHint: &yes}
	var calls sync.WaitGroup
	g.clientMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":""}}`), &calls)
	g.serverMessage([]byte(`{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"delete_all"}]}}`))
	if a := g.annotations["delete_all"]; a != nil {
		t.Errorf("the stale annotations stayed: %+v", a)
	}
}

package decision_test

import (
	"fmt"
	"os"

	"github.com/askperm/askperm/decision"
)

// askperm reads the request on its stdin with Parse.
func ExampleParse() {
	req, err := decision.Parse([]byte(`{"id":"r1","tool":"write_file","action":"write",
		"dimensions":[{"name":"path","value":"/p/a.md","scopes":[
			{"label":"this file","match":"/p/a.md"},
			{"label":"files under /p/","match":"/p/","kind":"prefix"}]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(*req.ID, req.Tool, req.Action)
	for _, s := range req.Dimensions[0].Scopes {
		fmt.Printf("%s (%s) covers /p/b.md: %v\n", s.Label, s.Kind, s.Covers("/p/b.md"))
	}

	_, err = decision.Parse([]byte(`{"action":"write","Tool":"write_file"}`))
	fmt.Println(err)
	// Output:
	// r1 write_file write
	// this file (exact) covers /p/b.md: false
	// files under /p/ (prefix) covers /p/b.md: true
	// request: field "Tool": unknown field (field names are case-sensitive; did you mean "tool"?)
}

// A caller builds the request it sends; sent is what askperm will see, and
// sent.SHA256 the digest its decision must echo.
func ExampleEncodeRequest() {
	id := "req-1"
	b, sent, err := decision.EncodeRequest(&decision.Request{
		ID:     &id,
		Tool:   "run_command",
		Action: "exec",
		Dimensions: []decision.Dimension{{Name: "command", Value: "go test ./...", Scopes: []decision.Scope{
			{Label: "this command", Match: "go test ./..."},
			{Label: "any go test", Match: "go test", Kind: decision.KindWords},
		}}},
		Arguments: []byte(`{"argv": ["go", "test", "./..."]}`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n%s\n", b, sent.SHA256)

	_, _, err = decision.EncodeRequest(&decision.Request{Tool: "run_command"})
	fmt.Println(err)
	// Output:
	// {"version":1,"id":"req-1","tool":"run_command","action":"exec","dimensions":[{"name":"command","value":"go test ./...","scopes":[{"label":"this command","match":"go test ./..."},{"label":"any go test","match":"go test","kind":"words"}]}],"arguments":{"argv": ["go", "test", "./..."]}}
	// 49260be88613f5b122836164c69bf769557f65efb75444f095444b54dd0995bd
	// the built request is invalid: request: field "action": must not be empty
}

// askperm writes its decision with Encode: one line, in one write.
func ExampleEncode() {
	req, err := decision.Parse([]byte(`{"id":"r1","action":"read"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(decision.Encode(decision.Denied(req, decision.CauseTimeout, decision.FrontendNone)))
	// Output:
	// {"version":1,"id":"r1","decision":"deny","persist":"once","cause":"timeout","frontend":"none","request_sha256":"2c9730a5eb4bedc0da53a54978d164fc0c45cc50a2ebc10a8f1b1c5730bdf4cf"}
}

// A caller reads askperm's whole stdout with ParseDecision, and denies on
// any error (and on any exit status but 0).
func ExampleParseDecision() {
	_, sent, err := decision.EncodeRequest(&decision.Request{Tool: "read_file", Action: "read"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// out stands for the stdout of askperm run with the request on stdin.
	out := []byte(`{"version":1,"decision":"allow","persist":"once","cause":"user","frontend":"tui","request_sha256":"` + sent.SHA256 + `"}` + "\n")

	d, err := decision.ParseDecision(out, sent)
	if err != nil {
		fmt.Println("deny:", err)
		return
	}
	fmt.Println(d.Decision, d.Persist, d.Cause, d.Frontend)

	// The same answer does not answer another request.
	_, other, _ := decision.EncodeRequest(&decision.Request{Tool: "write_file", Action: "write"})
	_, err = decision.ParseDecision(out, other)
	fmt.Println("deny:", err)
	// Output:
	// allow once user tui
	// deny: decision: field "request_sha256": "cf3828f06e28d162952739ee6d0ca4ea747aec6eedd51e90c33f48fb4bb11e79" is not the sent request's digest "916a658ec7b87831e287d940da4967d768ade58998222acdeeb0fb95b124456e"
}

// An approval covers one exact call: the same context and the same
// arguments, however they are written.
func ExampleApprovalFor() {
	req, err := decision.Parse([]byte(`{"action":"write","tool":"write_file","source":"engine:1",
		"session_id":"s1","run_id":"r1","policy_revision":"7","arguments":{"path":"/p/a","mode":5}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	approval, err := decision.ApprovalFor(decision.CallOf(req))
	if err != nil {
		fmt.Println(err)
		return
	}
	call := decision.CallOf(req)
	call.Arguments = []byte(`{"mode":5.0,"path":"/p/a"}`)
	fmt.Println("written differently:", approval.Covers(call))

	call.Arguments = []byte(`{"mode":5,"path":"/etc/passwd"}`)
	fmt.Println("other arguments:", approval.Covers(call))

	call = decision.CallOf(req)
	call.RunID = "r2"
	fmt.Println("next run:", approval.Covers(call))

	// A session approval spans runs, and binds all the person was shown.
	session, _ := decision.SessionApprovalOf(req)
	req.RunID = "r2"
	next, _ := decision.SessionApprovalOf(req)
	fmt.Println("same session, next run:", session.SessionCovers(next))
	req.Server = "prod"
	prod, _ := decision.SessionApprovalOf(req)
	fmt.Println("same session, other server:", session.SessionCovers(prod))
	// Output:
	// written differently: true
	// other arguments: false
	// next run: false
	// same session, next run: true
	// same session, other server: false
}

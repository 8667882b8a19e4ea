package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/reqtest"
)

// A request an adapter hands over is decided as its encoding would be if
// a caller sent it: the same decision, answering the same digest
// (request_sha256 of the bytes EncodeRequest writes).
func TestDecideRequestAsSent(t *testing.T) {
	canned, err := answers.Single("deny-once", "no")
	if err != nil {
		t.Fatal(err)
	}
	p := pipe(Config{Answers: canned})
	var reqs []*decision.Request
	for _, name := range []string{"write-file", "run-command", "hostile", "read-only"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		base, err := decision.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, base)
		for _, v := range reqtest.Variants(base) {
			reqs = append(reqs, v.Req)
		}
	}
	valid := 0
	for _, req := range reqs {
		req.SHA256 = "" // what an adapter builds has no digest yet
		raw, sent, err := decision.EncodeRequest(reqtest.Copy(req))
		if err != nil {
			if out := p.DecideRequest(context.Background(), req); out.Decision != nil || !errors.Is(out.Err, ErrInvalidRequest) {
				t.Fatalf("a request EncodeRequest refuses (%v) was decided: %+v", err, out)
			}
			continue
		}
		valid++
		byBytes := p.Run(context.Background(), bytes.NewReader(raw))
		byValue := p.DecideRequest(context.Background(), req)
		if byBytes.Decision == nil || byValue.Decision == nil {
			t.Fatalf("no decision: %+v, %+v", byBytes, byValue)
		}
		if got, want := byValue.Decision.RequestSHA256, sent.SHA256; got != want || byBytes.Decision.RequestSHA256 != want {
			t.Fatalf("request_sha256 %s (by value), %s (by bytes), want %s", got, byBytes.Decision.RequestSHA256, want)
		}
		if byValue.Decision.Decision != byBytes.Decision.Decision || byValue.Decision.Message != byBytes.Decision.Message {
			t.Fatalf("decided %+v by value, %+v by bytes", byValue.Decision, byBytes.Decision)
		}
	}
	if valid < 20 {
		t.Fatalf("only %d of the generated requests were valid: the property was hardly tested", valid)
	}
}

// A request too large to be sent is refused as Run refuses it.
func TestDecideRequestTooLarge(t *testing.T) {
	p := pipe(Config{MaxRequest: 64})
	req := &decision.Request{Tool: "write_file", Action: "write", Reason: string(bytes.Repeat([]byte("x"), 64))}
	if out := p.DecideRequest(context.Background(), req); out.Decision != nil || !errors.Is(out.Err, ErrInvalidRequest) {
		t.Errorf("got %+v, want an invalid request", out)
	}
}

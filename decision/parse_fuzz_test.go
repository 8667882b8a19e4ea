package decision

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzParse: Parse never panics; an error never comes with a request; an
// accepted request is valid UTF-8 and its canonical form parses to the same
// request (arguments and _meta compared canonically), with the digest of
// that form; and EncodeRequest writes it to bytes that parse to it exactly.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/requests/*.json")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"action":"x"}`, `{"action":"x","action":"y"}`, `{"action":"x","Tool":"t"}`,
		`{"action":"x","arguments":[1,2.5e3,-0,{"a":null}]}`, `{"action":"\ud83d\ude00"}`,
		`{"action":"\ud800"}`, `{"action":"x"} x`, "\xef\xbb\xbf{}", `{"action":"x","timeout":1e-3}`,
		`{"action":"x","dimensions":[{"name":"p","value":"/","scopes":[{"label":"l","match":"/","kind":"prefix"}],"default":0}]}`,
		`{"action":"x","_meta":{ "progressToken" : 1.50 }}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := Parse(in)
		if err != nil {
			if req != nil {
				t.Fatal("a request came with an error")
			}
			return
		}
		_, sent, err := EncodeRequest(req)
		if err != nil {
			t.Fatalf("accepted, but EncodeRequest refuses it: %v", err)
		}
		sent.SHA256 = req.SHA256
		if !reflect.DeepEqual(sent, req) {
			t.Fatalf("EncodeRequest changes the request:\n%+v\n%+v", req, sent)
		}
		if !utf8.Valid(in) {
			t.Fatal("accepted invalid UTF-8")
		}
		canon, err := Canonical(in)
		if err != nil {
			t.Fatalf("accepted a request with no canonical form: %v", err)
		}
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("the canonical form %q is rejected: %v", canon, err)
		}
		if again.SHA256 != req.SHA256 {
			t.Fatal("the canonical form has another digest")
		}
		if !sameJSON(t, req.Arguments, again.Arguments) {
			t.Fatalf("arguments differ: %q vs %q", req.Arguments, again.Arguments)
		}
		if !sameJSON(t, req.Meta, again.Meta) {
			t.Fatalf("_meta differs: %q vs %q", req.Meta, again.Meta)
		}
		req.Arguments, again.Arguments = nil, nil
		req.Meta, again.Meta = nil, nil
		if !reflect.DeepEqual(req, again) {
			t.Fatalf("the canonical form parses differently:\n%+v\n%+v", req, again)
		}
	})
}

func sameJSON(t *testing.T, a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ca, errA := Canonical(a)
	cb, errB := Canonical(b)
	return errA == nil && errB == nil && bytes.Equal(ca, cb)
}

// benchRequest is a realistic request of about size bytes.
func benchRequest(size int) []byte {
	head := `{"version":1,"id":"req-1","server":"fs-default","tool":"write_file","source":"engine:1",` +
		`"action":"write","reason":"Save the report.","dimensions":[{"name":"path","value":"/home/a/p/r.md",` +
		`"scopes":[{"label":"file","match":"/home/a/p/r.md"},{"label":"dir","match":"/home/a/p/","kind":"prefix"}]}],` +
		`"grants":[{"name":"fs.write"}],"arguments":{"path":"/home/a/p/r.md"},"details":[{"label":"content","text":"`
	tail := `"}]}`
	return []byte(head + strings.Repeat("line of text\\n", (size-len(head)-len(tail))/14) + tail)
}

func benchmarkParse(b *testing.B, size int) {
	in := benchRequest(size)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(in); err != nil {
			b.Fatal(err)
		}
	}
}

// Parse includes the request digest (JCS + SHA-256).
func BenchmarkParse1KiB(b *testing.B) { benchmarkParse(b, 1<<10) }
func BenchmarkParse1MiB(b *testing.B) { benchmarkParse(b, 1<<20) }

// FuzzUnquote: unquote decodes every string token jsontext accepts as
// jsontext does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"x"`, `"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r"`, `"\uD83D\uDE00\u0000\uFFFF"`, `"a\u20ACb"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := jsontext.NewDecoder(bytes.NewReader(in))
		if dec.PeekKind() != '"' {
			return
		}
		tok, err := dec.ReadValue()
		if err != nil {
			return
		}
		want, err := jsontext.AppendUnquote(nil, tok)
		if err != nil {
			t.Fatalf("jsontext read %q, but cannot unquote it: %v", tok, err)
		}
		if got := unquote(tok); got != string(want) {
			t.Fatalf("unquote(%q) = %q, want %q", tok, got, want)
		}
	})
}

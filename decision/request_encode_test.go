package decision

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t testing.TB, in string) *Request {
	t.Helper()
	r, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse(%.60q): %v", in, err)
	}
	return r
}

// Parse → EncodeRequest → Parse gives the same request, and the digest of
// the bytes sent.
func TestEncodeRequestRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../testdata/requests/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata requests: %v", err)
	}
	ins := map[string]string{
		"full": `{"version":1,"id":"","server":"fs","alias":"child","tool":"write_file","source":"engine:1",
			"action":"write","action_description":"Write","reason":"why\nnot",
			"dimensions":[{"name":"path","label":"File","value":"/p/a","default":1,
				"scopes":[{"label":"file","match":"/p/a"},{"label":"dir","match":"/p/","kind":"prefix"}]}],
			"workdir":{"value":"/p","label":"P"},
			"grants":[{"name":"fs.write","description":"w"},{"name":"fs.read","implies":["fs.write"]}],
			"details":[{"label":"content","text":"a\tb"}],
			"arguments":{ "path" : "/p/a", "n": [1, 2.50, 1e2] },
			"annotations":{"title":"T","readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true},
			"persistent":false,"session_id":"s","run_id":"r","policy_revision":"7","role":"dev",
			"timeout":12.5,"_meta":{ "progressToken" : 7 }}`,
		"empty lists": `{"action":"x","dimensions":[{"name":"d","value":"v","scopes":[]}],"grants":[{"name":"g","implies":[]}],
			"details":[],"arguments":null,"annotations":{},"_meta":{},"timeout":1e-3}`,
		"escapes": `{"action":"\u2028<>&\"\\\u001b\ud83d\ude00","arguments":"\u0041","timeout":1e21}`,
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ins[filepath.Base(f)] = string(b)
	}
	for name, in := range ins {
		want := mustParse(t, in)
		b, sent, err := EncodeRequest(want)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		digest, err := RequestSHA256(b)
		if err != nil || sent.SHA256 != digest {
			t.Errorf("%s: sent.SHA256 %s is not the digest %s of the bytes (%v)", name, sent.SHA256, digest, err)
		}
		want.SHA256 = sent.SHA256
		if !reflect.DeepEqual(sent, want) {
			t.Errorf("%s: round trip differs\ngot  %+v\nwant %+v\nbytes %s", name, sent, want, b)
		}
	}
}

// Absent is nil or empty, exactly as Parse models it; present-but-empty
// values a pointer or a non-nil slice can say are kept.
func TestEncodeRequestAbsentFields(t *testing.T) {
	empty, no := "", false
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"only the action", Request{Action: "read"}, `{"version":1,"action":"read"}`},
		{"zero values kept", Request{
			Action: "read", ID: &empty, Persistent: &no, Dimensions: []Dimension{}, Grants: []Grant{},
			Details: []Detail{}, Arguments: []byte("null"), Annotations: &Annotations{}, Meta: []byte("{}"),
		}, `{"version":1,"id":"","action":"read","dimensions":[],"grants":[],"details":[],"arguments":null,"annotations":{},"persistent":false,"_meta":{}}`},
		{"required members of nested objects", Request{
			Action:     "read",
			Dimensions: []Dimension{{Name: "d", Scopes: []Scope{{}}}},
			Workdir:    &Workdir{Value: "/"},
			Grants:     []Grant{{Name: "g", Implies: []string{}}},
			Details:    []Detail{{}},
		}, `{"version":1,"action":"read","dimensions":[{"name":"d","value":"","scopes":[{"label":"","match":""}]}],"workdir":{"value":"/"},"grants":[{"name":"g","implies":[]}],"details":[{"label":"","text":""}]}`},
		{"SHA256 ignored", Request{Action: "read", SHA256: "ab"}, `{"version":1,"action":"read"}`},
	} {
		b, _, err := EncodeRequest(&tc.r)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s:\ngot  %s (%v)\nwant %s", tc.name, b, err, tc.want)
		}
	}
}

func TestEncodeRequestRejects(t *testing.T) {
	bad, nan, zero := "a\xffb", math.NaN(), 0.0
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"empty action", Request{}, `field "action": must not be empty`},
		{"invalid UTF-8", Request{Action: "x", Tool: bad}, `field "tool": invalid UTF-8`},
		{"invalid UTF-8 in a pointer", Request{Action: "x", ID: &bad}, `field "id": invalid UTF-8`},
		{"invalid UTF-8 in a scope", Request{Action: "x", Dimensions: []Dimension{{Name: "d", Scopes: []Scope{{Label: bad}}}}},
			`field "dimensions[0].scopes[0].label": invalid UTF-8`},
		{"invalid UTF-8 in implies", Request{Action: "x", Grants: []Grant{{Name: "g", Implies: []string{"h", bad}}, {Name: "h"}}},
			`field "grants[0].implies[1]": invalid UTF-8`},
		{"invalid UTF-8 after nesting", Request{Action: "x", Workdir: &Workdir{Value: "/"}, Role: bad}, `field "role": invalid UTF-8`},
		{"a member smuggled in arguments", Request{Action: "x", Arguments: []byte(`1,"tool":"t"`)},
			`field "arguments": not exactly one valid JSON value`},
		{"truncated arguments", Request{Action: "x", Arguments: []byte(`{"a":`)}, `field "arguments": not exactly one valid JSON value`},
		{"empty arguments", Request{Action: "x", Arguments: []byte{}}, `field "arguments": not exactly one valid JSON value`},
		{"duplicate key in arguments", Request{Action: "x", Arguments: []byte(`{"a":1,"a":2}`)}, `field "arguments": not exactly one valid JSON value`},
		{"integer beyond I-JSON in arguments", Request{Action: "x", Arguments: []byte(`9007199254740992`)}, `field "arguments": integer 9007199254740992`},
		{"_meta not an object", Request{Action: "x", Meta: []byte(`[]`)}, `field "_meta": expected an object, got array`},
		{"_meta smuggling", Request{Action: "x", Meta: []byte(`{},"tool":"t"`)}, `field "_meta": not exactly one valid JSON value`},
		{"NaN timeout", Request{Action: "x", Timeout: &nan}, `field "timeout": NaN is not a JSON number`},
		{"zero timeout", Request{Action: "x", Timeout: &zero}, `field "timeout": must be a positive number of seconds`},
		{"NUL", Request{Action: "x", Server: "a\x00b"}, `field "server": contains NUL`},
		{"long line", Request{Action: "x", Tool: strings.Repeat("t", MaxLineBytes+1)}, `field "tool": longer than 4096 bytes`},
		{"default out of range", Request{Action: "x", Dimensions: []Dimension{{Name: "d", Default: 1}}},
			`field "dimensions[0].default": 1 is not the index of one of its 0 scopes`},
		{"negative default", Request{Action: "x", Dimensions: []Dimension{{Name: "d", Default: -1}}}, "not the index"},
		{"unknown scope kind", Request{Action: "x", Dimensions: []Dimension{{Name: "d", Scopes: []Scope{{Kind: "regex"}}}}},
			`"regex" is not one of exact, prefix, glob, words, any`},
		{"duplicate dimension", Request{Action: "x", Dimensions: []Dimension{{Name: "d"}, {Name: "d"}}}, `dimension "d" named twice`},
		{"empty grant name", Request{Action: "x", Grants: []Grant{{}}}, `field "grants[0].name": must not be empty`},
	} {
		b, sent, err := EncodeRequest(&tc.r)
		if err == nil || !strings.HasPrefix(err.Error(), "the built request is invalid: request: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
		if _, ok := errors.AsType[*Error](err); !ok {
			t.Errorf("%s: %v does not wrap an *Error", tc.name, err)
		}
		if b != nil || sent != nil {
			t.Errorf("%s: bytes or a request came with the error", tc.name)
		}
	}
}

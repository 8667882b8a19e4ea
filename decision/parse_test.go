package decision

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// wrap puts a value where any JSON is allowed, so that only the value's own
// syntax decides.
func wrap(v string) string { return `{"action":"x","arguments":` + v + `}` }

func TestParseRejects(t *testing.T) {
	// The request object is level 1, so n levels take n-1 arrays.
	deep := func(n int) string { return wrap(strings.Repeat("[", n-1) + strings.Repeat("]", n-1)) }
	long := strings.Repeat("a", MaxLineBytes+1)
	many := func(field, entry string, n int) string {
		entries := make([]string, n)
		for i := range entries {
			entries[i] = fmt.Sprintf(entry, i)
		}
		return `{"action":"x","` + field + `":[` + strings.Join(entries, ",") + `]}`
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		// Encoding and framing.
		{"empty", ``, "unexpected end of input"},
		{"whitespace only", " \n\t", "unexpected end of input"},
		{"BOM", "\xef\xbb\xbf{\"action\":\"x\"}", "byte order mark"},
		{"invalid UTF-8", "{\"action\":\"x\xff\"}", "invalid UTF-8 at byte 12"},
		{"overlong encoding", "{\"action\":\"\xc0\xaf\"}", "invalid UTF-8"},
		{"encoded surrogate", "{\"action\":\"\xed\xa0\x80\"}", "invalid UTF-8"},
		{"lone high surrogate escape", `{"action":"\ud800"}`, "invalid JSON"},
		{"lone low surrogate escape", `{"action":"\udc00x"}`, "invalid JSON"},
		{"reversed surrogate pair", `{"action":"\udc00\ud800"}`, "invalid JSON"},
		{"high surrogate then escape", `{"action":"\ud800\n"}`, "invalid JSON"},
		{"raw NUL", "{\"action\":\"a\x00b\"}", "invalid JSON"},
		{"escaped NUL in a value", `{"action":"a\u0000b"}`, "NUL"},
		{"escaped NUL in a key", wrap(`{"a\u0000":1}`), "NUL"},
		{"escaped NUL inside arguments", wrap(`["x\u0000"]`), `"arguments[0]": contains NUL`},
		{"escaped NUL inside _meta", `{"action":"x","_meta":{"k":"\u0000"}}`, "NUL"},
		{"trailing object", `{"action":"x"} {"action":"y"}`, "trailing data"},
		{"trailing garbage", `{"action":"x"}x`, "trailing data"},
		{"trailing bracket", `{"action":"x"}]`, "trailing data"},
		{"array at top", `[]`, "expected a JSON object, got array"},
		{"string at top", `"x"`, "expected a JSON object, got string"},
		{"null at top", `null`, "expected a JSON object, got null"},
		{"number at top", `1`, "expected a JSON object, got number"},
		// Syntax beyond RFC 8259, in the classes of JSONTestSuite's n_* cases.
		{"n_object_comment", "{\"action\":\"x\" /* c */}", "invalid JSON"},
		{"n_object_line_comment", "{\"action\":\"x\"} // c", "trailing data"},
		{"n_object_trailing_comma", `{"action":"x",}`, "invalid JSON"},
		{"n_array_extra_comma", wrap(`[1,]`), "invalid JSON"},
		{"n_array_double_comma", wrap(`[1,,2]`), "invalid JSON"},
		{"n_array_leading_comma", wrap(`[,1]`), "invalid JSON"},
		{"n_object_missing_colon", `{"action" "x"}`, "invalid JSON"},
		{"n_object_double_colon", `{"action"::"x"}`, "invalid JSON"},
		{"n_object_unquoted_key", `{action:"x"}`, "invalid JSON"},
		{"n_object_single_quote", `{'action':'x'}`, "invalid JSON"},
		{"n_object_non_string_key", `{1:"x"}`, "invalid JSON"},
		{"n_structure_unclosed_object", `{"action":"x"`, "unexpected end of input"},
		{"n_structure_unclosed_array", wrap(`[1`), "invalid JSON"},
		{"n_string_unescaped_tab", "{\"action\":\"a\tb\"}", "invalid JSON"},
		{"n_string_unescaped_newline", "{\"action\":\"a\nb\"}", "invalid JSON"},
		{"n_string_invalid_escape", `{"action":"\x41"}`, "invalid JSON"},
		{"n_string_incomplete_unicode_escape", `{"action":"\u12"}`, "invalid JSON"},
		{"n_number_NaN", wrap(`NaN`), "invalid JSON"},
		{"n_number_infinity", wrap(`Infinity`), "invalid JSON"},
		{"n_number_minus_infinity", wrap(`-Infinity`), "invalid JSON"},
		{"n_number_leading_zero", wrap(`01`), "invalid JSON"},
		{"n_number_plus", wrap(`+1`), "invalid JSON"},
		{"n_number_leading_dot", wrap(`.5`), "invalid JSON"},
		{"n_number_trailing_dot", wrap(`1.`), "invalid JSON"},
		{"n_number_hex", wrap(`0x1F`), "invalid JSON"},
		{"n_number_exponent_only", wrap(`1e`), "invalid JSON"},
		{"n_incomplete_true", wrap(`tru`), "invalid JSON"},
		{"n_capitalised_true", wrap(`True`), "invalid JSON"},
		// I-JSON numbers.
		{"integer 2^53", wrap(`9007199254740992`), "beyond ±(2^53−1)"},
		{"integer -2^53", wrap(`-9007199254740992`), "beyond ±(2^53−1)"},
		{"integer 2^53+1", wrap(`9007199254740993`), "beyond ±(2^53−1)"},
		{"beyond a double", wrap(`1e400`), "beyond the range of a double"},
		{"below minus a double", wrap(`-1e400`), "beyond the range of a double"},
		// Names.
		{"duplicate key", `{"action":"x","action":"y"}`, `duplicate member "action"`},
		{"duplicate key by escape", `{"action":"x","tool":"a","\u0074ool":"b"}`, `duplicate member "tool"`},
		{"duplicate key inside arguments", wrap(`{"a":1,"a":2}`), `duplicate member "a"`},
		{"duplicate key inside _meta", `{"action":"x","_meta":{"a":1,"\u0061":2}}`, "duplicate member"},
		{"case variant", `{"action":"x","Tool":"y"}`, `field "Tool": unknown field (field names are case-sensitive; did you mean "tool"?)`},
		{"case variant beside the field", `{"action":"x","tool":"y","TOOL":"z"}`, `did you mean "tool"?`},
		{"long s folding variant", `{"action":"x","ſerver":"y"}`, `did you mean "server"?`},
		{"Kelvin sign folding variant", `{"action":"x","dimensions":[{"name":"a","value":"b","scopes":[{"label":"l","match":"m","\u212aind":"any"}]}]}`, `did you mean "kind"?`},
		{"annotation case variant", `{"action":"x","annotations":{"readonlyhint":true}}`, `did you mean "readOnlyHint"?`},
		{"unknown field", `{"action":"x","decision":"allow"}`, `field "decision": unknown field`},
		{"unknown nested field", `{"action":"x","workdir":{"value":"/","path":"/"}}`, `field "workdir.path": unknown field`},
		// Types and values.
		{"missing action", `{"tool":"x"}`, `field "action": missing (required)`},
		{"empty action", `{"action":""}`, `field "action": must not be empty`},
		{"null action", `{"action":null}`, `field "action": expected a string, got null`},
		{"number for a string", `{"action":"x","tool":5}`, `field "tool": expected a string, got number`},
		{"null id", `{"action":"x","id":null}`, `field "id": expected a string, got null`},
		{"version 2", `{"action":"x","version":2}`, "unsupported protocol version 2"},
		{"version as string", `{"action":"x","version":"1"}`, `field "version": expected an integer, got string`},
		{"version 1.5", `{"action":"x","version":1.5}`, "expected an integer, got 1.5"},
		{"version 1.0", `{"action":"x","version":1.0}`, "expected an integer, got 1.0"},
		{"persistent as string", `{"action":"x","persistent":"true"}`, `field "persistent": expected a boolean, got string`},
		{"timeout zero", `{"action":"x","timeout":0}`, "positive"},
		{"timeout negative", `{"action":"x","timeout":-1}`, "positive"},
		{"timeout as string", `{"action":"x","timeout":"5"}`, "expected a number, got string"},
		{"annotations hint as string", `{"action":"x","annotations":{"readOnlyHint":"yes"}}`, `field "annotations.readOnlyHint": expected a boolean`},
		{"annotations not an object", `{"action":"x","annotations":[]}`, "expected an object, got array"},
		{"_meta not an object", `{"action":"x","_meta":"m"}`, `field "_meta": expected an object, got string`},
		{"dimensions not an array", `{"action":"x","dimensions":{}}`, "expected an array, got object"},
		{"dimension without value", `{"action":"x","dimensions":[{"name":"a"}]}`, `field "dimensions[0].value": missing (required)`},
		{"dimension with empty name", `{"action":"x","dimensions":[{"name":"","value":"v"}]}`, "must not be empty"},
		{"duplicate dimension names", `{"action":"x","dimensions":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}`, `field "dimensions[1].name": dimension "a" named twice`},
		{"duplicate grant names", `{"action":"x","grants":[{"name":"g"},{"name":"g"}]}`, `grant "g" named twice`},
		{"duplicate scope match", `{"action":"x","dimensions":[{"name":"a","value":"v","scopes":[{"label":"1","match":"m"},{"label":"2","match":"m"}]}]}`, `"m" offered twice`},
		{"default out of range", `{"action":"x","dimensions":[{"name":"a","value":"v","scopes":[{"label":"1","match":"m"}],"default":1}]}`, "not the index of one of its 1 scopes"},
		{"negative default", `{"action":"x","dimensions":[{"name":"a","value":"v","scopes":[{"label":"1","match":"m"}],"default":-1}]}`, "not the index"},
		{"default without scopes", `{"action":"x","dimensions":[{"name":"a","value":"v","default":0}]}`, "not the index of one of its 0 scopes"},
		{"unknown syntax", `{"action":"x","dimensions":[{"name":"a","value":"v","syntax":"path"}]}`, `"path" is not "shell"`},
		{"a shell without syntax", `{"action":"x","dimensions":[{"name":"a","value":"v","shell":"bash"}]}`, "only a dimension of syntax"},
		{"unknown shell", `{"action":"x","dimensions":[{"name":"a","value":"v","syntax":"shell","shell":"csh"}]}`, "none of bash, sh, zsh, fish"},
		{"syntax not a string", `{"action":"x","dimensions":[{"name":"a","value":"v","syntax":true}]}`, "syntax"},
		{"bad scope kind", `{"action":"x","dimensions":[{"name":"a","value":"v","scopes":[{"label":"1","match":"m","kind":"regex"}]}]}`, `field "dimensions[0].scopes[0].kind": "regex" is not one of exact, prefix, glob, words, any`},
		{"implies not strings", `{"action":"x","grants":[{"name":"g","implies":[1]}]}`, `field "grants[0].implies[0]": expected a string`},
		{"detail without text", `{"action":"x","details":[{"label":"l"}]}`, `field "details[0].text": missing (required)`},
		// Limits.
		{"depth 65", deep(65), "nested deeper than 64 levels"},
		{"depth 100000", deep(100000), "nested deeper than 64 levels"},
		{"4097-byte tool", `{"action":"x","tool":"` + long + `"}`, `field "tool": longer than 4096 bytes`},
		{"4097-byte scope match", `{"action":"x","dimensions":[{"name":"a","value":"v","scopes":[{"label":"1","match":"` + long + `"}]}]}`, "longer than 4096 bytes"},
		{"1001 grants", many("grants", `{"name":"g%d"}`, 1001), `field "grants": more than 1000 entries`},
		{"1001 details", many("details", `{"label":"l%d","text":""}`, 1001), "more than 1000 entries"},
	} {
		req, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
		if req != nil {
			t.Errorf("%s: a request came with the error", tc.name)
		}
	}
}

func TestParseAcceptsLimits(t *testing.T) {
	deep64 := wrap(strings.Repeat("[", 63) + strings.Repeat("]", 63))
	for _, in := range []string{
		deep64,
		`{"action":"x","tool":"` + strings.Repeat("a", MaxLineBytes) + `"}`,
		`{"action":"x","reason":"` + strings.Repeat("r", 5000) + `"}`,
		`{"action":"x","details":[{"label":"l","text":"` + strings.Repeat("t", 100000) + `"}]}`,
		`{"action":"x","arguments":{"long":"` + strings.Repeat("a", 10000) + `"}}`,
		wrap(`9007199254740991`), wrap(`-9007199254740991`), wrap(`1e300`), wrap(`9007199254740993.0`),
		`{"action":"x","annotations":{"futureHint":"anything","readOnlyHint":true}}`,
		`{"action":"x","arguments":null}`,
		"{\"action\":\"\\uffff\ufdd0\"}", // noncharacters are accepted (and shown escaped)
		" \n{\"action\":\"x\"}\n\t ",
		`{"action":"a\\u0000","arguments":["\\\\u0000\\"]}`, // an escaped backslash before u0000
	} {
		if _, err := Parse([]byte(in)); err != nil {
			t.Errorf("%.60q: %v", in, err)
		}
	}
}

func TestParseFullRequest(t *testing.T) {
	in := `{
	  "version": 1, "id": "", "server": "fs", "alias": "child", "tool": "write_file", "source": "engine:1",
	  "action": "write", "action_description": "Write", "reason": "why\nnot",
	  "dimensions": [{"name": "path", "label": "File", "value": "/p/a",
	    "scopes": [{"label": "file", "match": "/p/a"}, {"label": "dir", "match": "/p/", "kind": "prefix"}], "default": 1},
	    {"name": "command", "value": "ls =(x)", "syntax": "shell", "shell": "zsh"}],
	  "workdir": {"value": "/p", "label": "P"},
	  "grants": [{"name": "fs.read"}, {"name": "fs.write", "description": "w", "implies": ["fs.read"]}],
	  "details": [{"label": "content", "text": "a\tb"}],
	  "arguments": { "path" : "/p/a", "n": [1, 2.50] },
	  "annotations": {"title": "T", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true},
	  "persistent": false, "session_id": "s", "run_id": "r", "policy_revision": "7", "role": "dev",
	  "timeout": 12.5, "_meta": {"x": [null]}
	}`
	got, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	f, tr := false, true
	empty, timeout := "", 12.5
	want := &Request{
		ID: &empty, Server: "fs", Alias: "child", Tool: "write_file", Source: "engine:1",
		Action: "write", ActionDescription: "Write", Reason: "why\nnot",
		Dimensions: []Dimension{{Name: "path", Label: "File", Value: "/p/a", Default: 1, Scopes: []Scope{
			{Label: "file", Match: "/p/a", Kind: KindExact}, {Label: "dir", Match: "/p/", Kind: KindPrefix},
		}}, {Name: "command", Value: "ls =(x)", Syntax: SyntaxShell, Shell: DialectZsh}},
		Workdir:     &Workdir{Value: "/p", Label: "P"},
		Grants:      []Grant{{Name: "fs.read"}, {Name: "fs.write", Description: "w", Implies: []string{"fs.read"}}},
		Details:     []Detail{{Label: "content", Text: "a\tb"}},
		Arguments:   []byte(`{ "path" : "/p/a", "n": [1, 2.50] }`),
		Annotations: &Annotations{Title: "T", ReadOnlyHint: &f, DestructiveHint: &tr, IdempotentHint: &f, OpenWorldHint: &tr},
		Persistent:  &f, SessionID: "s", RunID: "r", PolicyRevision: "7", Role: "dev",
		Timeout: &timeout, Meta: []byte(`{"x": [null]}`),
	}
	want.SHA256, _ = RequestSHA256([]byte(in))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v\narguments %q", got, want, got.Arguments)
	}
}

// Each name a grant implies must be another grant of the same request,
// named once; implication may run forward, through chains and in cycles.
func TestParseImplies(t *testing.T) {
	grants := func(list string) string { return `{"action":"x","grants":[` + list + `]}` }
	for _, tc := range []struct {
		name, in, want string // want "" means accepted
	}{
		{"a grant not in the request", grants(`{"name":"fs.write"},{"name":"fs.create","implies":["fs.read"]}`),
			`request: field "grants[1].implies[0]": "fs.read" is not a grant of this request`},
		{"itself", grants(`{"name":"fs.write","implies":["fs.write"]}`),
			`request: field "grants[0].implies[0]": "fs.write" is the grant itself, not another grant`},
		{"itself after another", grants(`{"name":"a"},{"name":"b","implies":["a","b"]}`),
			`request: field "grants[1].implies[1]": "b" is the grant itself, not another grant`},
		{"twice", grants(`{"name":"a","implies":["b","c","b"]},{"name":"b"},{"name":"c"}`),
			`request: field "grants[0].implies[2]": "b" implied twice`},
		{"the empty name", grants(`{"name":"a","implies":[""]}`),
			`request: field "grants[0].implies[0]": "" is not a grant of this request`},
		{"another case", grants(`{"name":"a","implies":["B"]},{"name":"b"}`),
			`request: field "grants[0].implies[0]": "B" is not a grant of this request`},
		{"another normalisation", grants(`{"name":"caf\u00e9","implies":["cafe\u0301"]}`),
			`request: field "grants[0].implies[0]": "cafe` + "\u0301" + `" is not a grant of this request`},
		{"a trailing space", grants(`{"name":"a","implies":["a "]}`),
			`request: field "grants[0].implies[0]": "a " is not a grant of this request`},
		{"a later grant", grants(`{"name":"fs.create","implies":["fs.write"]},{"name":"fs.write"}`), ""},
		{"an earlier grant", grants(`{"name":"fs.write"},{"name":"fs.create","implies":["fs.write"]}`), ""},
		{"a chain", grants(`{"name":"a","implies":["b"]},{"name":"b","implies":["c"]},{"name":"c"}`), ""},
		{"a cycle", grants(`{"name":"a","implies":["b"]},{"name":"b","implies":["a"]}`), ""},
		{"everything else", grants(`{"name":"a","implies":["b","c"]},{"name":"b","implies":["a","c"]},{"name":"c","implies":["a","b"]}`), ""},
		{"empty", grants(`{"name":"a","implies":[]}`), ""},
	} {
		req, err := Parse([]byte(tc.in))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || req != nil):
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
}

func TestParseMinimal(t *testing.T) {
	r, err := Parse([]byte(`{"action":"read"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != nil || r.Arguments != nil || r.Meta != nil || r.Persistent != nil || !r.IsPersistent() || r.Timeout != nil {
		t.Errorf("absent fields were set: %+v", r)
	}
	// Cross-checked with an independent implementation (Python's json with
	// sorted keys, equal to JCS for this input).
	if r.SHA256 != "16384135fc236bb03583cf3024b9fb573cc1ae45f908a98d0601d2ab45f8cfbe" {
		t.Errorf("request_sha256 %s", r.SHA256)
	}
}

// Arguments of every kind are kept as received.
func TestParseKeepsArguments(t *testing.T) {
	for _, in := range []string{`5`, `-0.0`, `"x\/y"`, `true`, `false`, `null`, `[ 1 ]`, `{ "a" : 1 }`} {
		req, err := Parse([]byte(`{"action":"x","arguments": ` + in + ` }`))
		if err != nil || string(req.Arguments) != in {
			t.Errorf("arguments %s: got %q, %v", in, req.Arguments, err)
		}
	}
}

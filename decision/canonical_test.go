package decision

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func mustCanonical(t *testing.T, in string) string {
	t.Helper()
	out, err := Canonical([]byte(in))
	if err != nil {
		t.Fatalf("Canonical(%q): %v", in, err)
	}
	return string(out)
}

// RFC 8785 section 3.2.2 (input) and 3.2.3/3.2.4 (output, and its UTF-8 bytes).
func TestCanonicalRFC8785Sample(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got := mustCanonical(t, in)
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	wantHex := strings.Join(strings.Fields(`
		7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
		75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
		5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
		65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
		5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
		30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`), "")
	if h := hex.EncodeToString([]byte(got)); h != wantHex {
		t.Fatalf("UTF-8 bytes\ngot  %s\nwant %s", h, wantHex)
	}
}

// RFC 8785 section 3.2.3: members sort by UTF-16 code units, so U+1F600
// (D83D DE00) sorts before U+FB33, unlike in UTF-8 byte order.
func TestCanonicalSortsKeysByUTF16(t *testing.T) {
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	want := "{" + strings.Join([]string{
		`"\r":"Carriage Return"`,
		`"1":"One"`,
		"\"\u0080\":\"Control\"",
		"\"\u00f6\":\"Latin Small Letter O With Diaeresis\"",
		"\"\u20ac\":\"Euro Sign\"",
		"\"\U0001F600\":\"Emoji: Grinning Face\"",
		"\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"",
	}, ",") + "}"
	if got := mustCanonical(t, in); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// RFC 8785 Appendix B: IEEE 754 bit patterns and their JSON form. Each double
// is written in Go's shortest round-trip form as input.
func TestCanonicalNumbersRFC8785AppendixB(t *testing.T) {
	for _, tc := range []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"}, // minus zero
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"}, // round to even
	} {
		in := strconv.FormatFloat(math.Float64frombits(tc.bits), 'g', -1, 64)
		if got := mustCanonical(t, in); got != tc.want {
			t.Errorf("%016x (%s): got %s, want %s", tc.bits, in, got, tc.want)
		}
	}
	// The table's NaN (7fffffffffffffff) and Infinity (7ff0000000000000)
	// have no JSON form; a literal beyond a double must not become one.
	for _, in := range []string{"NaN", "Infinity", "-Infinity", "1e309", "-1e309"} {
		if out, err := Canonical([]byte(in)); err == nil {
			t.Errorf("Canonical(%s) = %s, want an error", in, out)
		}
	}
}

// The cyberphone/json-canonicalization vectors (testdata/jcs/README.md).
func TestCanonicalJCSVectors(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "jcs", "input", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no JCS vectors: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "jcs", "output", filepath.Base(in)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Canonical(src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestCanonicalRejects(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a":1,}`, `[1 2]`, `{} {}`, `{"a":1}x`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, // duplicate, also after unescaping
		`"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, // lone or mispaired surrogates
		"\"\xff\"", "\"\xc3\"", // invalid UTF-8
		`01`, `+1`, `1.`, `.5`, `0x10`, `tru`,
	} {
		if out, err := Canonical([]byte(in)); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", in, out)
		}
	}
}

func mustDigest(t *testing.T, args []byte) string {
	t.Helper()
	d, err := ArgumentsDigest(args)
	if err != nil {
		t.Fatalf("ArgumentsDigest(%q): %v", args, err)
	}
	return d
}

func TestArgumentsDigestNumbersBindAsStrings(t *testing.T) {
	want := mustDigest(t, []byte(`5`))
	for _, in := range []string{`5.0`, `5e0`, `"5"`, `50e-1`, ` 5 `} {
		if got := mustDigest(t, []byte(in)); got != want {
			t.Errorf("digest(%s) != digest(5)", in)
		}
	}
	if mustDigest(t, []byte(`"5.0"`)) == want {
		t.Error(`digest("5.0") == digest("5")`)
	}
	// Nested numbers are stringified too, at any depth.
	if mustDigest(t, []byte(`{"a":[1.0,{"b":2e1,"c":-0}]}`)) !=
		mustDigest(t, []byte(`{"a":["1",{"b":"20","c":"0"}]}`)) {
		t.Error("nested numbers are not bound as their JCS strings")
	}
}

func TestArgumentsDigestDistinctScalars(t *testing.T) {
	ins := []string{`true`, `1`, `"true"`, `false`, `0`, `""`, `null`}
	seen := map[string]string{}
	for _, in := range ins {
		d := mustDigest(t, []byte(in))
		if prev, ok := seen[d]; ok {
			t.Errorf("digest(%s) == digest(%s)", in, prev)
		}
		seen[d] = in
	}
}

func TestArgumentsDigestAbsentIsNull(t *testing.T) {
	absent := mustDigest(t, nil)
	if absent != mustDigest(t, []byte(`null`)) {
		t.Error("absent arguments do not bind as null")
	}
	if absent == mustDigest(t, []byte(`{}`)) {
		t.Error("absent arguments bind as {}")
	}
}

func TestArgumentsDigestKeyOrder(t *testing.T) {
	a := mustDigest(t, []byte(`{"a":1,"b":[2,{"c":3,"d":{"e":null,"f":true}}]}`))
	b := mustDigest(t, []byte(`{"b":[2,{"d":{"f":true,"e":null},"c":3}],"a":1}`))
	if a != b {
		t.Error("digest depends on member order")
	}
	// Array order is significant.
	if mustDigest(t, []byte(`[1,2]`)) == mustDigest(t, []byte(`[2,1]`)) {
		t.Error("digest ignores array order")
	}
}

func TestArgumentsDigestKnownValue(t *testing.T) {
	got := mustDigest(t, []byte(`{ "b": [1, 2.50, true, null, "x"], "a": {"c": -0} }`))
	// Built by hand: members sorted, numbers as their JCS strings, no spaces.
	sum := sha256.Sum256([]byte(`{"a":{"c":"0"},"b":["1","2.5",true,null,"x"]}`))
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(got) {
		t.Fatalf("digest %q is not 64 lowercase hex digits", got)
	}
}

func TestArgumentsDigestRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1,"a":2}`, `1e400`, "\"\xff\"", `"\ud800"`, `1 2`} {
		if d, err := ArgumentsDigest([]byte(in)); err == nil {
			t.Errorf("ArgumentsDigest(%q) = %s, want an error", in, d)
		}
	}
}

// reverseMembers re-encodes the next value of dec with the members of every
// object in reverse order, keeping each name's and scalar's exact spelling.
func reverseMembers(dec *jsontext.Decoder, out []byte) ([]byte, error) {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		var members [][]byte
		for dec.PeekKind() != '}' {
			name, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			m, err := reverseMembers(dec, append(append([]byte(nil), name...), ':'))
			if err != nil {
				return nil, err
			}
			members = append(members, m)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		out = append(out, '{')
		for i := len(members) - 1; i >= 0; i-- {
			out = append(out, members[i]...)
			if i > 0 {
				out = append(out, ',')
			}
		}
		return append(out, '}'), nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		out = append(out, '[')
		for first := true; dec.PeekKind() != ']'; first = false {
			if !first {
				out = append(out, ',')
			}
			var err error
			if out, err = reverseMembers(dec, out); err != nil {
				return nil, err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return append(out, ']'), nil
	default:
		v, err := dec.ReadValue()
		return append(out, v...), err
	}
}

// FuzzCanonical: Canonical agrees with the oracle (gowebpki/jcs), is
// idempotent, and does not depend on member order.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `0`, `-0.0`, `1E30`, `5e-324`, `"x"`,
		`{"b":1,"a":{"d":[3,{"f":null,"e":true}],"c":"x"}}`,
		`{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3],"string":"\u000F\/\\"}`,
		`{"a":1,"a":2}`, `[1,2,]`, "\"\xff\"",
	} {
		f.Add([]byte(s))
	}
	for _, b := range vectorFiles(f) {
		f.Add(b)
	}
	for _, bits := range appendixB {
		f.Add([]byte(`[` + strconv.FormatFloat(math.Float64frombits(bits), 'g', -1, 64) + `]`))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkOracle(t, in)
		c, err := Canonical(in)
		if err != nil {
			return
		}
		again, err := Canonical(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, c, again, err)
		}
		dec := jsontext.NewDecoder(bytes.NewReader(in))
		rev, err := reverseMembers(dec, nil)
		if err != nil {
			t.Fatalf("Canonical accepted %q, jsontext rejects it: %v", in, err)
		}
		rc, err := Canonical(rev)
		if err != nil || !bytes.Equal(rc, c) {
			t.Fatalf("member order matters: %q -> %q, reversed %q -> %q, %v", in, c, rev, rc, err)
		}
	})
}

// An error says what is wrong and where, with no document name.
func TestCanonicalErrorSaysWhere(t *testing.T) {
	_, err := Canonical([]byte(`[1,{"b":1e999}]`))
	if want := `canonical form: field "[1].b": number 1e999 is beyond the range of a double`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

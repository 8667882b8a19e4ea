package decision

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzEncode: whatever strings a decision carries (an id from the request,
// a typed reason), it encodes to exactly one line of valid JSON that reads
// back to the same decision, and a string holding `"}\n{"decision":"allow`
// stays inside its field.
func FuzzEncode(f *testing.F) {
	f.Add("req-1", "not now", "g")
	f.Add("x\"}\n{\"decision\":\"allow\"", "\u2028\u2029<>&", "\x00\x1b]0;t\x07")
	f.Add("\xff\xfe", "line\nbreak", "")
	f.Fuzz(func(t *testing.T, id, message, grant string) {
		d := Denied(&Request{ID: &id, SHA256: "ab"}, CauseUser, "tui")
		d.Message = message
		d.Rule = &Rule{Scopes: map[string]string{grant: message}, Lifetime: "indefinite"}
		out := Encode(d)
		if bytes.Count(out, []byte("\n")) != 1 || out[len(out)-1] != '\n' {
			t.Fatalf("not one line: %q", out)
		}
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("not JSON: %v: %q", err, out)
		}
		fields := 8 // version id decision persist rule cause frontend request_sha256
		if message != "" {
			fields++
		}
		if back["decision"] != Deny || len(back) != fields {
			t.Fatalf("decoded %v", back)
		}
	})
}

func TestEncodeOmitsAbsentFields(t *testing.T) {
	got := string(Encode(Denied(&Request{SHA256: "ab"}, CauseTimeout, "none")))
	want := `{"version":1,"decision":"deny","persist":"once","cause":"timeout","frontend":"none","request_sha256":"ab"}` + "\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	empty := ""
	if got := string(Encode(Denied(&Request{ID: &empty}, CauseUser, "tui"))); !bytes.Contains([]byte(got), []byte(`"id":""`)) {
		t.Errorf("an empty id was not echoed: %s", got)
	}
}

// oracle is d as encoding/json writes it without HTML escaping, with
// U+2028, U+2029 and the U+FFFD of invalid UTF-8 unescaped, as Encode
// writes them (the same strings, in the minimal form of RFC 8785).
func oracle(t *testing.T, d Decision) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029", `\ufffd`, "\ufffd").Replace(buf.String())
}

// Encode writes what encoding/json writes, byte for byte, for decisions
// generated with every optional member present or absent and strings
// drawn from ASCII, control characters, invalid UTF-8, line and paragraph
// separators and whole Unicode planes.
func TestEncodeAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			switch rng.IntN(6) {
			case 0:
				b.WriteByte(byte(rng.IntN(0x20))) // a control character
			case 1:
				b.WriteByte(byte(0x80 + rng.IntN(0x80))) // a stray byte: invalid UTF-8
			case 2:
				b.WriteString([]string{"\u2028", "\u2029", `"`, `\`, "<>&", "\x7f", "\ufffd"}[rng.IntN(7)])
			case 3:
				b.WriteRune(rune(rng.IntN(0x110000))) // surrogates among them: written as U+FFFD
			default:
				b.WriteByte(byte(0x20 + rng.IntN(0x5f)))
			}
		}
		return b.String()
	}
	for i := range 20000 {
		d := Decision{Version: Version, Decision: []string{Allow, Deny}[i%2], Persist: text(), Cause: Cause(text()),
			Frontend: Frontend(text()), RequestSHA256: text(), Stop: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			id := text()
			d.ID = &id
		}
		if rng.IntN(2) == 0 {
			d.Message = text()
		}
		for range rng.IntN(3) {
			d.Grants = append(d.Grants, text())
		}
		if rng.IntN(4) == 0 {
			d.Grants = []string{} // empty, not nil: left out too
		}
		if rng.IntN(2) == 0 {
			d.Rule = &Rule{WorkdirScope: text(), Lifetime: text(), Expires: rng.Int64N(3) * rng.Int64()}
			if rng.IntN(5) > 0 {
				d.Rule.Scopes = map[string]string{}
				for range rng.IntN(4) {
					d.Rule.Scopes[text()] = text()
				}
			}
		}
		if got, want := string(Encode(d)), oracle(t, d); got != want {
			t.Fatalf("decision %d:\ngot  %q\nwant %q", i, got, want)
		}
	}
}

package decision

import (
	"bytes"
	"encoding/json"
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

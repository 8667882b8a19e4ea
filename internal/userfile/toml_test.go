package userfile

import (
	"reflect"
	"strings"
	"testing"
)

type entryTOML struct {
	Tool       string            `toml:"tool"`
	Choice     string            `toml:"choice"`
	Dimensions map[string]string `toml:"dimensions"`
	Free       any               `toml:"free"`
}

type fileTOML struct {
	Frontends []string    `toml:"frontends"`
	Timeout   string      `toml:"timeout"`
	Entries   []entryTOML `toml:"answer"`
	State     *struct {
		Remember bool `toml:"remember"`
	} `toml:"state"`
}

// An unknown key is named with the known key nearest to it, or with every
// key known in its place; keys below an unknown table are not repeated,
// and keys of maps and free-form values are the value's own.
func TestDecodeTOMLUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"frontend = [\"none\"]\n", `unknown key "frontend": did you mean "frontends"?`},
		{"[[answer]]\ntol = \"x\"\n", `unknown key "answer.tol": did you mean "tool"?`},
		{"[[answer]]\nchioce = \"x\"\n", `unknown key "answer.chioce": did you mean "choice"?`},
		{"[state]\nremeber = true\n", `unknown key "state.remeber": did you mean "remember"?`},
		{"[[answer]]\ncolour = \"red\"\n", `unknown key "answer.colour" (valid here: tool, choice, dimensions, free)`},
		{"[dialog]\nzenity = \"z\"\nyad = \"y\"\n", `unknown key "dialog" (valid here: frontends, timeout, answer, state)`},
		{"time = 1\ncolour = 2\n", `unknown key "time": did you mean "timeout"?; unknown key "colour" (valid here: frontends, timeout, answer, state)`},
	} {
		var f fileTOML
		if err := DecodeTOML([]byte(tc.in), &f); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.in, err, tc.want)
		}
	}
	var f fileTOML
	if err := DecodeTOML([]byte("[[answer]]\ndimensions = { anything = \"x\" }\n[answer.free]\nk = 1\n"), &f); err != nil {
		t.Errorf("free keys: %v", err)
	}
	if err := DecodeTOML([]byte("timeout = \"1\"\ntimeout = \"2\"\n"), &f); err == nil || !strings.HasPrefix(err.Error(), "toml: line 2, column 1: ") {
		t.Errorf("syntax error: %v", err)
	}
	if err := DecodeTOML([]byte("[state]\n\"re mem\" = true\n"), &f); err == nil || err.Error() != `unknown key "state.\"re mem\"" (valid here: remember)` {
		t.Errorf("quoted key: %v", err)
	}
}

// rawValue keeps the raw TOML its UnmarshalTOML receives, decoded.
type rawValue struct{ v any }

func (r *rawValue) UnmarshalTOML(raw []byte) (err error) {
	r.v, err = DecodeValue(raw)
	return err
}

func TestDecodeValue(t *testing.T) {
	for in, want := range map[string]any{
		`x = "30s"`:  "30s",
		`x = 'a\b'`:  `a\b`,
		`x = 12`:     int64(12),
		`x = 1.5`:    1.5,
		`x = true`:   true,
		`x = [1, 2]`: []any{int64(1), int64(2)},
	} {
		var doc struct {
			X rawValue `toml:"x"`
		}
		if err := DecodeTOML([]byte(in), &doc); err != nil || !reflect.DeepEqual(doc.X.v, want) {
			t.Errorf("%s: got %#v, %v; want %#v", in, doc.X.v, err, want)
		}
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"tool", "server", "source", "action", "dimensions", "choice", "workdir_scope", "lifetime"}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"tol", "tool", true},
		{"Tool", "tool", true},
		{"sever", "server", true},
		{"soruce", "source", true},
		{"dimension", "dimensions", true},
		{"workdir", "workdir_scope", true},
		{"lifetiem", "lifetime", true},
		{"colour", "", false},
		{"x", "", false},
		{"to", "", false},
	} {
		got, ok := Nearest(tc.in, keys)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestKnownKeys(t *testing.T) {
	typ := reflect.TypeOf(&fileTOML{})
	if got := strings.Join(KnownKeys(typ, []string{"answer"}), ","); got != "tool,choice,dimensions,free" {
		t.Errorf("answer: %s", got)
	}
	if got := KnownKeys(typ, []string{"answer", "dimensions"}); got != nil {
		t.Errorf("a map's keys are free: %v", got)
	}
	if got := KnownKeys(typ, []string{"nothing"}); got != nil {
		t.Errorf("unknown table: %v", got)
	}
}

// A value of the wrong type is named by its key, with the type expected in
// TOML's words, never Go's.
func TestDecodeTOMLWrongType(t *testing.T) {
	var v struct {
		Bell      bool              `toml:"bell"`
		Frontends []string          `toml:"frontends"`
		Dialogs   map[string]string `toml:"dialogs"`
		State     struct {
			Remember *bool `toml:"remember"`
			Idle     int   `toml:"idle"`
		} `toml:"state"`
		Answer []struct {
			Tool string `toml:"tool"`
		} `toml:"answer"`
	}
	for in, want := range map[string]string{
		"bell = \"yes\"\n":          `toml: line 1, column 8: bell: expected a boolean (true or false), not a TOML string`,
		"frontends = \"tui\"\n":     `toml: line 1, column 13: frontends: expected an array, each item a string, not a TOML string`,
		"[state]\nremember = 1\n":   `toml: line 2, column 12: state.remember: expected a boolean (true or false), not a TOML integer`,
		"[state]\nidle = \"x\"\n":   `toml: line 2, column 8: state.idle: expected an integer, not a TOML string`,
		"[dialogs]\nyad = 1\n":      `toml: line 2, column 7: dialogs.yad: expected a string, not a TOML integer`,
		"[[answer]]\ntool = true\n": `toml: line 2, column 8: answer.tool: expected a string, not a TOML boolean`,
		"state = 1\n":               `toml: line 1, column 9: state: expected a table, not a TOML integer`,
	} {
		err := DecodeTOML([]byte(in), &v)
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "struct") {
			t.Errorf("%q: %v speaks Go", in, err)
		}
	}
}

package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c, err := Parse([]byte(`
timeout = "2m"
frontends = ["line", "zenity"]
arm_delay = "1s"
[dialogs]
zenity = "/bin/sh"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Timeout: Duration("2m"), Frontends: []string{"line", "zenity"}, ArmDelay: "1s", Dialogs: map[string]string{"zenity": "/bin/sh"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v", c)
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"timout = \"5s\"\n", `unknown key "timout": did you mean "timeout"?`},
		{"[dialogs]\nkdialog = \"/usr/bin/kdialog\"\n", `unknown dialog "kdialog"`},
		{"[dialogs]\nyad = \"yad\"\n", "not an absolute path"},
		{"timeout = true\n", "expected a duration"},
		{"timeout = [1]\n", "expected a duration"},
		{"timeout = \"1s\"\ntimeout = \"2s\"\n", "already defined"},
	} {
		if _, err := Parse([]byte(tc.toml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}

// A dialog program must be one userfile.Program trusts; the error names
// the key and the problem.
func TestParseRefusesUntrustedDialogs(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[dialogs]\nyad = \"/etc/askperm-missing/yad\"\n", "dialogs.yad: lstat /etc/askperm-missing: no such file or directory"},
		{"[dialogs]\nzenity = \"/etc/passwd\"\n", "dialogs.zenity: /etc/passwd: not executable"},
		{"[dialogs]\nyad = \"/dev/null\"\n", "dialogs.yad: /dev/null: not a regular file"},
		{"[dialogs]\nzenity = \"/bin/sh\"\nyad = \"/etc\"\n", "dialogs.yad: /etc: not a regular file"},
	} {
		if _, err := Parse([]byte(tc.toml)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte("[dialogs]\nyad = \"/etc/passwd\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, true); err == nil || err.Error() != p+": dialogs.yad: /etc/passwd: not executable" {
		t.Errorf("Load: got %v", err)
	}
}

func TestParseNumbersOfSeconds(t *testing.T) {
	c, err := Parse([]byte("timeout = 120\narm_delay = 0.25\n"))
	if err != nil || c.Timeout != "120" || c.ArmDelay != "0.25" {
		t.Errorf("got %+v, %v", c, err)
	}
}

func TestPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/askperm/config.toml"},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/askperm/config.toml"},
		{map[string]string{"HOME": "/h"}, "/h/.config/askperm/config.toml"},
		{map[string]string{}, ""},
	} {
		if got := Path(env(tc.env)); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.toml")
	if c, err := Load(missing, true); err != nil || !reflect.DeepEqual(c, Config{}) {
		t.Errorf("optional missing file: %+v, %v", c, err)
	}
	if _, err := Load(missing, false); err == nil {
		t.Error("a missing file named explicitly was accepted")
	}
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte("timeout = \"1m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(p, true); err != nil || c.Timeout != Duration("1m") {
		t.Errorf("got %+v, %v", c, err)
	}
	if err := os.Chmod(p, 0o622); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, true); err == nil {
		t.Error("group-writable config accepted")
	}
}

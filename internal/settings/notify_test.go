package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/team"
)

// [notify]: no table is the default, `command = []` none, a command is
// kept as written (its program is checked when it runs); the host is
// [team]'s, else the hostname; anything else in the table is an error.
func TestNotifySettings(t *testing.T) {
	host := notify.Hostname()
	for _, tc := range []struct {
		toml string
		want notify.Config
	}{
		{"", notify.Config{Host: host}},
		{"[notify]\n", notify.Config{Host: host}},
		{"[notify]\ncommand = []\n", notify.Config{Off: true, Command: []string{}, Host: host}},
		{"[notify]\ncommand = [\"/bin/sh\", \"-c\", \"curl -d \\\"$ASKPERM_QUESTION\\\" ntfy.sh/t\"]\n", notify.Config{Command: []string{"/bin/sh", "-c", `curl -d "$ASKPERM_QUESTION" ntfy.sh/t`}, Host: host}},
		{"[notify]\ncommand = [\"relative\"]\n", notify.Config{Command: []string{"relative"}, Host: host}},
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(tc.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Resolve(Flags{Config: path}, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%q: %v", tc.toml, err)
		}
		if !reflect.DeepEqual(*s.Notify, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.toml, *s.Notify, tc.want)
		}
	}
	for _, tc := range []struct{ toml, want string }{
		{"[notify]\ncmd = [\"/bin/true\"]\n", `unknown key "notify.cmd"`},
		{"[notify]\ncommand = \"/bin/true\"\n", "notify.command"},
		{"[notify]\ncommand = [1]\n", "notify.command"},
	} {
		if _, err := Parse([]byte(tc.toml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
	if n := resolveNotify(Config{}, &team.Config{Host: "ci-1"}); n.Host != "ci-1" {
		t.Errorf("with [team]: host %q, want ci-1", n.Host)
	}
}

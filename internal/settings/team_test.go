package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

func approverKey(t *testing.T) string {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	k, _ := kp.PublicKey()
	return k
}

func TestResolveTeam(t *testing.T) {
	k := approverKey(t)
	getenv, _ := env(t, `frontends = ["tui", "team"]
[team]
url = "tls://nats.example:4222"
creds = "/etc/askperm/host.creds"
host = "ci-1"
approvers = ["`+k+`"]
prefix = "acme"
replicas = 3
`, "XDG_STATE_HOME", "/var/st")
	s, err := Resolve(Flags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := &team.Config{URL: "tls://nats.example:4222", Creds: "/etc/askperm/host.creds", Host: "ci-1", Approvers: []string{k},
		Prefix: "acme", Replicas: 3, Key: "/var/st/askperm/team.nk"}
	if !reflect.DeepEqual(s.Team, want) {
		t.Errorf("got %+v, want %+v", s.Team, want)
	}
	if !reflect.DeepEqual(s.Frontends, []decision.Frontend{decision.FrontendTUI, decision.FrontendTeam}) {
		t.Errorf("frontends %v", s.Frontends)
	}
}

func TestResolveTeamDefaults(t *testing.T) {
	getenv, _ := env(t, "[team]\nurl = \"nats://127.0.0.1:4222\"\n", "XDG_STATE_HOME", "/var/st")
	s, err := Resolve(Flags{}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := os.Hostname()
	host, _, _ := strings.Cut(name, ".")
	if s.Team == nil || s.Team.Host != host || s.Team.Prefix != team.DefaultPrefix || s.Team.Replicas != 1 ||
		s.Team.Key != filepath.Join("/var/st/askperm", team.KeyFile) || len(s.Team.Approvers) != 0 {
		t.Errorf("got %+v", s.Team)
	}
	getenv, _ = env(t, "timeout = 5\n")
	if s, err := Resolve(Flags{}, getenv); err != nil || s.Team != nil {
		t.Errorf("without [team]: %+v, %v", s.Team, err)
	}
}

// Each bad value is an error naming the file and the key.
func TestResolveTeamRejects(t *testing.T) {
	for _, tc := range []struct{ table, want string }{
		{"url = \"nats://h:1\"\nhots = \"x\"\n", `unknown key "team.hots": did you mean "host"?`},
		{"host = \"a\"\n", "team.url: missing"},
		{"url = \"nats://h:1\"\nhost = \"a.b\"\n", `team.host: "a.b" is not`},
		{"url = \"nats://h:1\"\nhost = \"a\"\nprefix = \"A\"\n", `team.prefix: "A"`},
		{"url = \"nats://h:1\"\nhost = \"a\"\nreplicas = 0\n", "team.replicas: 0"},
		{"url = \"nats://h:1\"\nhost = \"a\"\napprovers = [\"bob\"]\n", `team.approvers[0]: "bob" is not an NKey user public key`},
		{"url = \"nats://h:1\"\nhost = \"a\"\ncreds = \"host.creds\"\n", `team.creds: "host.creds" is not an absolute path`},
		{"url = \"nats://h:1\"\nhost = \"a\"\nkey = \"team.nk\"\n", `team.key: "team.nk" is not an absolute path`},
		{"url = \"nats://h:1\"\nhost = \"a\"\napprovers = \"U\"\n", "team.approvers: expected"},
	} {
		getenv, path := env(t, "[team]\n"+tc.table)
		_, err := Resolve(Flags{}, getenv)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%q: got %v, want %s: ...%s", tc.table, err, path, tc.want)
		}
	}
}

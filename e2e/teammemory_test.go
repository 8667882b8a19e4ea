package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/teamtest"
	"github.com/askperm/askperm/internal/team/wire"
)

// teamUser is a NATS user of the test team: its key, and its seed in a
// file of its own, usable as [team] creds and key.
type teamUser struct {
	kp   nkeys.KeyPair
	pub  string
	seed string // the seed file
}

func newTeamUser(t *testing.T) teamUser {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	path := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return teamUser{kp, team.PublicKey(kp), path}
}

// memoryTeam is a NATS server in this process, with JetStream, whose
// users are a host and two approvers; the second approver may not write
// the first's rules, as the documented permissions say.
type memoryTeam struct {
	srv          *server.Server
	port         int
	store        string
	host, k1, k2 teamUser
}

func startMemoryTeam(t *testing.T) *memoryTeam {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mt := &memoryTeam{port: l.Addr().(*net.TCPAddr).Port, store: t.TempDir(), host: newTeamUser(t), k1: newTeamUser(t), k2: newTeamUser(t)}
	l.Close()
	mt.start(t)
	t.Cleanup(mt.stop)
	c := mt.config(mt.k1, "approver")
	ctx := context.Background()
	nc, err := wire.Connect(ctx, c, team.ApproverInbox(mt.k1.pub))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := wire.EnsureStreams(ctx, js, c); err != nil {
		t.Fatal(err)
	}
	return mt
}

func (mt *memoryTeam) start(t *testing.T) {
	t.Helper()
	all := &server.SubjectPermission{Allow: []string{">"}}
	users := []*server.NkeyUser{{Nkey: mt.host.pub}, {Nkey: mt.k1.pub}, {Nkey: mt.k2.pub, Permissions: &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{">"}, Deny: []string{"$KV.ASKPERM_RULES." + mt.k1.pub + ".>"}},
		Subscribe: all,
	}}}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: mt.port, JetStream: true, StoreDir: mt.store, Nkeys: users, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	mt.srv = s
}

func (mt *memoryTeam) stop() {
	if mt.srv != nil {
		mt.srv.Shutdown()
		mt.srv.WaitForShutdown()
		mt.srv = nil
	}
}

// config is the [team] of user u named host, trusting k1.
func (mt *memoryTeam) config(u teamUser, host string) team.Config {
	return team.Config{URL: fmt.Sprintf("nats://127.0.0.1:%d", mt.port), Creds: u.seed, Host: host, Prefix: team.DefaultPrefix,
		Replicas: 1, Approvers: []string{mt.k1.pub}, Key: u.seed}
}

// configFile writes the config.toml of user u named host, trusting k1,
// and returns the flag naming it. An approver's names its key.
func (mt *memoryTeam) configFile(t *testing.T, u teamUser, host string) string {
	t.Helper()
	c := mt.config(u, host)
	text := fmt.Sprintf("[team]\nurl = %q\ncreds = %q\nhost = %q\napprovers = [%q]\n", c.URL, c.Creds, c.Host, mt.k1.pub)
	if u != mt.host { // a host has no approver key
		text += fmt.Sprintf("key = %q\n", u.seed)
	}
	return "--config=" + writeConfig(t, text)
}

// readConfig is the text of the config.toml flag names.
func readConfig(t *testing.T, flag string) string {
	t.Helper()
	b, err := os.ReadFile(strings.TrimPrefix(flag, "--config="))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// remember writes u's team rule of choice for req, as askperm inbox does
// for an always-answer.
func (mt *memoryTeam) remember(t *testing.T, u teamUser, req string, choice form.Choice) string {
	t.Helper()
	d := teamtest.Decide(t, teamtest.Parse(t, req), form.Answer{Choice: choice})
	c := mt.config(u, "approver")
	nc, err := wire.Connect(context.Background(), c, team.ApproverInbox(u.pub))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), c.Names().RulesBucket())
	if err != nil {
		t.Fatal(err)
	}
	id, err := wire.WriteRule(context.Background(), kv, u.kp, []byte(req), d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// ageCache makes the team rules cache of the state directory of env older
// than team.RulesFresh.
func ageCache(t *testing.T, env []string) {
	t.Helper()
	var dir string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			dir = filepath.Join(v, "askperm")
		}
	}
	path := filepath.Join(dir, team.RulesCacheName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rc team.RulesCache
	if err := json.Unmarshal(b, &rc); err != nil {
		t.Fatal(err)
	}
	rc.Fetched -= team.RulesFresh.Milliseconds()
	if b, err = json.Marshal(rc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

const teamWriteReq = `{"id":"w1","tool":"write_file","action":"write","dimensions":[{"name":"path","value":"/srv/a",` +
	`"scopes":[{"label":"dir","match":"/srv/","kind":"prefix"}]}]}`

// An approver's deny-always, written to the team, denies the same call on
// a host that trusts the approver, as local memory would (frontend
// memory, cause rule), also with the server down, until its approver is
// no longer trusted; check names it; rules list --team shows it, from
// the server or the cache, saying which; log --team shows the host's
// decision, as a table or JSON lines, filtered; rules forget --team
// forgets it for its approver alone.
func TestTeamMemory(t *testing.T) {
	mt := startMemoryTeam(t)
	id := mt.remember(t, mt.k1, teamWriteReq, form.DenyAlways)
	hostEnv := memoryEnv()
	hostConf := mt.configFile(t, mt.host, "alpha")
	ask := func() result {
		return runPipe(t, []byte(strings.Replace(teamWriteReq, "/srv/a", "/srv/b", 1)), hostEnv, hostConf, "--frontend=none")
	}
	r := ask()
	d := checkDecision(t, r.stdout)
	wantDeny(t, d, "rule", "memory")
	if r.code != 0 || strings.Contains(r.stderr, "askperm:") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}

	r = runPipe(t, []byte(teamWriteReq), hostEnv, "check", "--json", hostConf)
	if !strings.Contains(r.stdout, `{"source":"team","name":"team rule `+id+` by `+mt.k1.pub+`","opinion":"deny"}`) {
		t.Errorf("check: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}

	approverEnv := memoryEnv()
	approverConf := mt.configFile(t, mt.k1, "approver")
	r = runPipe(t, nil, approverEnv, "log", "--team", approverConf, "--json")
	var line struct {
		Host      string   `json:"host"`
		Decision  string   `json:"decision"`
		DecidedBy []string `json:"decided_by"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &line); err != nil || r.code != 0 {
		t.Fatalf("log --team: exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	if line.Host != "alpha" || line.Decision != "deny" || len(line.DecidedBy) != 1 || line.DecidedBy[0] != "team rule "+id+" by "+mt.k1.pub {
		t.Errorf("log --team: %+v", line)
	}

	r = runPipe(t, nil, approverEnv, "log", "--team", approverConf)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "HOST") || !strings.HasPrefix(lines[1], "alpha ") || !strings.Contains(lines[1], "memory (team rule "+id) {
		t.Errorf("log --team: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = runPipe(t, nil, approverEnv, "log", "--team", approverConf, "--decision=allow", "--json"); r.code != 0 || r.stdout != "" {
		t.Errorf("log --team --decision=allow: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}

	r = runPipe(t, nil, hostEnv, "rules", "list", "--team", hostConf)
	if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "in force") || !strings.Contains(r.stderr, "team rules from nats://") {
		t.Errorf("rules list --team: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runPipe(t, nil, approverEnv, "rules", "forget", "--team", id, mt.configFile(t, mt.k2, "approver2"))
	if r.code == 0 || !strings.Contains(r.stderr, "no team rule "+id+" of yours") {
		t.Errorf("forget another approver's rule by id: exit %d, %s", r.code, r.stderr)
	}

	mt.stop()
	ageCache(t, hostEnv) // the host tries the server, then decides by the cache
	r = ask()
	wantDeny(t, checkDecision(t, r.stdout), "rule", "memory")
	if !strings.Contains(r.stderr, "deciding by those cached at") || !strings.Contains(r.stderr, "audit stream:") {
		t.Errorf("offline: stderr %q", r.stderr)
	}
	r = runPipe(t, nil, hostEnv, "rules", "list", "--team", hostConf)
	if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stderr, "from the cache of") {
		t.Errorf("rules list --team offline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The approver's key removed from approvers: its rule stops at once,
	// offline, cached.
	revoked := strings.Replace(readConfig(t, hostConf), mt.k1.pub, mt.k2.pub, 1)
	r = runPipe(t, []byte(strings.Replace(teamWriteReq, "/srv/a", "/srv/b", 1)), hostEnv, "--config="+writeConfig(t, revoked), "--frontend=none")
	wantDeny(t, checkDecision(t, r.stdout), "unavailable", "none")

	mt.start(t)
	r = runPipe(t, nil, approverEnv, "rules", "forget", "--team", id, approverConf)
	if r.code != 0 || !strings.Contains(r.stderr, "forgot team rule "+id) {
		t.Fatalf("forget: exit %d, %s", r.code, r.stderr)
	}
	r = runPipe(t, nil, approverEnv, "rules", "list", "--team", approverConf, "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("rules list --team after forget: %s %s", r.stdout, r.stderr)
	}
}

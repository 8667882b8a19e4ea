package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/teamtest"
	"github.com/askperm/askperm/internal/team/wire"
)

// TestTeamAnswered: with --frontend team alone, as on a CI runner, the
// request goes to the team's NATS server as sent, and an approver's
// signed allow-always, with the rule stage's answers, decides it: the
// decision says frontend team, the audit log names the approver, and the
// host remembers no rule of its own (the team keeps it).
func TestTeamAnswered(t *testing.T) {
	url := natsServer(t)
	approver := teamtest.UserKey(t)
	key, _ := approver.PublicKey()
	cfg := team.Config{URL: url, Host: "ci-1", Approvers: []string{key}, Prefix: team.DefaultPrefix, Replicas: 1}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, err := wire.Connect(ctx, cfg, team.ApproverInbox(key))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := wire.EnsureStreams(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	requests, err := js.OrderedConsumer(ctx, cfg.Names().RequestStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}

	conf := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(conf, []byte("[team]\nurl = \""+url+"\"\nhost = \"ci-1\"\napprovers = [\""+key+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := memoryEnv()
	raw := readFile(t, "requests/write-file.json")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "--config", conf, "--frontend", "team", "--timeout", "50s")
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = bytes.NewReader(raw), &stdout, &stderr, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	msg, err := requests.Next(jetstream.FetchMaxWait(30 * time.Second))
	if err != nil {
		t.Fatalf("no request published: %v; stderr %q", err, stderr.String())
	}
	p, err := wire.ParsePending(cfg.Names(), msg.Subject(), msg.Headers(), msg.Data())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Raw, raw) {
		t.Errorf("published %q, sent %q", p.Raw, raw)
	}
	f := form.New(p.Request, form.Options{})
	a := f.Defaults()
	a.Choice, a.Scopes["path"] = form.AllowAlways, "/home/a/p/"
	a.Grants = []string{"fs.write"}
	d, err := f.Decide(a, decision.FrontendTeam, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	signed, err := team.Sign(approver, d, p.Host, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	b, err := wire.Bind(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.WriteAnswer(ctx, b.Answers, p.Host, p.Ask, signed); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("askperm: %v; stderr %q", err, stderr.String())
	}
	got := checkDecision(t, stdout.String())
	if got["decision"] != "allow" || got["persist"] != "always" || got["frontend"] != "team" || got["cause"] != "user" ||
		got["request_sha256"] != p.Digest {
		t.Errorf("decision %v", got)
	}
	if _, err := b.Done.Get(ctx, team.DoneKey(p.Host, p.Ask)); err != nil {
		t.Errorf("the request's end is not recorded: %v", err)
	}
	var state string
	for _, kv := range env {
		if s, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = filepath.Join(s, "askperm")
		}
	}
	if audit, err := os.ReadFile(filepath.Join(state, "audit.log")); err != nil || !bytes.Contains(audit, []byte(`"approver":"`+key+`"`)) {
		t.Errorf("the audit log does not name the approver: %s, %v", audit, err)
	}
	if rules := runIn(t, env, "rules", "list", "--json"); strings.TrimSpace(rules) != "[]" {
		t.Errorf("the host remembered the team's rule: %s", rules)
	}
}

// TestTeamProgramMissing: askperm installed without askperm-team (not
// beside it, not on PATH) leaves the team frontend unavailable, saying how
// to install it, and the chain goes on: a deny, cause unavailable, with
// no server asked.
func TestTeamProgramMissing(t *testing.T) {
	alone, conf := askpermAlone(t, t.TempDir())
	wantTeamUnavailable(t, alone, conf, "askperm-team is not installed", "go install github.com/askperm/askperm/cmd/askperm-team@")
}

// askpermAlone copies askperm, without askperm-team, into dir, and writes
// a config file whose [team] names a server nobody answers at.
func askpermAlone(t *testing.T, dir string) (askperm, conf string) {
	t.Helper()
	askperm = filepath.Join(dir, "askperm")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(askperm, b, 0o755); err != nil {
		t.Fatal(err)
	}
	key, _ := teamtest.UserKey(t).PublicKey()
	conf = filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(conf, []byte("[team]\nurl = \"nats://127.0.0.1:1\"\nhost = \"ci-1\"\napprovers = [\""+key+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return askperm, conf
}

// runAlone runs askperm with stdin and args, with no terminal and a
// PATH of the system's directories only, and returns its exit status,
// stdout and stderr.
func runAlone(t *testing.T, askperm string, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(askperm, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// wantTeamUnavailable runs askperm with the team frontend, then line,
// and wants a deny, the team unavailable saying each of says, and the
// chain gone on to line.
func wantTeamUnavailable(t *testing.T, askperm, conf string, says ...string) {
	t.Helper()
	code, stdout, stderr := runAlone(t, askperm, readFile(t, "requests/write-file.json"), "--config", conf, "--frontend", "team,line")
	if code != 0 {
		t.Fatalf("askperm: exit %d; stderr %q", code, stderr)
	}
	wantDeny(t, checkDecision(t, stdout), "unavailable", "none")
	for _, want := range append(says, "line:") {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}

// TestTeamProgramPlanted: an askperm-team beside askperm in a directory
// others may write is refused, not run (it would run outside the
// agent's sandbox): the team frontend is unavailable, saying why, and the
// chain goes on; askperm inbox, which would run it in askperm's place,
// fails saying why.
func TestTeamProgramPlanted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	askperm, conf := askpermAlone(t, dir)
	ran := filepath.Join(t.TempDir(), "ran")
	if err := os.WriteFile(filepath.Join(dir, "askperm-team"), []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantTeamUnavailable(t, askperm, conf, "askperm-team beside askperm refused", "writable by others")
	if code, _, stderr := runAlone(t, askperm, nil, "inbox", "list", "--config", conf); code == 0 || !strings.Contains(stderr, "askperm-team beside askperm refused") {
		t.Errorf("askperm inbox: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the planted askperm-team ran")
	}
}

// natsServer starts a NATS server with JetStream for the test and returns
// its URL.
func natsServer(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	return "nats://" + s.Addr().(*net.TCPAddr).String()
}

// TestAskpermLinksNoNATS: askperm itself links no NATS code, client, keys
// or server (their initialisers would slow every decision); askperm-team
// links the client, never the server.
func TestAskpermLinksNoNATS(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return string(out)
	}
	team := deps(module + "/cmd/askperm-team")
	if !strings.Contains(team, "github.com/nats-io/nats.go\n") || !strings.Contains(team, "github.com/nats-io/nkeys\n") || strings.Contains(team, "nats-server") {
		t.Errorf("askperm-team should link the NATS client and no server; it links:\n%s", team)
	}
	for _, dep := range strings.Fields(deps(module)) {
		if strings.HasPrefix(dep, "github.com/nats-io/") || strings.Contains(dep, "nkeys") {
			t.Errorf("askperm links %s", dep)
		}
	}
}

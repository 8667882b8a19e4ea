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

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

// inboxTeam is a NATS server in this process, an approver's askperm set
// up for it (config and key) and a host publishing requests to it.
type inboxTeam struct {
	t                *testing.T
	config, stateDir string
	approver         string // the approver's public key
	host             team.Config
	js               jetstream.JetStream
}

func startInboxTeam(t *testing.T) *inboxTeam {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)

	it := &inboxTeam{t: t, stateDir: t.TempDir()}
	it.config = filepath.Join(t.TempDir(), "config.toml")
	conf := fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\n", url)
	if err := os.WriteFile(it.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runPipe(t, nil, baseEnv(), it.args("inbox", "key")...)
	if r.code != 0 {
		t.Fatalf("inbox key: exit %d: %s", r.code, r.stderr)
	}
	it.approver = strings.TrimSpace(r.stdout)
	if r := runPipe(t, nil, baseEnv(), it.args("inbox", "list")...); r.code != 0 { // makes the streams
		t.Fatalf("inbox list: exit %d: %s", r.code, r.stderr)
	}

	it.host = team.Config{URL: url, Host: "alpha", Approvers: []string{it.approver}, Prefix: team.DefaultPrefix, Replicas: 1}
	nc, err := team.Connect(context.Background(), it.host, team.HostInbox(it.host.Host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if it.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	return it
}

// args are args for the approver's askperm.
func (it *inboxTeam) args(args ...string) []string {
	return append(args, "--config", it.config, "--state-dir", it.stateDir)
}

// publish publishes testdata/requests/name as host alpha's team frontend
// does, with its id set to id (to tell requests apart).
func (it *inboxTeam) publish(name, id string) *decision.Request {
	it.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFile(it.t, "requests/"+name), &m); err != nil {
		it.t.Fatal(err)
	}
	m["id"] = id
	raw, _ := json.Marshal(m)
	req, err := decision.Parse(raw)
	if err != nil {
		it.t.Fatal(err)
	}
	if err := team.Publish(context.Background(), it.js, it.host.Names(), "alpha", req.SHA256, raw, time.Now().Add(time.Hour)); err != nil {
		it.t.Fatal(err)
	}
	return req
}

// done marks req ended on its host, as the host does when another
// approver's answer decided it.
func (it *inboxTeam) done(req *decision.Request) {
	it.t.Helper()
	kv, err := it.js.KeyValue(context.Background(), it.host.Names().DoneBucket())
	if err != nil {
		it.t.Fatal(err)
	}
	if err := team.WriteDone(context.Background(), kv, "alpha", req.SHA256, team.Done{Outcome: "allow", Frontend: decision.FrontendTeam, Cause: decision.CauseUser}); err != nil {
		it.t.Fatal(err)
	}
}

// answer is the approver's answer to req, verified as host alpha does.
func (it *inboxTeam) answer(req *decision.Request) decision.Decision {
	it.t.Helper()
	kv, err := it.js.KeyValue(context.Background(), it.host.Names().AnswersBucket())
	if err != nil {
		it.t.Fatal(err)
	}
	key := team.AnswerKey("alpha", req.SHA256, it.approver)
	var e jetstream.KeyValueEntry
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if e, err = kv.Get(context.Background(), key); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		it.t.Fatalf("no answer %s: %v", key, err)
	}
	v, err := team.Verify(it.host, key, e.Value(), req)
	if err != nil {
		it.t.Fatalf("the answer does not verify: %v", err)
	}
	return v.Decision
}

// startInbox runs askperm inbox on an 80x24 pty.
func (it *inboxTeam) startInbox() *ptySession {
	it.t.Helper()
	return startPTY(it.t, nil, tuiEnv(it.t), it.args("inbox")...)
}

// TestInboxOpensTheFormAndAnswers: the list shows the pending request,
// Enter opens it in the terminal UI's form, the person's keys (after
// the arming delay) answer it, and the signed answer lands in the
// answers bucket, verified as the host verifies it.
func TestInboxOpensTheFormAndAnswers(t *testing.T) {
	it := startInboxTeam(t)
	req := it.publish("write-file.json", "one")
	s := it.startInbox()
	s.waitFor("askperm inbox: 1 pending")
	s.waitFor("alpha        s-1        ")
	s.waitFor("write_file (fs-default) wants to write /h…")
	s.send(tuiEnter)
	tuiShown(s, "Your decision", 1)
	s.waitFor("Tool: write_file (from engine:1)")
	tuiChoose(s, "Allow once")
	s.send(tuiEnter)
	s.waitFor(": answered Allow once")
	if d := it.answer(req); d.Decision != decision.Allow || d.Frontend != decision.FrontendTeam || d.Persist != decision.PersistOnce {
		t.Fatalf("the answer written: %+v", d)
	}
	s.send("q")
	if r := s.wait(); r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestInboxLiveRemoval: a request another approver answered (its host
// marks it done) leaves the list at once, and a form open on a request
// closes when it is done, saying so.
func TestInboxLiveRemoval(t *testing.T) {
	it := startInboxTeam(t)
	first := it.publish("write-file.json", "first")
	second := it.publish("run-command.json", "second")
	s := it.startInbox()
	s.waitFor("askperm inbox: 2 pending")
	it.done(first)
	s.waitFor("askperm inbox: 1 pending")

	s.send(tuiEnter) // the newest, the only one left
	tuiShown(s, "Your decision", 1)
	it.done(second)
	s.waitFor("not answered: the request ended on its host")
	s.waitFor("askperm inbox: 0 pending")
	s.send("q")
	if r := s.wait(); r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
}

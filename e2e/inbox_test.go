package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/inbox/inboxtest"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/natstest"
)

// inboxTeam is a NATS server in this process running the documented
// configuration (natstest) for hosts alpha and ci-1 and one approver, the
// approver's askperm set up for it, and host alpha publishing requests.
type inboxTeam struct {
	t                *testing.T
	config, stateDir string
	approver         string // the approver's public key
	host             *inboxtest.Host
	ci               natstest.User // host ci-1, for a host's own askperm
	url              string
}

func startInboxTeam(t *testing.T) *inboxTeam {
	t.Helper()
	tm := natstest.NewTeam(t, []string{"alpha", "ci-1"}, 1)
	url := natstest.StartServer(t, tm).URL
	ap := tm.Approvers[0]
	it := &inboxTeam{t: t, stateDir: t.TempDir(), approver: ap.Public, ci: tm.Hosts[1], url: url}
	it.config = filepath.Join(t.TempDir(), "config.toml")
	conf := fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\ncreds = %q\nkey = %q\n", url, ap.SeedFile, ap.SeedFile)
	if err := os.WriteFile(it.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	tm.SetUp(t, url, 1) // as askperm-team setup does, with the set-up user's credentials
	if r := runPipe(t, nil, baseEnv(), it.args("inbox", "list")...); r.code != 0 {
		t.Fatalf("inbox list: exit %d: %s", r.code, r.stderr)
	}
	it.host = inboxtest.NewHost(t, url, tm.Hosts[0], it.approver)
	return it
}

// args are args for the approver's askperm.
func (it *inboxTeam) args(args ...string) []string {
	return append(args, "--config", it.config, "--state-dir", it.stateDir)
}

// publish publishes testdata/requests/name as host alpha's team frontend
// does, with its id set to id.
func (it *inboxTeam) publish(name, id string) *decision.Request {
	return it.host.Publish(readFile(it.t, "requests/"+name), id, time.Now().Add(time.Hour))
}

// done marks req ended on its host, as the host does when another
// approver's answer decided it.
func (it *inboxTeam) done(req *decision.Request) {
	it.host.Done(req, team.Done{Outcome: "allow", Frontend: decision.FrontendTeam, Cause: decision.CauseUser})
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
	if d := it.host.Answer(req, it.approver); d.Decision != decision.Allow || d.Frontend != decision.FrontendTeam || d.Persist != decision.PersistOnce {
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
	// Closing a form in the inbox decides nothing: no line says it denied.
	if strings.Contains(s.text(), "askperm: denied") {
		t.Errorf("a form closed unanswered was called a deny:\n%s", s.text())
	}
	s.send("q")
	if r := s.wait(); r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestInboxAnswersAHost: a host asks with --frontend team alone, as a CI
// runner does; the approver finds its request with inbox list and answers
// with inbox answer; the host verifies the answer and decides by it, and
// marks the request done, so that it leaves every inbox.
func TestInboxAnswersAHost(t *testing.T) {
	it := startInboxTeam(t)
	conf := filepath.Join(t.TempDir(), "host.toml")
	text := fmt.Sprintf("[team]\nurl = %q\nhost = \"ci-1\"\ncreds = %q\napprovers = [%q]\n", it.url, it.ci.SeedFile, it.approver)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	host := make(chan result, 1)
	go func() {
		host <- runPipe(t, readFile(t, "requests/write-file.json"), memoryEnv(), "--config", conf, "--frontend", "team", "--timeout", "25s")
	}()

	var pending []map[string]any
	for deadline := time.Now().Add(10 * time.Second); len(pending) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pending = inboxList(t, it)
	}
	if len(pending) != 1 || pending[0]["host"] != "ci-1" {
		t.Fatalf("pending %v, want the host's request", pending)
	}
	digest, _ := pending[0]["request_sha256"].(string)
	id, _ := pending[0]["id"].(string)
	if r := runPipe(t, nil, baseEnv(), it.args("inbox", "answer", id, "deny-once", "--message", "not on Fridays")...); r.code != 0 {
		t.Fatalf("inbox answer: exit %d: %s", r.code, r.stderr)
	}
	r := <-host
	if r.code != 0 {
		t.Fatalf("the host: exit %d: %s", r.code, r.stderr)
	}
	d := checkDecision(t, r.stdout)
	if d["decision"] != "deny" || d["frontend"] != "team" || d["cause"] != "user" || d["message"] != "not on Fridays" || d["request_sha256"] != digest {
		t.Fatalf("the host decided %v", d)
	}
	if pending := inboxList(t, it); len(pending) != 0 {
		t.Fatalf("still pending once the host decided: %v", pending)
	}
}

// inboxList is what inbox list --json prints, one object per request.
func inboxList(t *testing.T, it *inboxTeam) []map[string]any {
	t.Helper()
	r := runPipe(t, nil, baseEnv(), it.args("inbox", "list", "--json")...)
	if r.code != 0 {
		t.Fatalf("inbox list: exit %d: %s", r.code, r.stderr)
	}
	return jsonLines(t, "inbox list --json", r.stdout)
}

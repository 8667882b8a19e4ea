package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

// natsServer starts a NATS server with JetStream in this process, on a
// free loopback port, its store in a temporary directory, without
// authentication; it stops when the test ends.
func natsServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return fmt.Sprintf("nats://127.0.0.1:%d", port)
}

// teamApprover is an approver's askperm: its config file (naming the
// server) and state directory (holding its key, made by inbox key).
type teamApprover struct {
	t           *testing.T
	config, dir string
	key         string // public
}

func newApprover(t *testing.T, url string) *teamApprover {
	t.Helper()
	a := &teamApprover{t: t, dir: t.TempDir()}
	a.config = writeFile(t, "config.toml", fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\n", url))
	code, out, stderr := a.run("inbox", "key")
	if code != exitOK || !strings.HasPrefix(out, "U") {
		t.Fatalf("inbox key: exit %d, %q, %s", code, out, stderr)
	}
	a.key = strings.TrimSpace(out)
	return a
}

func (a *teamApprover) run(args ...string) (int, string, string) {
	a.t.Helper()
	return invoke(a.t, "", nil, append(args, "--config", a.config, "--state-dir", a.dir)...)
}

// teamHost is a host of the team: what it trusts, and its connection.
type teamHost struct {
	t   *testing.T
	cfg team.Config
	js  jetstream.JetStream
}

func newHost(t *testing.T, url string, approvers ...string) *teamHost {
	t.Helper()
	cfg := team.Config{URL: url, Host: "alpha", Approvers: approvers, Prefix: team.DefaultPrefix, Replicas: 1}
	nc, err := team.Connect(context.Background(), cfg, team.HostInbox(cfg.Host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &teamHost{t: t, cfg: cfg, js: js}
}

// publish publishes the request in testdata/requests/name, with id made
// unique by id, as the team frontend does; it ends at deadline.
func (h *teamHost) publish(name, id string, deadline time.Time) *decision.Request {
	h.t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "requests", name))
	if err != nil {
		h.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		h.t.Fatal(err)
	}
	m["id"] = id
	raw, _ = json.Marshal(m)
	req, err := decision.Parse(raw)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := team.Publish(context.Background(), h.js, h.cfg.Names(), h.cfg.Host, req.SHA256, raw, deadline); err != nil {
		h.t.Fatal(err)
	}
	return req
}

func (h *teamHost) kv(bucket string) jetstream.KeyValue {
	h.t.Helper()
	kv, err := h.js.KeyValue(context.Background(), bucket)
	if err != nil {
		h.t.Fatal(err)
	}
	return kv
}

// answer is approver a's verified answer to req, failing the test when
// there is none or it does not verify.
func (h *teamHost) answer(req *decision.Request, approver string) decision.Decision {
	h.t.Helper()
	key := team.AnswerKey(h.cfg.Host, req.SHA256, approver)
	e, err := h.kv(h.cfg.Names().AnswersBucket()).Get(context.Background(), key)
	if err != nil {
		h.t.Fatalf("answer %s: %v", key, err)
	}
	v, err := team.Verify(h.cfg, key, e.Value(), req)
	if err != nil {
		h.t.Fatalf("the answer does not verify: %v", err)
	}
	return v.Decision
}

// listed is the digests inbox list --json prints, by host and digest.
func listed(t *testing.T, a *teamApprover) map[string]inboxEntry {
	t.Helper()
	code, out, stderr := a.run("inbox", "list", "--json")
	if code != exitOK {
		t.Fatalf("inbox list: exit %d: %s", code, stderr)
	}
	got := map[string]inboxEntry{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e inboxEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[e.Host+"."+e.Digest] = e
	}
	return got
}

func TestInboxAnswerIsSignedAndBound(t *testing.T) {
	url := natsServer(t)
	a := newApprover(t, url)
	if got := listed(t, a); len(got) != 0 { // and the streams are made
		t.Fatalf("a new team lists %v", got)
	}
	h := newHost(t, url, a.key)
	deadline := time.Now().Add(time.Hour)
	allow := h.publish("write-file.json", "allow", deadline)
	deny := h.publish("write-file.json", "deny", deadline)
	always := h.publish("write-file.json", "always", deadline)

	got := listed(t, a)
	e, ok := got["alpha."+allow.SHA256]
	if len(got) != 3 || !ok {
		t.Fatalf("listed %v, want the 3 requests", got)
	}
	if e.Question != "write_file (fs-default) wants to write /home/a/p/report.md" || e.SessionID != "s-1" ||
		!e.Deadline.Equal(deadline.Truncate(time.Millisecond)) || !strings.Contains(string(e.Request), `"id":"allow"`) {
		t.Errorf("entry %+v", e)
	}

	if code, _, stderr := a.run("inbox", "answer", allow.SHA256, "allow-once"); code != exitOK {
		t.Fatalf("answer allow-once: exit %d: %s", code, stderr)
	}
	if d := h.answer(allow, a.key); d.Decision != decision.Allow || d.Frontend != decision.FrontendTeam || d.Persist != decision.PersistOnce {
		t.Errorf("allow-once: %+v", d)
	}

	if code, _, stderr := a.run("inbox", "answer", deny.SHA256, "deny-once", "--message", "not now"); code != exitOK {
		t.Fatalf("answer deny-once: exit %d: %s", code, stderr)
	}
	if d := h.answer(deny, a.key); d.Decision != decision.Deny || d.Message != "not now" {
		t.Errorf("deny with a message: %+v", d)
	}

	code, _, stderr := a.run("inbox", "answer", always.SHA256, "allow-always", "--grant", "fs.write",
		"--scope", "path=/home/a/p/", "--workdir-scope", "all", "--lifetime", "900")
	if code != exitOK {
		t.Fatalf("answer allow-always: exit %d: %s", code, stderr)
	}
	d := h.answer(always, a.key)
	if d.Decision != decision.Allow || d.Persist != decision.PersistAlways || d.Rule == nil ||
		d.Rule.Scopes["path"] != "/home/a/p/" || d.Rule.WorkdirScope != "all" || d.Rule.Lifetime != "900" ||
		strings.Join(d.Grants, ",") != "fs.write" {
		t.Errorf("allow-always with its rule stage: %+v, rule %+v", d, d.Rule)
	}
	rules := h.rules(a.key)
	if len(rules) != 1 || rules[0].Rule.Decision != decision.Allow || rules[0].Rule.WorkdirScope != "all" || rules[0].Rule.Expires == 0 {
		t.Errorf("the team rules of the approver: %+v", rules)
	}
}

// rules are approver's team rules, each verified as a host verifies it.
func (h *teamHost) rules(approver string) []team.Unverified {
	h.t.Helper()
	kv := h.kv(h.cfg.Names().RulesBucket())
	keys, err := kv.ListKeysFiltered(context.Background(), approver+".>")
	if err != nil {
		h.t.Fatal(err)
	}
	var out []team.Unverified
	for key := range keys.Keys() {
		e, err := kv.Get(context.Background(), key)
		if err != nil {
			h.t.Fatal(err)
		}
		u, err := team.ReadRule(key, e.Value())
		if err == nil {
			err = u.Verify(h.cfg)
		}
		if err != nil {
			h.t.Fatalf("team rule %s: %v", key, err)
		}
		out = append(out, u)
	}
	return out
}

func TestInboxAnswerErrors(t *testing.T) {
	url := natsServer(t)
	a := newApprover(t, url)
	listed(t, a)
	h := newHost(t, url, a.key)
	req := h.publish("write-file.json", "r", time.Now().Add(time.Hour))
	expired := h.publish("write-file.json", "expired", time.Now().Add(-time.Second))
	done := h.publish("write-file.json", "done", time.Now().Add(time.Hour))
	if err := team.WriteDone(context.Background(), h.kv(h.cfg.Names().DoneBucket()), "alpha", done.SHA256,
		team.Done{Outcome: "deny", Frontend: decision.FrontendTeam, Cause: decision.CauseTimeout}); err != nil {
		t.Fatal(err)
	}
	if got := listed(t, a); len(got) != 1 {
		t.Fatalf("listed %v, want only the request neither expired nor done", got)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown", []string{strings.Repeat("0", 64), "allow-once"}, exitNoMatch, "no such request is pending"},
		{"expired", []string{expired.SHA256, "deny-once"}, exitNoMatch, "expired"},
		{"done", []string{done.SHA256, "deny-once"}, exitNoMatch, "ended"},
		{"not a digest", []string{"abc", "allow-once"}, exitUsage, "not a request digest"},
		{"session", []string{req.SHA256, "allow-session"}, exitUsage, "a session approval lives in its host's memory"},
		{"unknown choice", []string{req.SHA256, "allow-forever"}, exitUsage, "choice: unknown"},
		{"rule field on a one-time choice", []string{req.SHA256, "allow-once", "--lifetime", "900"}, exitUsage, "belong to always-choices"},
		{"scope not offered", []string{req.SHA256, "allow-always", "--scope", "path=/etc/"}, exitUsage, "not a scope offered"},
	} {
		code, _, stderr := a.run(append([]string{"inbox", "answer"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want %d, %q", tc.name, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := h.kv(h.cfg.Names().AnswersBucket()).Get(context.Background(), team.AnswerKey("alpha", req.SHA256, a.key)); err == nil {
		t.Error("a rejected answer was written")
	}
}

// TestInboxAnswersRace: one approver answering one request twice at once
// writes one answer; two approvers each write theirs.
func TestInboxAnswersRace(t *testing.T) {
	url := natsServer(t)
	a, b := newApprover(t, url), newApprover(t, url)
	listed(t, a)
	h := newHost(t, url, a.key, b.key)
	req := h.publish("write-file.json", "race", time.Now().Add(time.Hour))

	codes := make([]int, 3)
	var wg sync.WaitGroup
	for i, run := range []func() (int, string, string){
		func() (int, string, string) { return a.run("inbox", "answer", req.SHA256, "allow-once") },
		func() (int, string, string) { return a.run("inbox", "answer", req.SHA256, "deny-once") },
		func() (int, string, string) { return b.run("inbox", "answer", req.SHA256, "deny-once") },
	} {
		wg.Go(func() { codes[i], _, _ = run() })
	}
	wg.Wait()
	if codes[0]+codes[1] != exitNoMatch || codes[0]*codes[1] != 0 || codes[2] != exitOK {
		t.Fatalf("exits %v: want one of approver a's answers written (0) and the other refused (69), approver b's written", codes)
	}
	first := h.answer(req, a.key)
	if want := map[bool]string{true: decision.Allow, false: decision.Deny}[codes[0] == exitOK]; first.Decision != want {
		t.Errorf("approver a's answer is %s, not the one that was written first", first.Decision)
	}
	if h.answer(req, b.key).Decision != decision.Deny {
		t.Error("approver b's answer")
	}
	code, _, stderr := a.run("inbox", "answer", req.SHA256, "deny-once")
	if code != exitNoMatch || !strings.Contains(stderr, "answered this request already") {
		t.Errorf("a third answer: exit %d, %s", code, stderr)
	}
}

func TestInboxKey(t *testing.T) {
	a := newApprover(t, "nats://127.0.0.1:1")
	code, _, stderr := a.run("inbox", "key")
	if code != exitUsage || !strings.Contains(stderr, "a key exists already") {
		t.Errorf("a second inbox key: exit %d, %s", code, stderr)
	}
	code, out, _ := a.run("inbox", "key", "--show")
	if code != exitOK || strings.TrimSpace(out) != a.key {
		t.Errorf("inbox key --show: exit %d, %q, want %s", code, out, a.key)
	}
	fi, err := os.Stat(filepath.Join(a.dir, team.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v, %v", fi, err)
	}
}

package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/askperm/askperm/internal/policy"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/reviewer/reviewertest"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/teamtest"
	"github.com/askperm/askperm/internal/team/wire"
	"github.com/askperm/askperm/internal/testbin"
	"github.com/askperm/askperm/prompt"
)

// natsTeam starts a NATS server with JetStream in this process, sets up
// the team's streams and buckets as an approver does, and returns the
// askperm is built for these tests with askperm-team beside it: the
// team frontend and team memory run askperm-team.
var askperm string

// TestMain also answers as a fake reviewer when the reviewers' tests
// start the test binary as one.
func TestMain(m *testing.M) {
	reviewertest.Fake()
	testbin.Main(m, &askperm)
}

// config of a host trusting approvers, and the approver's JetStream.
func natsTeam(t *testing.T, approvers ...string) (team.Config, jetstream.JetStream) {
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
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	c := team.Config{URL: "nats://127.0.0.1:" + strconv.Itoa(port), Host: "alpha", Prefix: team.DefaultPrefix, Replicas: 1, Approvers: approvers, Program: filepath.Join(filepath.Dir(askperm), team.ProgramName)}
	nc, err := wire.Connect(context.Background(), c, team.HostInbox("approver"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.EnsureStreams(context.Background(), js, c); err != nil {
		t.Fatal(err)
	}
	return c, js
}

// rememberForTeam writes approver kp's team rule for choice on raw.
func rememberForTeam(t *testing.T, js jetstream.JetStream, kp nkeys.KeyPair, raw string, choice form.Choice) string {
	t.Helper()
	d := teamtest.Decide(t, teamtest.Parse(t, raw), form.Answer{Choice: choice})
	kv, err := js.KeyValue(context.Background(), team.Names{Prefix: team.DefaultPrefix}.RulesBucket())
	if err != nil {
		t.Fatal(err)
	}
	id, err := wire.WriteRule(context.Background(), kv, kp, []byte(raw), d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func approverKey(t *testing.T) (nkeys.KeyPair, string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp, team.PublicKey(kp)
}

// A team deny-always decides on a host trusting its approver as the same
// rule remembered locally does (deny, memory, rule), named with its
// approver in the audit log, whose line reaches the team's audit stream
// as written; on a host not trusting the approver it decides nothing.
func TestTeamRuleDecidesAsLocalMemory(t *testing.T) {
	kp, k := approverKey(t)
	c, js := natsTeam(t, k)
	id := rememberForTeam(t, js, kp, writeReq, form.DenyAlways)
	allowID := rememberForTeam(t, js, kp, strings.Replace(writeReq, `"/p/a"`, `"/p/b"`, 1), form.AllowAlways)

	dir := t.TempDir()
	var w warnings
	p := pipe(Config{Memory: &Memory{Dir: dir}, Team: &c, Warn: w.warn}, prompt.None{})
	d, err := decideRaw(t, context.Background(), p, strings.Replace(writeReq, `"/p/a"`, `"/p/c"`, 1))
	if err != nil {
		t.Fatal(err)
	}

	local := t.TempDir()
	deny, _ := answers.Single("deny-always", "")
	decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: local}, Answers: deny}), writeReq)
	ld, _ := decideRaw(t, context.Background(), pipe(Config{Memory: &Memory{Dir: local}}, prompt.None{}), strings.Replace(writeReq, `"/p/a"`, `"/p/c"`, 1))
	if d.Decision != decision.Deny || d.Frontend != decision.FrontendMemory || d.Cause != decision.CauseRule ||
		d.Decision != ld.Decision || d.Frontend != ld.Frontend || d.Cause != ld.Cause {
		t.Fatalf("team %+v, local %+v", d, ld)
	}
	if len(w.said) > 0 {
		t.Errorf("warnings: %q", w.said)
	}

	logged := auditLines(t, dir)
	if len(logged) != 1 || !strings.Contains(logged[0], `"decided_by":["team rule `+id+` by `+k+`"]`) {
		t.Fatalf("audit log: %q", logged)
	}
	var streamed []string
	err = wire.ReadAudit(context.Background(), js, c.Names(), func(l wire.AuditLine) error {
		if l.Host != c.Host {
			t.Errorf("audit line from host %q", l.Host)
		}
		streamed = append(streamed, string(l.Line))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(streamed, logged) {
		t.Errorf("audit stream %q, audit log %q", streamed, logged)
	}

	// The allow of the same approver, on a host not trusting it.
	other := c
	_, stranger := approverKey(t)
	other.Approvers = []string{stranger}
	p = pipe(Config{Memory: &Memory{Dir: t.TempDir()}, Team: &other}, prompt.None{})
	if d, _ := decideRaw(t, context.Background(), p, strings.Replace(writeReq, `"/p/a"`, `"/p/b"`, 1)); d.Cause != decision.CauseUnavailable {
		t.Errorf("a host not trusting the approver of %s: %+v", allowID, d)
	}
}

// auditLines are the lines of the audit log in dir.
func auditLines(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, state.AuditName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if !json.Valid(l) {
			t.Fatalf("audit line %q", l)
		}
		out = append(out, string(l))
	}
	return out
}

// Every decision of the team frontend reaches the team's audit stream,
// its approver named, a deny at the deadline too; an answer to remember
// always marks the cached team rules stale, so the approver's new rule
// decides the next request.
func TestTeamFrontendDecisionsReachTheAuditStream(t *testing.T) {
	_, k := approverKey(t)
	c, js := natsTeam(t, k)
	req, err := decision.Parse([]byte(writeReq))
	if err != nil {
		t.Fatal(err)
	}
	a := form.New(req, form.Options{}).Defaults()
	a.Choice, a.Approver = form.AllowAlways, k
	dir := t.TempDir()
	var w warnings
	p := pipe(Config{Memory: &Memory{Dir: dir}, Team: &c, Warn: w.warn}, fake{name: string(decision.FrontendTeam), answer: a})
	if d, _ := decideRaw(t, context.Background(), p, writeReq); d.Decision != decision.Allow || d.Frontend != decision.FrontendTeam {
		t.Fatalf("answered: %+v", d)
	}
	if rc, err := team.LoadRules(c, dir); err != nil || !rc.Stale {
		t.Errorf("the cache after an always-answer: %+v, %v", rc, err)
	}
	p = pipe(Config{Memory: &Memory{Dir: dir}, Team: &c, Warn: w.warn, Timeout: 300 * time.Millisecond}, fake{name: string(decision.FrontendTeam), block: true})
	if d, _ := decideRaw(t, context.Background(), p, strings.Replace(writeReq, `"/p/a"`, `"/p/b"`, 1)); d.Cause != decision.CauseTimeout || d.Frontend != decision.FrontendTeam {
		t.Fatalf("timed out: %+v", d)
	}
	var streamed []state.AuditEntry
	err = wire.ReadAudit(context.Background(), js, c.Names(), func(l wire.AuditLine) error {
		var e state.AuditEntry
		err := json.Unmarshal(l.Line, &e)
		streamed = append(streamed, e)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(streamed) != 2 || streamed[0].Approver != k || streamed[0].Persist != decision.PersistAlways || streamed[1].Cause != decision.CauseTimeout {
		t.Errorf("audit stream %+v", streamed)
	}
	if len(w.said) > 0 {
		t.Errorf("warnings: %q", w.said)
	}
}

// A host that cannot know its team's rules (none fetched, the server
// unreachable) may be missing a team deny of the request: no allow of a
// rules file stands by itself there, as when local memory cannot be
// consulted; the question goes to a person, and with nobody, a deny.
func TestUnknownTeamRulesLetNoAllowStand(t *testing.T) {
	_, k := approverKey(t)
	c, _ := natsTeam(t, k)
	c.URL = "nats://127.0.0.1:1" // nobody listens
	allow := func(*decision.Request) []policy.Opinion {
		return []policy.Opinion{{Verdict: policy.Allow, By: decision.FrontendRules, Cause: decision.CauseRule, Source: "rules", Name: "writes"}}
	}
	var w warnings
	p := pipe(Config{Memory: &Memory{Dir: t.TempDir()}, Team: &c, Policy: []Source{allow}, Warn: w.warn}, prompt.None{})
	d, err := decideRaw(t, context.Background(), p, writeReq)
	if err != nil {
		t.Fatal(err)
	}
	if d.Decision != decision.Deny || d.Cause != decision.CauseUnavailable {
		t.Fatalf("decided %+v, want a deny: nobody to ask", d)
	}
	if !slices.ContainsFunc(w.said, func(s string) bool { return strings.Contains(s, "no allow stands by itself") }) {
		t.Errorf("warnings: %q", w.said)
	}
}

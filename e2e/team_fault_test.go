package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/internal/team/natstest"
)

// faultTeam is a team on real NATS servers (natstest: docs/team/nats.conf
// with generated users) driven only through the built binaries: hosts ask
// with askperm --frontend team, approvers use askperm inbox list and
// inbox answer, the audit stream is read with askperm log --team.
type faultTeam struct {
	t         *testing.T
	tm        *natstest.Team
	url       string
	hosts     map[string]string // host name -> its config.toml
	approvers []faultApprover
	// stall, when set, is the longest an approver's command may take: a
	// cluster's failover must cost a few seconds, not a command's whole
	// wait.
	stall time.Duration
}

// faultApprover is an approver's askperm: its config and state directory.
type faultApprover struct {
	user             natstest.User
	config, stateDir string
}

// newFaultTeam writes the configs of tm's hosts (trusting every approver)
// and approvers for the servers at url, with replicas streams and buckets.
func newFaultTeam(t *testing.T, tm *natstest.Team, url string, replicas int) *faultTeam {
	t.Helper()
	ft := &faultTeam{t: t, tm: tm, url: url, hosts: map[string]string{}}
	var keys []string
	for _, a := range tm.Approvers {
		keys = append(keys, fmt.Sprintf("%q", a.Public))
	}
	for _, h := range tm.Hosts {
		ft.hosts[h.Name] = writeConfig(t, fmt.Sprintf("[team]\nurl = %q\nhost = %q\ncreds = %q\napprovers = [%s]\nreplicas = %d\n",
			url, h.Name, h.SeedFile, strings.Join(keys, ", "), replicas))
	}
	for _, a := range tm.Approvers {
		ft.approvers = append(ft.approvers, faultApprover{user: a, stateDir: t.TempDir(),
			config: writeConfig(t, fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\ncreds = %q\nkey = %q\nreplicas = %d\n",
				url, a.SeedFile, a.SeedFile, replicas))})
	}
	return ft
}

// run runs approver i's askperm with args and returns how it ended.
func (ft *faultTeam) run(i int, args ...string) result {
	ft.t.Helper()
	a := ft.approvers[i]
	start := time.Now()
	r := runBinary(ft.t, bin, append(args, "--config", a.config, "--state-dir", a.stateDir)...)
	if took := time.Since(start); ft.stall > 0 && took > ft.stall {
		ft.t.Errorf("askperm %v took %v, more than %v: %s", args, took.Round(time.Millisecond), ft.stall, r.stderr)
	}
	return r
}

// runBinary runs path with args, no stdin and no terminal, and returns how
// it ended; a run slower than 5 s is logged with its stderr.
func runBinary(t *testing.T, path string, args ...string) result {
	t.Helper()
	cmd := exec.Command(path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	if d := time.Since(start); d > 5*time.Second {
		t.Logf("%s %v took %v: %s", filepath.Base(path), args, d.Round(time.Millisecond), stderr.String())
	}
	return result{stdout.String(), stderr.String(), exitCode(t, err)}
}

// setUp creates the streams and buckets with askperm-team setup and the
// set-up user's credentials, retrying while a new cluster places them.
func (ft *faultTeam) setUp(replicas int) {
	ft.t.Helper()
	conf := writeConfig(ft.t, fmt.Sprintf("[team]\nurl = %q\nhost = \"setup\"\nreplicas = %d\n", ft.url, replicas))
	var r result
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		r = runBinary(ft.t, filepath.Join(filepath.Dir(bin), "askperm-team"), "setup", "--config", conf, "--creds", ft.tm.Setup.SeedFile)
		if r.code == 0 {
			return
		}
	}
	ft.t.Fatalf("askperm-team setup: exit %d: %s", r.code, r.stderr)
}

// pendingEntry is one line of inbox list --json.
type pendingEntry struct {
	fields map[string]any
	req    map[string]any // the request as its host sent it
}

// host is the requesting host's name.
func (e pendingEntry) host() string { s, _ := e.fields["host"].(string); return s }

// reqID is the request's own id.
func (e pendingEntry) reqID() string { s, _ := e.req["id"].(string); return s }

// answerID is what inbox answer takes to name the request (its host's
// asking of it), as inbox list prints it.
func (e pendingEntry) answerID() string { s, _ := e.fields["id"].(string); return s }

// list is approver i's inbox list --json; ok is false when it failed (a
// server going away).
func (ft *faultTeam) list(i int) (entries []pendingEntry, ok bool) {
	ft.t.Helper()
	r := ft.run(i, "inbox", "list", "--json")
	if r.code != 0 {
		return nil, false
	}
	for _, fields := range jsonLines(ft.t, "inbox list --json", r.stdout) {
		e := pendingEntry{fields: fields}
		raw, _ := json.Marshal(fields["request"])
		if err := json.Unmarshal(raw, &e.req); err != nil {
			ft.t.Fatalf("inbox list --json: the request of %v: %v", fields, err)
		}
		entries = append(entries, e)
	}
	return entries, true
}

// waitPending waits until approver i's inbox lists the request whose id
// is id, and returns its entry.
func (ft *faultTeam) waitPending(i int, id string) pendingEntry {
	ft.t.Helper()
	for end := time.Now().Add(45 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		entries, _ := ft.list(i)
		for _, e := range entries {
			if e.reqID() == id {
				return e
			}
		}
	}
	ft.t.Fatalf("request %s never listed in the inbox", id)
	return pendingEntry{}
}

// answer is approver i's inbox answer to e.
func (ft *faultTeam) answer(i int, e pendingEntry, choice string, more ...string) result {
	ft.t.Helper()
	return ft.run(i, append([]string{"inbox", "answer", e.answerID(), choice}, more...)...)
}

// auditLines is the team's audit stream as approver i reads it with askperm
// log --team --json.
func (ft *faultTeam) auditLines(i int) []map[string]any {
	ft.t.Helper()
	r := ft.run(i, "log", "--team", "--json")
	if r.code != 0 {
		ft.t.Fatalf("log --team: exit %d: %s", r.code, r.stderr)
	}
	return jsonLines(ft.t, "log --team --json", r.stdout)
}

// jsonLines is stdout, what the command what printed, as one JSON object
// a line.
func jsonLines(t *testing.T, what, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %q: %v", what, line, err)
		}
		out = append(out, m)
	}
	return out
}

// teamAsk is a host's askperm --frontend team under way.
type teamAsk struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// ask starts host's askperm --frontend team with req on stdin.
func (ft *faultTeam) ask(host string, req []byte, timeout string) *teamAsk {
	ft.t.Helper()
	a := &teamAsk{done: make(chan error, 1)}
	a.cmd = exec.Command(bin, "--config", ft.hosts[host], "--frontend", "team", "--timeout", timeout)
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr, a.cmd.Env = bytes.NewReader(req), &a.stdout, &a.stderr, memoryEnv()
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	a.cmd.WaitDelay = time.Second
	if err := a.cmd.Start(); err != nil {
		ft.t.Fatal(err)
	}
	ft.t.Cleanup(func() { _ = a.cmd.Process.Kill() })
	go func() { a.done <- a.cmd.Wait() }()
	return a
}

// decision waits for the host's decision, failing the test after limit.
func (a *teamAsk) decision(t *testing.T, limit time.Duration) map[string]any {
	t.Helper()
	select {
	case err := <-a.done:
		if code := exitCode(t, err); code != 0 {
			t.Fatalf("askperm --frontend team: exit %d: %s", code, a.stderr.String())
		}
	case <-time.After(limit):
		_ = a.cmd.Process.Kill()
		t.Fatalf("askperm --frontend team undecided after %v; stderr: %s", limit, a.stderr.String())
	}
	return checkDecision(t, a.stdout.String())
}

// teamRequest is testdata/requests/write-file.json with its id set to id.
func teamRequest(t *testing.T, id string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFile(t, "requests/write-file.json"), &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTeamClusterLeaderKilledDuringWait: on a three-node cluster with R3
// streams and buckets, the node leading the answers bucket dies while a
// host waits; the request is still pending in the inbox, an approver's
// answer written after the failover reaches the host and decides, and the
// same request asked again is not decided by that answer. With the node
// back, the same holds when the requests stream's leader dies.
func TestTeamClusterLeaderKilledDuringWait(t *testing.T) {
	skipSlow(t)
	tm := natstest.NewTeam(t, []string{"hosta"}, 1)
	c := natstest.StartCluster(t, tm)
	ft := newFaultTeam(t, tm, c.URL(), 3)
	ft.setUp(3)
	ft.stall = 15 * time.Second

	req := teamRequest(t, "fail-1")
	d, killed := ft.failover(c, req, "KV_ASKPERM_ANSWERS", "allow-once")
	if d["decision"] != "allow" || d["persist"] != "once" || d["frontend"] != "team" || d["cause"] != "user" || d["id"] != "fail-1" {
		t.Fatalf("the host decided %v", d)
	}
	// Nothing is allowed twice: the same request asked again is not decided
	// by the answer given to the first.
	again := ft.ask("hosta", req, "4s")
	if d := again.decision(t, 60*time.Second); d["decision"] != "deny" || d["cause"] == "user" {
		t.Fatalf("the same request asked again: %v; stderr %s", d, again.stderr.String())
	}

	c.Restart(killed)
	d, _ = ft.failover(c, teamRequest(t, "fail-2"), "ASKPERM_REQ", "deny-once", "--message", "after the failover")
	if d["decision"] != "deny" || d["frontend"] != "team" || d["cause"] != "user" || d["id"] != "fail-2" || d["message"] != "after the failover" {
		t.Fatalf("the host decided %v", d)
	}
	// Decided, they leave the inbox: at once when the host's end record is
	// written, else (the record is best effort, and may be lost to the
	// failover) at their deadline.
	for end, logged := time.Now().Add(2*time.Minute), false; ; time.Sleep(time.Second) {
		entries, ok := ft.list(0)
		if ok && len(entries) == 0 {
			break
		}
		var ids []string
		for _, e := range entries {
			ids = append(ids, e.reqID()+" "+e.answerID())
		}
		if time.Now().After(end) {
			t.Fatalf("still pending once decided, past their deadlines: %v", ids)
		}
		if ok && !logged {
			t.Logf("decided but still listed (their end record not written): %v", ids)
			logged = true
		}
	}
}

// failover has hosta ask req, kills the node leading stream once the
// request is pending, checks the request is still pending after the
// failover, answers it with choice and returns the host's decision and
// the node killed.
func (ft *faultTeam) failover(c *natstest.Cluster, req []byte, stream, choice string, more ...string) (map[string]any, string) {
	t := ft.t
	t.Helper()
	var id struct{ ID string }
	if err := json.Unmarshal(req, &id); err != nil {
		t.Fatal(err)
	}
	ask := ft.ask("hosta", req, "90s")
	before := ft.waitPending(0, id.ID)
	leader := streamLeader(t, ft.tm.Approvers[0], c.URL(), stream)
	c.Kill(leader)

	after := ft.waitPending(0, id.ID) // no request lost
	if after.answerID() != before.answerID() || after.host() != "hosta" {
		t.Fatalf("after the failover the inbox lists %v, before %v", after.fields, before.fields)
	}
	var r result
	for end := time.Now().Add(45 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if r = ft.answer(0, after, choice, more...); r.code == 0 {
			break
		}
	}
	if r.code != 0 {
		t.Fatalf("inbox answer after %s's leader %s died: exit %d: %s", stream, leader, r.code, r.stderr)
	}
	d := ask.decision(t, 60*time.Second)
	if msg := ask.stderr.String(); msg != "" {
		t.Logf("the host said, after %s's leader %s died: %s", stream, leader, msg)
	}
	return d, leader
}

// streamLeader names the node leading stream, as user u reads its info.
func streamLeader(t *testing.T, u natstest.User, url, stream string) string {
	t.Helper()
	nc := u.Connect(t, url, nil)
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	if ci := s.CachedInfo().Cluster; ci != nil && ci.Leader != "" {
		return ci.Leader
	}
	t.Fatalf("stream %s has no leader", stream)
	return ""
}

// TestTeamTwoHundredRequestsTwentyHosts: 20 hosts ask 200 requests, at
// most 40 at once, and 2 scripted approvers race to answer them through
// inbox list and inbox answer, denying the ids ending in 0, 3 or 7 and
// allowing the rest. Every host decides as the approvers chose, nothing
// an approver denied is allowed, and the audit stream holds exactly one
// line per request naming an approver whose answer was written.
func TestTeamTwoHundredRequestsTwentyHosts(t *testing.T) {
	skipSlow(t)
	const hosts, perHost, atOnce = 20, 10, 40
	var names []string
	for i := range hosts {
		names = append(names, fmt.Sprintf("h%02d", i))
	}
	tm := natstest.NewTeam(t, names, 2)
	ft := newFaultTeam(t, tm, natstest.StartServer(t, tm).URL, 1)
	ft.setUp(1)

	choice := func(id string) string {
		switch id[len(id)-1] {
		case '0', '3', '7':
			return "deny-once"
		}
		return "allow-once"
	}

	// The approvers: each lists the pending requests and answers them, the
	// second from the other end, so that they race.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var (
		mu       sync.Mutex
		answered = map[string][]string{} // request id -> approvers whose answer was written
		wg       sync.WaitGroup
	)
	for i := range ft.approvers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				entries, _ := ft.list(i)
				if i == 1 {
					for l, r := 0, len(entries)-1; l < r; l, r = l+1, r-1 {
						entries[l], entries[r] = entries[r], entries[l]
					}
				}
				for _, e := range entries {
					if ctx.Err() != nil {
						return
					}
					if r := ft.answer(i, e, choice(e.reqID()), "--message", "scripted "+e.reqID()); r.code == 0 {
						mu.Lock()
						answered[e.reqID()] = append(answered[e.reqID()], ft.approvers[i].user.Public)
						mu.Unlock()
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}

	type asked struct {
		id, host string
		d        map[string]any
	}
	results := make(chan asked, hosts*perHost)
	slots := make(chan struct{}, atOnce)
	for n := range perHost {
		for _, h := range names {
			slots <- struct{}{}
			id := fmt.Sprintf("%s-%d", h, n)
			a := ft.ask(h, teamRequest(t, id), "240s")
			go func() {
				defer func() { <-slots }()
				var d map[string]any
				select {
				case err := <-a.done:
					if err == nil {
						d, _ = parseDecision(a.stdout.String())
					}
					if d == nil {
						d = map[string]any{"error": fmt.Sprint(err), "stderr": a.stderr.String()}
					}
				case <-time.After(300 * time.Second):
					_ = a.cmd.Process.Kill()
					d = map[string]any{"error": "hung", "stderr": a.stderr.String()}
				}
				results <- asked{id, h, d}
			}()
		}
	}
	decided := map[string]map[string]any{}
	for range hosts * perHost {
		r := <-results
		decided[r.id] = r.d
	}
	stop()
	wg.Wait()

	approvers := map[string]bool{}
	for _, a := range tm.Approvers {
		approvers[a.Public] = true
	}
	for id, d := range decided {
		want := strings.TrimSuffix(choice(id), "-once")
		if d["decision"] != want || d["persist"] != "once" || d["frontend"] != "team" || d["cause"] != "user" || d["id"] != id {
			t.Errorf("request %s: want %s by the team, got %v", id, want, d)
		}
		if want == "deny" && d["message"] != "scripted "+id {
			t.Errorf("request %s: denied with message %v", id, d["message"])
		}
		if len(answered[id]) == 0 {
			t.Errorf("request %s decided with no answer written", id)
		}
	}

	lines := map[string][]map[string]any{}
	for _, l := range ft.auditLines(0) {
		id, _ := l["id"].(string)
		lines[id] = append(lines[id], l)
	}
	for id, d := range decided {
		ls := lines[id]
		if len(ls) != 1 {
			t.Errorf("request %s: %d audit lines, want 1: %v", id, len(ls), ls)
			continue
		}
		l := ls[0]
		approver, _ := l["approver"].(string)
		if !approvers[approver] || l["decision"] != d["decision"] || l["frontend"] != "team" || l["host"] != strings.Split(id, "-")[0] {
			t.Errorf("request %s: audit line %v for decision %v", id, l, d)
		}
		mu.Lock()
		wrote := strings.Contains(strings.Join(answered[id], ","), approver)
		mu.Unlock()
		if approver != "" && !wrote {
			t.Errorf("request %s: the audit names %s, whose answer was never written (%v)", id, approver, answered[id])
		}
	}
	wins := map[string]int{}
	for _, ls := range lines {
		for _, l := range ls {
			a, _ := l["approver"].(string)
			wins[fmt.Sprintf("%.8s %s", a, l["decision"])]++
		}
	}
	t.Logf("%d requests decided; audit lines by approver and decision: %v", len(decided), wins)
	if len(lines) != len(decided) {
		t.Errorf("the audit stream holds %d requests, %d were asked", len(lines), len(decided))
	}
}

// TestTeamServerDownAtStart: with the team's server down, the team
// frontend is unavailable within its reach timeout and the next frontend
// is asked (line, which finds no terminal): a deny, cause unavailable,
// never a wait.
func TestTeamServerDownAtStart(t *testing.T) {
	tm := natstest.NewTeam(t, []string{"ci-1"}, 1)
	s := natstest.StartServer(t, tm)
	ft := newFaultTeam(t, tm, s.URL, 1)
	s.Shutdown()
	r := runPipe(t, teamRequest(t, "down-1"), memoryEnv(), "--config", ft.hosts["ci-1"], "--frontend", "team,line", "--timeout", "25s")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	wantDeny(t, checkDecision(t, r.stdout), "unavailable", "none")
	for _, want := range []string{"team:", "line:"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
}

// TestTeamServerRestartedMidWait: the server goes down and comes back
// while a host waits; the host reconnects and watches again, and the
// approver's answer written after the restart decides.
func TestTeamServerRestartedMidWait(t *testing.T) {
	tm := natstest.NewTeam(t, []string{"ci-1"}, 1)
	s := natstest.StartServer(t, tm)
	ft := newFaultTeam(t, tm, s.URL, 1)
	ft.setUp(1)
	ask := ft.ask("ci-1", teamRequest(t, "restart-1"), "60s")
	ft.waitPending(0, "restart-1")
	s.Shutdown()
	s.Restart()
	e := ft.waitPending(0, "restart-1")
	if r := ft.answer(0, e, "deny-once", "--message", "after the restart"); r.code != 0 {
		t.Fatalf("inbox answer: exit %d: %s", r.code, r.stderr)
	}
	d := ask.decision(t, 45*time.Second)
	if d["decision"] != "deny" || d["cause"] != "user" || d["frontend"] != "team" || d["message"] != "after the restart" {
		t.Fatalf("the host decided %v; stderr %s", d, ask.stderr.String())
	}
}

// TestTeamRequestExpires: a request nobody answers is denied at its
// deadline (cause timeout), leaves the inbox, and can no longer be
// answered.
func TestTeamRequestExpires(t *testing.T) {
	tm := natstest.NewTeam(t, []string{"ci-1"}, 1)
	ft := newFaultTeam(t, tm, natstest.StartServer(t, tm).URL, 1)
	ft.setUp(1)
	ask := ft.ask("ci-1", teamRequest(t, "expire-1"), "4s")
	e := ft.waitPending(0, "expire-1")
	d := ask.decision(t, 30*time.Second)
	if d["decision"] != "deny" || d["cause"] != "timeout" {
		t.Fatalf("the host decided %v; stderr %s", d, ask.stderr.String())
	}
	if entries, ok := ft.list(0); !ok || len(entries) != 0 {
		t.Fatalf("inbox list after the deadline (ok %v): %v", ok, entries)
	}
	if r := ft.answer(0, e, "allow-once"); r.code == 0 {
		t.Fatalf("an expired request was answered: %s", r.stderr)
	}
}

package teamcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/inbox"
	"github.com/askperm/askperm/internal/inbox/inboxtest"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/natstest"
)

// teamApprover is an approver's askperm: its config file (naming the
// server) and state directory.
type teamApprover struct {
	t           *testing.T
	config, dir string
	key         string // public
}

// startTeam starts a server running the documented configuration
// (natstest) for host alpha and n approvers, sets the team up as its
// set-up user (askperm-team setup), and returns the approvers' askperm
// and host alpha, trusting them all.
func startTeam(t *testing.T, n int) ([]*teamApprover, *inboxtest.Host) {
	t.Helper()
	tm := natstest.NewTeam(t, []string{"alpha"}, n)
	url := natstest.StartServer(t, tm).URL
	conf := writeFile(t, "setup.toml", fmt.Sprintf("[team]\nurl = %q\nhost = \"setup\"\n", url))
	if code, _, stderr := invoke(t, "", nil, "setup", "--config", conf, "--creds", tm.Setup.SeedFile); code != cli.ExitOK {
		t.Fatalf("setup: exit %d: %s", code, stderr)
	}
	var as []*teamApprover
	var keys []string
	for _, u := range tm.Approvers {
		a := &teamApprover{t: t, dir: t.TempDir(), key: u.Public}
		a.config = writeFile(t, "config.toml", fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\ncreds = %q\nkey = %q\n", url, u.SeedFile, u.SeedFile))
		as, keys = append(as, a), append(keys, u.Public)
	}
	if got := listed(t, as[0]); len(got) != 0 {
		t.Fatalf("a new team lists %v", got)
	}
	return as, inboxtest.NewHost(t, url, tm.Hosts[0], keys...)
}

// keyedApprover is an approver's askperm with a key of its own, made by
// inbox key in its state directory, for the server at url.
func keyedApprover(t *testing.T, url string) *teamApprover {
	t.Helper()
	a := &teamApprover{t: t, dir: t.TempDir()}
	a.config = writeFile(t, "config.toml", fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\n", url))
	code, out, stderr := a.run("inbox", "key")
	if code != cli.ExitOK || !strings.HasPrefix(out, "U") {
		t.Fatalf("inbox key: exit %d, %q, %s", code, out, stderr)
	}
	a.key = strings.TrimSpace(out)
	return a
}

func (a *teamApprover) run(args ...string) (int, string, string) {
	a.t.Helper()
	return invoke(a.t, "", nil, append(args, "--config", a.config, "--state-dir", a.dir)...)
}

// request is testdata/requests/name.
func request(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// listed is the requests inbox list --json prints, by id.
func listed(t *testing.T, a *teamApprover) map[string]inboxEntry {
	t.Helper()
	code, out, stderr := a.run("inbox", "list", "--json")
	if code != cli.ExitOK {
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
		got[e.ID] = e
	}
	return got
}

func TestInboxAnswerIsSignedAndBound(t *testing.T) {
	as, h := startTeam(t, 1)
	a := as[0]
	deadline := time.Now().Add(time.Hour)
	allow := h.Publish(request(t, "write-file.json"), "allow", deadline)
	deny := h.Publish(request(t, "write-file.json"), "deny", deadline)
	always := h.Publish(request(t, "write-file.json"), "always", deadline)
	denyAlways := h.Publish(request(t, "write-file.json"), "deny-always", deadline)

	got := listed(t, a)
	e, ok := got[id(h, allow)]
	if len(got) != 4 || !ok {
		t.Fatalf("listed %v, want the 4 requests", got)
	}
	if e.Question != "write_file (fs-default) wants to write /home/a/p/report.md" || e.SessionID != "s-1" ||
		!e.Deadline.Equal(deadline.Truncate(time.Millisecond)) || !strings.Contains(string(e.Request), `"id":"allow"`) {
		t.Errorf("entry %+v", e)
	}

	if code, _, stderr := a.run("inbox", "answer", id(h, allow), "allow-once"); code != cli.ExitOK {
		t.Fatalf("answer allow-once: exit %d: %s", code, stderr)
	}
	if d := h.Answer(allow, a.key); d.Decision != decision.Allow || d.Frontend != decision.FrontendTeam || d.Persist != decision.PersistOnce {
		t.Errorf("allow-once: %+v", d)
	}

	if code, _, stderr := a.run("inbox", "answer", id(h, deny), "deny-once", "--message", "not now"); code != cli.ExitOK {
		t.Fatalf("answer deny-once: exit %d: %s", code, stderr)
	}
	if d := h.Answer(deny, a.key); d.Decision != decision.Deny || d.Message != "not now" {
		t.Errorf("deny with a message: %+v", d)
	}

	code, _, stderr := a.run("inbox", "answer", id(h, always), "allow-always", "--grant", "fs.write",
		"--scope", "path=/home/a/p/", "--workdir-scope", "all", "--lifetime", "900")
	if code != cli.ExitOK {
		t.Fatalf("answer allow-always: exit %d: %s", code, stderr)
	}
	d := h.Answer(always, a.key)
	if d.Decision != decision.Allow || d.Persist != decision.PersistAlways || d.Rule == nil ||
		d.Rule.Scopes["path"] != "/home/a/p/" || d.Rule.WorkdirScope != "all" || d.Rule.Lifetime != "900" ||
		strings.Join(d.Grants, ",") != "fs.write" {
		t.Errorf("allow-always with its rule stage: %+v, rule %+v", d, d.Rule)
	}
	saved := rules(t, h, a.key)
	if len(saved) != 1 || saved[0].Rule.Decision != decision.Allow || saved[0].Rule.WorkdirScope != "all" || saved[0].Rule.Expires == 0 {
		t.Fatalf("the team rules of the approver: %+v", saved)
	}

	code, _, stderr = a.run("inbox", "answer", id(h, denyAlways), "deny-always", "--message", "never", "--scope", "path=*")
	if code != cli.ExitOK {
		t.Fatalf("answer deny-always: exit %d: %s", code, stderr)
	}
	if d := h.Answer(denyAlways, a.key); d.Decision != decision.Deny || d.Persist != decision.PersistAlways || d.Message != "never" ||
		d.Rule == nil || d.Rule.Scopes["path"] != "*" {
		t.Errorf("deny-always: %+v", d)
	}
	if saved := rules(t, h, a.key); len(saved) != 2 {
		t.Errorf("%d team rules after a deny-always, want 2", len(saved))
	}
}

// rules are approver's team rules, each verified as host h verifies it.
func rules(t *testing.T, h *inboxtest.Host, approver string) []team.Unverified {
	t.Helper()
	kv := h.KV(h.Config.Names().RulesBucket())
	keys, err := kv.ListKeysFiltered(context.Background(), approver+".>")
	if err != nil {
		t.Fatal(err)
	}
	var out []team.Unverified
	for key := range keys.Keys() {
		e, err := kv.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		u, err := team.ReadRule(key, e.Value())
		if err == nil {
			err = u.Verify(h.Config, time.Now())
		}
		if err != nil {
			t.Fatalf("team rule %s: %v", key, err)
		}
		out = append(out, u)
	}
	return out
}

func TestInboxAnswerErrors(t *testing.T) {
	as, h := startTeam(t, 1)
	a := as[0]
	req := h.Publish(request(t, "write-file.json"), "r", time.Now().Add(time.Hour))
	expired := h.Publish(request(t, "write-file.json"), "expired", time.Now().Add(-time.Second))
	done := h.Publish(request(t, "write-file.json"), "done", time.Now().Add(time.Hour))
	h.Done(done, team.Done{Outcome: "deny", Frontend: decision.FrontendTeam, Cause: decision.CauseTimeout})
	if got := listed(t, a); len(got) != 1 {
		t.Fatalf("listed %v, want only the request neither expired nor done", got)
	}
	code, out, _ := a.run("inbox", "list")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != cli.ExitOK || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "HOST") || !strings.HasPrefix(lines[1], "alpha") || !strings.Contains(lines[1], id(h, req)) ||
		!strings.Contains(lines[1], " s-1 ") || !strings.HasSuffix(lines[1], " write_file (fs-default) wants to write /home/a/p/report.md") {
		t.Errorf("inbox list: exit %d:\n%s", code, out)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown", []string{"alpha." + strings.Repeat("0", 32), "allow-once"}, cli.ExitNoMatch, "no such request is pending"},
		{"another host's ask id", []string{team.AskID("beta", h.Ask(req)), "allow-once"}, cli.ExitNoMatch, "no such request is pending"},
		{"expired", []string{id(h, expired), "deny-once"}, cli.ExitNoMatch, "expired"},
		{"done", []string{id(h, done), "deny-once"}, cli.ExitNoMatch, "ended"},
		{"not an id", []string{"abc", "allow-once"}, cli.ExitUsage, "not <host>.<ask id>"},
		{"a digest", []string{req.SHA256, "allow-once"}, cli.ExitUsage, "not <host>.<ask id>"},
		{"session", []string{id(h, req), "allow-session"}, cli.ExitUsage, "a session approval lives in its host's memory"},
		{"unknown choice", []string{id(h, req), "allow-forever"}, cli.ExitUsage, "choice: unknown"},
		{"rule field on a one-time choice", []string{id(h, req), "allow-once", "--lifetime", "900"}, cli.ExitUsage, "belong to always-choices"},
		{"scope not offered", []string{id(h, req), "allow-always", "--scope", "path=/etc/"}, cli.ExitUsage, "not a scope offered"},
	} {
		code, _, stderr := a.run(append([]string{"inbox", "answer"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want %d, %q", tc.name, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := h.KV(h.Config.Names().AnswersBucket()).Get(context.Background(), team.AnswerKey("alpha", h.Ask(req), a.key)); err == nil {
		t.Error("a rejected answer was written")
	}
}

// TestInboxAnswersRace: one approver answering one request twice at once
// writes one answer; two approvers each write theirs.
func TestInboxAnswersRace(t *testing.T) {
	as, h := startTeam(t, 2)
	a, b := as[0], as[1]
	req := h.Publish(request(t, "write-file.json"), "race", time.Now().Add(time.Hour))

	codes := make([]int, 3)
	var wg sync.WaitGroup
	for i, run := range []func() (int, string, string){
		func() (int, string, string) { return a.run("inbox", "answer", id(h, req), "allow-once") },
		func() (int, string, string) { return a.run("inbox", "answer", id(h, req), "deny-once") },
		func() (int, string, string) { return b.run("inbox", "answer", id(h, req), "deny-once") },
	} {
		wg.Go(func() { codes[i], _, _ = run() })
	}
	wg.Wait()
	if codes[0]+codes[1] != cli.ExitNoMatch || codes[0]*codes[1] != 0 || codes[2] != cli.ExitOK {
		t.Fatalf("exits %v: want one of approver a's answers written (0) and the other refused (69), approver b's written", codes)
	}
	first := h.Answer(req, a.key)
	if want := map[bool]string{true: decision.Allow, false: decision.Deny}[codes[0] == cli.ExitOK]; first.Decision != want {
		t.Errorf("approver a's answer is %s, not the one that was written first", first.Decision)
	}
	if h.Answer(req, b.key).Decision != decision.Deny {
		t.Error("approver b's answer")
	}
	code, _, stderr := a.run("inbox", "answer", id(h, req), "deny-once")
	if code != cli.ExitNoMatch || !strings.Contains(stderr, "answered this request already") {
		t.Errorf("a third answer: exit %d, %s", code, stderr)
	}
}

// id is the id inbox list gives req, published by h.
func id(h *inboxtest.Host, req *decision.Request) string {
	return team.AskID(h.Config.Host, h.Ask(req))
}

// The inbox never makes the team's streams (an approver may not): on a
// team not set up it says so and how to set it up; askperm-team setup
// with an approver's credentials is refused, with the set-up user's it
// sets the team up.
func TestInboxOnATeamNotSetUp(t *testing.T) {
	tm := natstest.NewTeam(t, []string{"alpha"}, 1)
	url := natstest.StartServer(t, tm).URL
	u := tm.Approvers[0]
	a := &teamApprover{t: t, dir: t.TempDir(), key: u.Public}
	a.config = writeFile(t, "config.toml", fmt.Sprintf("[team]\nurl = %q\nhost = \"approver\"\ncreds = %q\nkey = %q\n", url, u.SeedFile, u.SeedFile))
	code, _, stderr := a.run("inbox", "list")
	if code != cli.ExitInternal || !strings.Contains(stderr, "not set up") {
		t.Errorf("inbox list on a team not set up: exit %d, %s", code, stderr)
	}
	if code, _, stderr := invoke(t, "", nil, "setup", "--config", a.config); code != cli.ExitInternal {
		t.Errorf("setup as an approver: exit %d, %s", code, stderr)
	}
	if code, _, stderr := invoke(t, "", nil, "setup", "--config", a.config, "--creds", tm.Setup.SeedFile); code != cli.ExitOK {
		t.Errorf("setup as the set-up user: exit %d, %s", code, stderr)
	}
	if got := listed(t, a); len(got) != 0 {
		t.Errorf("a team just set up lists %v", got)
	}
}

func TestInboxKey(t *testing.T) {
	a := keyedApprover(t, "nats://127.0.0.1:1")
	code, _, stderr := a.run("inbox", "key")
	if code != cli.ExitUsage || !strings.Contains(stderr, "a key exists already") {
		t.Errorf("a second inbox key: exit %d, %s", code, stderr)
	}
	code, out, _ := a.run("inbox", "key", "--show")
	if code != cli.ExitOK || strings.TrimSpace(out) != a.key {
		t.Errorf("inbox key --show: exit %d, %q, want %s", code, out, a.key)
	}
	fi, err := os.Stat(filepath.Join(a.dir, team.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v, %v", fi, err)
	}
}

func TestInboxCannotStart(t *testing.T) {
	noTeam := &teamApprover{t: t, dir: t.TempDir(), config: writeFile(t, "config.toml", "timeout = \"1m\"\n")}
	code, _, stderr := noTeam.run("inbox", "list")
	if code != cli.ExitUsage || !strings.Contains(stderr, "no [team] in config.toml") {
		t.Errorf("without [team]: exit %d, %s", code, stderr)
	}

	noKey := &teamApprover{t: t, dir: t.TempDir(), config: writeFile(t, "config.toml", "[team]\nurl = \"nats://127.0.0.1:1\"\nhost = \"approver\"\n")}
	code, _, stderr = noKey.run("inbox", "answer", "alpha."+strings.Repeat("0", 32), "deny-once")
	if code != cli.ExitUsage || !strings.Contains(stderr, "askperm inbox key creates one") {
		t.Errorf("without a key: exit %d, %s", code, stderr)
	}

	down := keyedApprover(t, "nats://127.0.0.1:1") // nobody listens on port 1
	code, out, stderr := down.run("inbox", "list", "--json")
	if code != cli.ExitInternal || out != "" || !strings.Contains(stderr, "the team's server") {
		t.Errorf("the server down: exit %d, %q, %s", code, out, stderr)
	}
}

// A host flooding the team holds at most its share of an approver's list,
// and the approver is told so once, not once per request.
func TestInboxListOneHostPastItsShare(t *testing.T) {
	as, h := startTeam(t, 1)
	deadline := time.Now().Add(time.Hour)
	for i := range inbox.MaxPerHost + 3 {
		h.Publish(request(t, "write-file.json"), fmt.Sprint(i), deadline)
	}
	code, out, stderr := as[0].run("inbox", "list", "--json")
	if code != cli.ExitOK {
		t.Fatalf("inbox list: exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "\n"); n != inbox.MaxPerHost {
		t.Errorf("%d requests listed, want the host's share %d", n, inbox.MaxPerHost)
	}
	if n := strings.Count(stderr, "too many requests are pending"); n != 1 {
		t.Errorf("said %d times that the list is full:\n%.500s", n, stderr)
	}
}

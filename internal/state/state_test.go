package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/askperm/askperm/decision"
)

func open(t testing.TB, dir string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func request(t *testing.T, raw string) *decision.Request {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "askperm")
	open(t, dir).Close()
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, DBName): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %#o", path, fi.Mode(), err, want)
		}
	}
}

// A store others could write is refused, never used.
func TestOpenRefusesUnsafeStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(dir string) error
	}{
		{"world-writable directory", func(dir string) error { return os.Chmod(dir, 0o777) }},
		{"group-writable database", func(dir string) error { return os.Chmod(filepath.Join(dir, DBName), 0o660) }},
		{"database is a directory", func(dir string) error {
			os.Remove(filepath.Join(dir, DBName))
			return os.Mkdir(filepath.Join(dir, DBName), 0o700)
		}},
	} {
		dir := t.TempDir()
		open(t, dir).Close()
		if err := tc.prep(dir); err != nil {
			t.Fatal(err)
		}
		if s, err := Open(context.Background(), dir); err == nil {
			s.Close()
			t.Errorf("%s: opened", tc.name)
		}
	}
}

// A corrupt database is moved aside, kept, and the next open starts afresh.
func TestOpenMovesCorruptAside(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, DBName)
	if err := os.WriteFile(db, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), dir)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "moved aside") {
		t.Fatalf("got %v", err)
	}
	aside, _ := filepath.Glob(db + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("moved aside: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); !strings.HasPrefix(string(b), "not a database") {
		t.Error("the corrupt file was not kept as it was")
	}
	open(t, dir)
}

// A store locked by another process (here another handle) past the
// deadline is an error at the deadline, not a hang.
func TestOpenLockedGivesUpAtTheDeadline(t *testing.T) {
	dir := t.TempDir()
	held, err := bolt.Open(filepath.Join(dir, DBName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if s, err := Open(ctx, dir); err == nil || !strings.Contains(err.Error(), "locked") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("waited %v", took)
	}
}

const pathRequest = `{"server":"fs","tool":"write_file","source":"engine:1","action":"write",
	"dimensions":[{"name":"path","value":"/home/a/x","scopes":[
		{"label":"file","match":"/home/a/x"},{"label":"dir","match":"/home/a","kind":"prefix"},{"label":"any","match":"*","kind":"any"}]}],
	"workdir":{"value":"/home/a"},
	"grants":[{"name":"fs.write"},{"name":"fs.create"}]}`

// alwaysDecision is an allow-always of pathRequest for path scope match.
func alwaysDecision(t *testing.T, verdict, match, workdirScope string, grants ...string) (*decision.Request, decision.Decision) {
	req := request(t, pathRequest)
	d := decision.Denied(req, decision.CauseUser, decision.FrontendTUI)
	d.Decision, d.Persist = verdict, decision.PersistAlways
	if verdict == decision.Allow {
		d.Grants = grants
	}
	d.Rule = &decision.Rule{Scopes: map[string]string{"path": match}, WorkdirScope: workdirScope, Lifetime: decision.LifetimeIndefinite}
	return req, d
}

func TestRuleCovers(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	with := func(change func(s string) string) *decision.Request { return request(t, change(pathRequest)) }
	value := func(v string) *decision.Request {
		return with(func(s string) string { return strings.Replace(s, `"value":"/home/a/x"`, `"value":"`+v+`"`, 1) })
	}
	req, d := alwaysDecision(t, decision.Allow, "/home/a", decision.WorkdirSelected, "fs.write", "fs.create")
	r, ok := RuleOf(req, d, now)
	if !ok || r.Dimensions[0].Kind != decision.KindPrefix || r.Workdir != "/home/a" {
		t.Fatalf("RuleOf: %+v, %v", r, ok)
	}
	for _, tc := range []struct {
		name string
		req  *decision.Request
		want bool
	}{
		{"the same call", req, true},
		{"under the prefix", value("/home/a/b/c"), true},
		{"the prefix itself", value("/home/a"), true},
		{"a longer name", value("/home/abc"), false},
		{"climbing out", value("/home/a/../b"), false},
		{"another tool", with(func(s string) string { return strings.Replace(s, "write_file", "edit_file", 1) }), false},
		{"another source", with(func(s string) string { return strings.Replace(s, "engine:1", "engine:2", 1) }), false},
		{"another server", with(func(s string) string { return strings.Replace(s, `"fs"`, `"fs2"`, 1) }), false},
		{"another action", with(func(s string) string { return strings.Replace(s, `"write"`, `"create"`, 1) }), false},
		{"another workdir", with(func(s string) string { return strings.Replace(s, `{"value":"/home/a"}`, `{"value":"/home/b"}`, 1) }), false},
		{"no workdir", with(func(s string) string { return strings.Replace(s, `"workdir":{"value":"/home/a"},`, "", 1) }), false},
		{"fewer grants", with(func(s string) string { return strings.Replace(s, `,{"name":"fs.create"}`, "", 1) }), true},
		{"a grant more", with(func(s string) string {
			return strings.Replace(s, `{"name":"fs.create"}`, `{"name":"fs.create"},{"name":"net"}`, 1)
		}), false},
		{"another dimension", with(func(s string) string { return strings.Replace(s, `"name":"path"`, `"name":"file"`, 1) }), false},
	} {
		if got := covered(r, tc.req, now); got != tc.want {
			t.Errorf("%s: covers %v, want %v", tc.name, got, tc.want)
		}
	}
	// A deny covers whatever grants are asked; all workdirs means any.
	req, d = alwaysDecision(t, decision.Deny, "*", decision.WorkdirAll)
	deny, _ := RuleOf(req, d, now)
	if !covered(deny, with(func(s string) string {
		return strings.NewReplacer(`{"name":"fs.create"}`, `{"name":"fs.create"},{"name":"net"}`, `{"value":"/home/a"}`, `{"value":"/srv"}`).Replace(s)
	}), now) {
		t.Error("deny always with any workdir did not cover")
	}
	// Expiry.
	r.Expires = now.Unix() + 900
	if !covered(r, req, now.Add(899*time.Second)) || covered(r, req, now.Add(900*time.Second)) {
		t.Error("expiry")
	}
}

func TestRememberAndForget(t *testing.T) {
	s := open(t, t.TempDir())
	now := time.Unix(1_700_000_000, 0)
	req, d := alwaysDecision(t, decision.Allow, "/home/a/x", decision.WorkdirSelected, "fs.write")
	r, _ := RuleOf(req, d, now)
	r1, err := s.Remember(r)
	if err != nil || r1.ID != 1 {
		t.Fatalf("%+v, %v", r1, err)
	}
	r.Expires = now.Unix() + 10
	r2, _ := s.Remember(r)
	if got, err := s.Covering(request(t, strings.Replace(pathRequest, `,{"name":"fs.create"}`, "", 1)), now); err != nil || len(got) != 2 {
		t.Errorf("covering: %+v, %v", got, err)
	}
	// Expired rules are pruned.
	if got, _ := s.Rules(now.Add(time.Minute)); len(got) != 1 || got[0].ID != r1.ID {
		t.Errorf("after expiry: %+v", got)
	}
	if ok, err := s.Forget(r2.ID); ok || err != nil {
		t.Errorf("forgetting a pruned rule: %v, %v", ok, err)
	}
	if ok, err := s.Forget(r1.ID); !ok || err != nil {
		t.Errorf("forget: %v, %v", ok, err)
	}
	s.Remember(r)
	s.Remember(r)
	if n, err := s.ForgetAll(); n != 2 || err != nil {
		t.Errorf("forget all: %d, %v", n, err)
	}
	// IDs are never given again.
	if r3, _ := s.Remember(r); r3.ID != 5 {
		t.Errorf("ID after forgetting: %d", r3.ID)
	}
}

func TestSessionApprovals(t *testing.T) {
	s := open(t, t.TempDir())
	now := time.Unix(1_700_000_000, 0)
	const idle = 24 * time.Hour
	base := `{"action":"exec","tool":"shell","source":"e:1","session_id":"s1","run_id":"r1","policy_revision":"p1","arguments":{"n":5,"cmd":"ls"}}`
	if err := s.ApproveSession(request(t, base), now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  string
		want bool
	}{
		{"the same call", base, true},
		{"another run of the session", strings.Replace(base, `"r1"`, `"r2"`, 1), true},
		{"5.0 is 5", strings.Replace(base, `"n":5`, `"n":5.0`, 1), true},
		{`"5" is 5`, strings.Replace(base, `"n":5`, `"n":"5"`, 1), true},
		{`"5.0" is not`, strings.Replace(base, `"n":5`, `"n":"5.0"`, 1), false},
		{"another argument", strings.Replace(base, `"ls"`, `"rm"`, 1), false},
		{"another source", strings.Replace(base, `"e:1"`, `"e:2"`, 1), false},
		{"another session", strings.Replace(base, `"s1"`, `"s2"`, 1), false},
		{"another policy revision", strings.Replace(base, `"p1"`, `"p2"`, 1), false},
		{"another tool", strings.Replace(base, `"shell"`, `"bash"`, 1), false},
	} {
		if got, err := s.SessionApproved(request(t, tc.raw), now, idle); got != tc.want || err != nil {
			t.Errorf("%s: %v, %v", tc.name, got, err)
		}
	}
	// Used, it lives on; idle for longer than idle, it is gone.
	if ok, _ := s.SessionApproved(request(t, base), now.Add(20*time.Hour), idle); !ok {
		t.Error("used within idle: not approved")
	}
	if ok, _ := s.SessionApproved(request(t, base), now.Add(40*time.Hour), idle); !ok {
		t.Error("the use at 20 h did not count")
	}
	if ok, _ := s.SessionApproved(request(t, base), now.Add(70*time.Hour), idle); ok {
		t.Error("idle 30 h: still approved")
	}
	if list, _ := s.Sessions(now, idle); len(list) != 0 {
		t.Errorf("left: %+v", list)
	}
	s.ApproveSession(request(t, base), now)
	s.ApproveSession(request(t, strings.Replace(base, `"s1"`, `"s2"`, 1)), now)
	s.ApproveSession(request(t, strings.Replace(base, `"s1"`, `"s10"`, 1)), now)
	if n, err := s.ForgetSessions("s1"); n != 1 || err != nil {
		t.Errorf("forget s1: %d, %v", n, err)
	}
	if list, _ := s.Sessions(now, idle); len(list) != 2 {
		t.Errorf("after forgetting s1: %+v", list)
	}
	if n, _ := s.ForgetSessions(""); n != 2 {
		t.Errorf("forget all: %d", n)
	}
	if err := s.ApproveSession(request(t, `{"action":"x"}`), now); err == nil {
		t.Error("approved a request without session")
	}
}

// A session approval is stricter than the protocol's binding: a request
// that shows the person something else is asked again.
func TestSessionApprovalCoversWhatWasShown(t *testing.T) {
	s := open(t, t.TempDir())
	now := time.Unix(1_700_000_000, 0)
	base := `{"action":"write","tool":"w","session_id":"s1","dimensions":[{"name":"path","value":"/p/a"}],"workdir":{"value":"/p"}}`
	if err := s.ApproveSession(request(t, base), now); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		strings.Replace(base, "/p/a", "/q/a", 1),
		strings.Replace(base, `"write"`, `"delete"`, 1),
		strings.Replace(base, `{"value":"/p"}`, `{"value":"/q"}`, 1),
	} {
		if ok, _ := s.SessionApproved(request(t, raw), now, time.Hour); ok {
			t.Errorf("%s: approved", raw)
		}
	}
	if ok, _ := s.SessionApproved(request(t, base), now, time.Hour); !ok {
		t.Error("the same call: not approved")
	}
}

// The breaker trips exactly at its thresholds, and then counts afresh.
func TestBreaker(t *testing.T) {
	s := open(t, t.TempDir())
	count := func(session string, denied bool, b Breaker) bool {
		t.Helper()
		tripped, err := s.CountDecision(session, denied, b)
		if err != nil {
			t.Fatal(err)
		}
		return tripped
	}
	// Three in a row; an allow between resets the run.
	perSession := Breaker{Session: DefaultBreaker.Session}
	for i, want := range []bool{false, false, true, false, false, true} {
		if got := count("a", true, perSession); got != want {
			t.Errorf("consecutive denial %d: tripped %v", i+1, got)
		}
	}
	for i := range 10 {
		count("b", true, perSession)
		count("b", true, perSession)
		if got := count("b", false, perSession); got {
			t.Errorf("an allow tripped it (round %d)", i)
		}
	}
	// Ten among the last fifty: two denials then an allow; the tenth denial
	// is the 14th decision.
	within := Breaker{Session: Thresholds{Consecutive: 0, Window: 50, Within: 10}}
	trips := 0
	for i := range 15 {
		if count("c", i%3 != 2, within) {
			trips++
			if i != 13 {
				t.Errorf("tripped at decision %d, want the 14th", i+1)
			}
		}
	}
	if trips != 1 {
		t.Errorf("tripped %d times", trips)
	}
	// Outside the window, old denials do not count.
	small := Breaker{Session: Thresholds{Window: 4, Within: 3}}
	for i, d := range []bool{true, true, false, false, false, true, true, true} {
		if got := count("d", d, small); got != (i == 7) {
			t.Errorf("window decision %d: tripped %v", i+1, got)
		}
	}
	if count("", true, Breaker{Session: Thresholds{Consecutive: 1}}) {
		t.Error("a request without a session tripped the session's breaker")
	}
	if count("e", true, Breaker{}) {
		t.Error("a breaker with every threshold off tripped")
	}
}

// The prompt rate limit is a sliding minute, per session.
func TestTakePrompt(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	take := func(key string, at time.Time, limit int) bool {
		t.Helper()
		ok, err := TakePrompt(context.Background(), dir, key, at, Rate{Session: limit})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range 60 {
		if !take("s", now.Add(time.Duration(i)*time.Second/2), 60) {
			t.Fatalf("prompt %d refused", i+1)
		}
	}
	if take("s", now.Add(30*time.Second), 60) {
		t.Error("the 61st prompt within a minute was taken")
	}
	if !take("other", now.Add(30*time.Second), 60) || !take("", now.Add(30*time.Second), 60) || !take("s\n1 \"s\"", now.Add(30*time.Second), 60) {
		t.Error("another session's prompt was refused")
	}
	// A minute after the first prompt, its place is free again.
	if !take("s", now.Add(60*time.Second+time.Millisecond), 60) {
		t.Error("the window did not slide")
	}
	if !take("s", now, 0) {
		t.Error("no limit refused")
	}
	// Only the last minute's prompts stay in the file.
	take("x", now.Add(10*time.Minute), 60)
	if b, err := os.ReadFile(filepath.Join(dir, PromptsFile)); err != nil || bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("the file holds %q, %v", b, err)
	}
}

// Helpers taking prompts at once take exactly the limit between them.
func TestTakePromptConcurrent(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	const helpers, limit = 40, 25
	taken := make(chan bool, helpers)
	for range helpers {
		go func() {
			ok, err := TakePrompt(context.Background(), dir, "s", now, Rate{Session: limit})
			taken <- ok && err == nil
		}()
	}
	n := 0
	for range helpers {
		if <-taken {
			n++
		}
	}
	if n != limit {
		t.Errorf("%d prompts taken, want %d", n, limit)
	}
}

// A file that does not read as prompts is started again and reported; a
// link or a file others may write is refused.
func TestTakePromptRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, PromptsFile)
	if err := os.WriteFile(path, []byte("12 \"s\"\nnot a prompt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := TakePrompt(context.Background(), dir, "s", time.Unix(0, 100), Rate{Session: 1}); !ok || !errors.Is(err, ErrCorrupt) {
		t.Errorf("corrupt: %v, %v", ok, err)
	}
	if ok, err := TakePrompt(context.Background(), dir, "s", time.Unix(0, 200), Rate{Session: 1}); ok || err != nil {
		t.Errorf("after starting again, the second prompt: %v, %v", ok, err)
	}
	if err := os.Chmod(path, 0o622); err != nil {
		t.Fatal(err)
	}
	if _, err := TakePrompt(context.Background(), dir, "s", time.Unix(0, 300), Rate{Session: 1}); err == nil || !strings.Contains(err.Error(), "unsafe permissions") {
		t.Errorf("world-writable: %v", err)
	}
	os.Remove(path)
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), path); err != nil {
		t.Fatal(err)
	}
	if _, err := TakePrompt(context.Background(), dir, "s", time.Unix(0, 300), Rate{Session: 1}); err == nil {
		t.Error("a link was followed")
	}
}

// Appends from many writers at once each land whole, one line each; past
// the size limit the log is rotated, never lost.
func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 4000)
	const writers, each = 8, 40
	done := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				e := AuditEntry{Time: time.Unix(int64(w), 0), Action: big, Tool: "t", SessionID: fmt.Sprint(w), LatencyMS: int64(i)}
				if err := AppendAudit(context.Background(), dir, e); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	all, err := ReadAudit(dir, func(AuditEntry) bool { return true })
	if err != nil || len(all) != writers*each {
		t.Fatalf("%d entries, %v; want %d", len(all), err, writers*each)
	}
	for _, e := range all {
		if e.Action != big {
			t.Fatal("an entry was torn")
		}
	}
	one, _ := ReadAudit(dir, func(e AuditEntry) bool { return e.SessionID == "3" })
	if len(one) != each {
		t.Errorf("filter: %d entries", len(one))
	}
	if fi, err := os.Stat(filepath.Join(dir, AuditName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file: %v, %v", fi, err)
	}

	// Rotation.
	rot := t.TempDir()
	huge := strings.Repeat("y", 1<<20)
	for range MaxAuditSize>>20 + 2 {
		if err := AppendAudit(context.Background(), rot, AuditEntry{Action: huge}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(rot, AuditName+".1")); err != nil {
		t.Errorf("not rotated: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(rot, AuditName)); fi.Size() > MaxAuditSize {
		t.Errorf("the log grew to %d bytes", fi.Size())
	}
}

// Turns are taken one at a time, in some order, and a waiter whose
// context ends gives up.
func TestWaitTurn(t *testing.T) {
	dir := t.TempDir()
	first, err := WaitTurn(context.Background(), dir, func() { t.Error("the first waited") })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	waited := false
	if _, err := WaitTurn(ctx, dir, func() { waited = true }); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrLocked) || !waited {
		t.Errorf("while held: %v, waited %v", err, waited)
	}
	got := make(chan func(), 1)
	go func() {
		r, err := WaitTurn(context.Background(), dir, func() {})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a second turn while the first is held")
	case <-time.After(200 * time.Millisecond):
	}
	first()
	select {
	case r := <-got:
		r()
	case <-time.After(2 * time.Second):
		t.Fatal("the turn was not passed on")
	}
}

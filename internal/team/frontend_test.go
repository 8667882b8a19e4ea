package team

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team/teamtest"
	"github.com/askperm/askperm/prompt"
)

// Ignored answers are said and kept one by one up to maxIgnored, then
// counted.
func TestIgnoreBounded(t *testing.T) {
	var said []string
	r := &request{warn: func(s string) { said = append(said, s) }}
	for i := range maxIgnored + 5 {
		r.ignore(fmt.Errorf("answer %d\x1b[31m", i))
	}
	all := r.ignoredAll()
	if len(all) != maxIgnored+1 || all[maxIgnored] != "and 5 more" || len(said) != maxIgnored+1 {
		t.Errorf("kept %q, said %q", all, said)
	}
	for _, s := range all {
		if strings.ContainsRune(s, '\x1b') {
			t.Errorf("an escape reached the audit log: %q", s)
		}
	}
}

// fakeBridge is a bridge of shell script: it reads the request line,
// runs body, and then keeps what askperm writes next (the request's
// end) in the file it returns.
func fakeBridge(t *testing.T, body string) (program, rest string) {
	t.Helper()
	dir := t.TempDir()
	program, rest = filepath.Join(dir, ProgramName), filepath.Join(dir, "rest")
	script := "#!/bin/sh\nread -r start\n" + body + "\ncat > " + rest + "\n"
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, rest
}

// printf is a shell command printing each line.
func printf(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("printf '%s\\n' '" + strings.ReplaceAll(l, "'", `'\''`) + "'\n")
	}
	return b.String()
}

// event is a bridge's line.
func event(t *testing.T, ev BridgeEvent) string {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var published = `{"published":true}`

// askBridge asks the request testRequest through program, within d.
func askBridge(t *testing.T, program string, d time.Duration, approvers ...string) (form.Answer, error, []string) {
	t.Helper()
	c := validConfig(approvers...)
	c.Program = program
	var said []string
	var mu sync.Mutex
	fe := New(&c, func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() })
	fe.newAsk = func() string { return testAsk }
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	a, err := fe.Ask(ctx, form.New(parse(t, testRequest), form.Options{Sent: []byte(testRequest)}))
	mu.Lock()
	defer mu.Unlock()
	return a, err, said
}

// endOf is the request's end as the fake bridge was told it.
func endOf(t *testing.T, rest string) Done {
	t.Helper()
	var d Done
	for range 100 {
		if b, err := os.ReadFile(rest); err == nil && len(b) > 0 {
			if err := json.Unmarshal(bytes.TrimSpace(b), &d); err != nil {
				t.Fatalf("the end told: %q: %v", b, err)
			}
			return d
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the bridge was not told how the request ended")
	return d
}

// An answer the bridge passes on decides only once verified: a valid one
// allows, and the bridge is told so, to record it.
func TestAskThroughBridge(t *testing.T) {
	kp := userKey(t)
	req := parse(t, testRequest)
	key := AnswerKey("ci-1", testAsk, PublicKey(kp))
	answer := event(t, BridgeEvent{Key: key, Value: sign(t, kp, decide(t, req, form.Answer{Choice: form.AllowOnce}))})
	program, rest := fakeBridge(t, printf(published, answer))
	a, err, said := askBridge(t, program, time.Minute, PublicKey(kp))
	if err != nil || a.Choice != form.AllowOnce || a.Approver != PublicKey(kp) || len(said) != 0 {
		t.Fatalf("got %+v, %v; said %q", a, err, said)
	}
	want := Done{Outcome: decision.Allow, Frontend: decision.FrontendTeam, Approver: PublicKey(kp), Cause: decision.CauseUser}
	if d := endOf(t, rest); d != want {
		t.Errorf("told %+v, want %+v", d, want)
	}
}

// Answers a bridge forges (an approver not trusted, a signature that does
// not verify) are ignored: the request waits for its deadline and is
// denied by it, never allowed.
func TestAskBridgeForgesAnswers(t *testing.T) {
	kp, rogue := userKey(t), userKey(t)
	req := parse(t, testRequest)
	allow := decide(t, req, form.Answer{Choice: form.AllowOnce})
	badSig := strings.Replace(string(sign(t, kp, allow)), `"sig":"`, `"sig":"AA`, 1)
	program, rest := fakeBridge(t, printf(published,
		event(t, BridgeEvent{Key: AnswerKey("ci-1", testAsk, PublicKey(rogue)), Value: sign(t, rogue, allow)}),
		event(t, BridgeEvent{Key: AnswerKey("ci-1", testAsk, PublicKey(kp)), Value: []byte(badSig)})))
	a, err, said := askBridge(t, program, 2*time.Second, PublicKey(kp))
	if !errors.Is(err, context.DeadlineExceeded) || a.Choice != "" || len(a.Ignored) != 2 {
		t.Fatalf("got %+v, %v; want the deadline, two answers ignored", a, err)
	}
	if len(said) != 2 || !strings.Contains(said[0], "not one of this host's approvers") || !strings.Contains(said[1], "signature does not verify") {
		t.Errorf("said %q", said)
	}
	want := Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseTimeout}
	if d := endOf(t, rest); d != want {
		t.Errorf("told %+v, want %+v", d, want)
	}
}

// A bridge that ends, or writes what is not an event, before the request
// is published leaves the team unavailable: the next frontend is asked.
// After, no answer can come: the request is denied at its deadline.
func TestAskBridgeFails(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		published  bool
		want       string
	}{
		{"missing", "", false, "no such file"},
		{"exits", "exit 0", false, "the bridge ended"},
		{"writes garbage", printf("garbage"), false, `the bridge wrote "garbage"`},
		{"says unavailable", printf(`{"unavailable":"nats: no servers available for connection"}`), false, "no servers available"},
		{"exits after publishing", printf(published) + "exit 3", true, "the bridge ended: exit status 3"},
		{"writes garbage after publishing", printf(published, "{\"allow\":true}"), true, "not an event"},
		{"publishes twice", printf(published, published), true, "out of turn"},
	} {
		program, _ := fakeBridge(t, tc.body)
		if tc.name == "missing" {
			program = filepath.Join(t.TempDir(), ProgramName)
		}
		c := validConfig(PublicKey(userKey(t)))
		c.Program = program
		next := &teamtest.Next{}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var said []string
		_, by, err := prompt.Ask(ctx, []prompt.Frontend{prompt.Unavailable(New(&c, func(s string) { said = append(said, s) }), ErrUnavailable), next},
			form.New(parse(t, testRequest), form.Options{Sent: []byte(testRequest)}))
		cancel()
		switch {
		case tc.published && (!errors.Is(err, context.DeadlineExceeded) || next.Asked):
			t.Errorf("%s: %v by %s; the next frontend asked: %v; want the deadline", tc.name, err, by, next.Asked)
		case tc.published && (len(said) != 1 || !strings.Contains(said[0], tc.want)):
			t.Errorf("%s: said %q, want %q", tc.name, said, tc.want)
		case !tc.published && (err != nil || by != decision.FrontendLine || !next.Asked):
			t.Errorf("%s: %v by %s; the next frontend asked: %v", tc.name, err, by, next.Asked)
		}
		if !tc.published {
			_, _, err := prompt.Ask(context.Background(), []prompt.Frontend{prompt.Unavailable(New(&c, nil), ErrUnavailable)}, form.New(parse(t, testRequest), form.Options{Sent: []byte(testRequest)}))
			if !errors.Is(err, prompt.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s alone: %v, want unavailable: %q", tc.name, err, tc.want)
			}
		}
	}
}

// Whatever a bridge writes after publishing, no answer comes of it
// without an approver's signature: the request is denied at its deadline.
func FuzzBridgeOutput(f *testing.F) {
	f.Add([]byte(`{"key":"ci-1.x.y","value":"e30"}` + "\n"))
	f.Add([]byte(`{"published":true}` + "\n"))
	f.Add([]byte("\x00\xff\n{}\n"))
	f.Add([]byte(`{"key":"` + AnswerKey("ci-1", digestOf(testRequest), "UAAAA") + `","value":"eyJkZWNpc2lvbiI6e30sImFwcHJvdmVyIjoiVSIsInNpZyI6IiJ9"}` + "\n"))
	kp := userKey(f)
	f.Fuzz(func(t *testing.T, out []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "out"), out, 0o600); err != nil {
			t.Fatal(err)
		}
		program, _ := fakeBridge(t, printf(published)+"cat "+filepath.Join(dir, "out"))
		a, err, _ := askBridge(t, program, 300*time.Millisecond, PublicKey(kp))
		if !errors.Is(err, context.DeadlineExceeded) || a.Choice != "" {
			t.Fatalf("%q: %+v, %v", out, a, err)
		}
	})
}

// askperm-team is the one configured, else the one beside askperm, else
// the first on PATH; none is unavailable, saying how to install it; one
// found but not trusted is refused, with the reason.
func TestFindProgram(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "askperm")
	beside := filepath.Join(dir, ProgramName)
	onPath := func(string) (string, error) { return "/usr/local/bin/" + ProgramName, nil }
	notOnPath := func(string) (string, error) { return "", exec.ErrNotFound }
	trust := func(string) error { return nil }
	distrust := func(p string) error { return errors.New("planted " + p) }
	if p, err := findProgram("/opt/t/askperm-team", self, onPath, distrust); p != "/opt/t/askperm-team" || err != nil {
		t.Errorf("configured: %q, %v", p, err)
	}
	if p, err := findProgram("", self, onPath, trust); p != "/usr/local/bin/"+ProgramName || err != nil {
		t.Errorf("on PATH: %q, %v", p, err)
	}
	if p, err := findProgram("", self, onPath, distrust); p != "" || err == nil || !strings.Contains(err.Error(), "on PATH refused") || !strings.Contains(err.Error(), "planted /usr/local/bin/"+ProgramName) {
		t.Errorf("on PATH, untrusted: %q, %v", p, err)
	}
	if _, err := findProgram("", self, notOnPath, trust); err == nil || !strings.Contains(err.Error(), "go install github.com/askperm/askperm/cmd/askperm-team@") {
		t.Errorf("nowhere: %v", err)
	}
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findProgram("", self, notOnPath, trust); err == nil {
		t.Error("a file beside askperm that is not executable was taken")
	}
	os.Chmod(beside, 0o755)
	if p, err := findProgram("", self, onPath, trust); p != beside || err != nil {
		t.Errorf("beside askperm: %q, %v", p, err)
	}
	if p, err := findProgram("", self, onPath, distrust); p != "" || err == nil || !strings.Contains(err.Error(), "beside askperm refused") {
		t.Errorf("beside askperm, untrusted: %q, %v", p, err)
	}
}

// An askperm-team on PATH in a directory others may write (here under
// the world-writable temporary directory) is refused, not run.
func TestFindProgramRefusesWritablePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	if err := os.WriteFile(filepath.Join(dir, ProgramName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, err := FindProgram(""); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("askperm-team from a world-writable PATH directory: %q, %v", p, err)
	}
}

// Found on PATH in a directory of the user's, askperm-team is taken
// exactly when neither the directory nor the program is writable by
// others and the program is executable: every mode of each.
func TestFindProgramModes(t *testing.T) {
	cache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	var base string
	if err == nil {
		base, err = os.MkdirTemp(cache, "askperm-test-")
	}
	if err != nil {
		t.Skipf("no cache directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	for dirMode := os.FileMode(0o700); dirMode <= 0o777; dirMode += 0o001 {
		fileMode := 0o700 | (dirMode^0o055)&0o077 // a different file mode for each
		dir := filepath.Join(base, dirMode.String())
		prog := filepath.Join(dir, ProgramName)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(prog, fileMode)
		os.Chmod(dir, dirMode)
		t.Setenv("PATH", dir)
		p, err := FindProgram("")
		want := dirMode&0o022 == 0 && fileMode&0o022 == 0
		if got := err == nil && p == prog; got != want {
			t.Errorf("directory %v, program %v: %q, %v; want taken %v", dirMode, fileMode, p, err, want)
		}
	}
}

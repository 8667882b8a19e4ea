package line

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// lineStep is what one read of a canonical-mode terminal returns, after a
// pause.
type lineStep struct {
	after time.Duration
	text  string
}

// lineTerminal replays steps, one a Read (a longer one over several, as a
// terminal does), then reports EOF (Ctrl-D).
type lineTerminal struct{ steps []lineStep }

func (t *lineTerminal) Read(b []byte) (int, error) {
	if len(t.steps) == 0 {
		return 0, io.EOF
	}
	s := &t.steps[0]
	time.Sleep(s.after)
	n := copy(b, s.text)
	if s.after, s.text = 0, s.text[n:]; s.text == "" {
		t.steps = t.steps[1:]
	}
	return n, nil
}

// lineTyped is a person typing each line, then Enter.
func lineTyped(lines ...string) *lineTerminal {
	t := &lineTerminal{}
	for _, l := range lines {
		t.steps = append(t.steps, lineStep{text: l + "\n"})
	}
	return t
}

// lineReq is a request with two grants, a dimension of three scopes, one of
// a sole scope, a workdir and a detail holding a tab.
func lineReq() *decision.Request {
	return &decision.Request{
		ID:     new("r1"),
		Tool:   "write_file",
		Action: "write",
		Reason: "save\tthe report",
		Dimensions: []decision.Dimension{
			{Name: "path", Label: "File", Value: "/home/a/p/report.md", Scopes: []decision.Scope{
				{Label: "this file", Match: "/home/a/p/report.md", Kind: decision.KindExact},
				{Label: "files under /home/a/p/", Match: "/home/a/p/", Kind: decision.KindPrefix},
				{Label: "any file", Match: "*", Kind: decision.KindAny},
			}},
			{Name: "host", Value: "h", Scopes: []decision.Scope{{Label: "h", Match: "h"}}},
		},
		Workdir:   &decision.Workdir{Value: "/home/a/p"},
		Grants:    []decision.Grant{{Name: "fs.write", Description: "write files"}, {Name: "fs.create"}},
		Details:   []decision.Detail{{Label: "content", Text: "# Report\n\tAll green.\n"}},
		SessionID: "s1",
		SHA256:    strings.Repeat("ab", 32),
	}
}

// lineDrive runs the line prompt's dialogue on r and returns the answer, the
// transcript and the error.
func lineDrive(t *testing.T, f *form.Form, arm time.Duration, r io.Reader) (form.Answer, string, error) {
	t.Helper()
	var out bytes.Buffer
	p := newLinePrompt(r, &out, arm)
	p.cols = func() int { return flowColumns }
	a, err := p.run(context.Background(), f)
	return a, out.String(), err
}

// flowColumns is a terminal wide enough that no line of these requests
// wraps, so that tests of the dialogue can match whole sentences.
const flowColumns = 500

func TestLineAnswers(t *testing.T) {
	defaults := form.New(lineReq(), form.Options{}).Defaults()
	with := func(edit func(*form.Answer)) form.Answer {
		a := defaults
		a.Scopes = map[string]string{"path": "/home/a/p/report.md", "host": "h"}
		edit(&a)
		return a
	}
	for _, tc := range []struct {
		name    string
		session bool
		in      *lineTerminal
		want    form.Answer
		shown   []string // in the transcript, in this order
	}{
		{"allow once", false, lineTyped("y"), with(func(a *form.Answer) { a.Choice = form.AllowOnce }),
			[]string{"Tool: write_file", "  y  Allow once", "  n  Deny once", "Answer [y/a/d/n/m/?]: ", "askperm: allowed once: write_file wants to write /home/a/p/report.md\n"}},
		{"keys are not case-sensitive", false, lineTyped(" Y "), with(func(a *form.Answer) { a.Choice = form.AllowOnce }), nil},
		{"allow for this session", true, lineTyped("s"), with(func(a *form.Answer) { a.Choice = form.AllowSession }),
			[]string{"  s  Allow for this session", "Answer [s/y/a/d/n/m/?]: "}},
		{"Enter alone denies once", false, lineTyped(""), with(func(a *form.Answer) { a.Choice = form.DenyOnce }),
			[]string{"Enter alone: Deny once.", "askperm: denied: write_file wants to write /home/a/p/report.md\n"}},
		{"deny once with a reason", false, lineTyped("m", "not now", "n"),
			with(func(a *form.Answer) { a.Choice, a.Message = form.DenyOnce, "not now" }),
			[]string{"Denial reason (Enter alone clears it): ", "Denial reason: not now\n", "Answer ["}},
		{"a reason is cleared by Enter alone", false, lineTyped("m", "no", "m", "", "n"),
			with(func(a *form.Answer) { a.Choice = form.DenyOnce }), []string{"Denial reason cleared."}},
		{"? shows the request and the reason again", false, lineTyped("m", "no", "?", "n"),
			with(func(a *form.Answer) { a.Choice, a.Message = form.DenyOnce, "no" }),
			[]string{"Request: write_file wants to write /home/a/p/report.md\n", "Request: write_file wants to write /home/a/p/report.md\n", "Denial reason: no\n"}},
		{"yes allows once", false, lineTyped(" YES "), with(func(a *form.Answer) { a.Choice = form.AllowOnce }),
			[]string{"The words yes and no count as y and n.", "askperm: allowed once: "}},
		{"no denies once", false, lineTyped("No"), with(func(a *form.Answer) { a.Choice = form.DenyOnce }),
			[]string{"askperm: denied: "}},
		{"no at save denies once", false, lineTyped("a", "", "", "", "", "no"), with(func(a *form.Answer) { a.Choice = form.DenyOnce }), nil},
		{"yes at save saves nothing", false, lineTyped("a", "", "", "", "", "yes", "b", "n"), with(func(a *form.Answer) { a.Choice = form.DenyOnce }),
			[]string{"Type save to save the rule"}},
		{"unknown input asks again", false, lineTyped("yess", "y"), with(func(a *form.Answer) { a.Choice = form.AllowOnce }),
			[]string{"Type one of the keys listed"}},
		{"three unknown answers deny once", false, lineTyped("x", "yes please", "allow", "y"), with(func(a *form.Answer) { a.Choice = form.DenyOnce }),
			[]string{"Type one of the keys listed", "Type one of the keys listed", "no valid answer; denying once."}},
		{"a line completed after Ctrl-D", false, &lineTerminal{steps: []lineStep{{text: "y"}, {text: "\n"}}},
			with(func(a *form.Answer) { a.Choice = form.AllowOnce }), nil},
		{"allow always, narrowed", false, lineTyped("a", "2", "2", "2", "2", "save"),
			with(func(a *form.Answer) {
				a.Choice, a.Grants, a.WorkdirScope, a.Lifetime = form.AllowAlways, []string{"fs.create"}, decision.WorkdirAll, "900"
				a.Scopes["path"] = "/home/a/p/"
			}),
			[]string{"Allow always…: the rule to save.", "  1. [x] fs.write — write files\n  2. [x] fs.create\n", "Grants [1-2]: ",
				"Which File [path] the rule covers:", `  1. [x] this file: exactly "/home/a/p/report.md"`, "Scope [1-3]: ",
				`  1. [x] in workdir "/home/a/p"`, "  2. [ ] in any workdir (every configured workdir, including future ones)", "Workdir [1-2]: ",
				"  1. [x] until removed\n  2. [ ] for 15 minutes\n  3. [ ] for 16 hours\n", "Lifetime [1-3]: ",
				`Rule: allow write_file, with File [path] anything under "/home/a/p/", with host exactly "h", in any workdir, granting fs.create, for 15 minutes`,
				"Save this rule? ", "askperm: allowed always: write_file wants to write /home/a/p/report.md\n"}},
		{"allow always, defaults", false, lineTyped("a", "", "", "", "", "SAVE"), with(func(a *form.Answer) { a.Choice = form.AllowAlways }), nil},
		{"grants by commas, repeated", false, lineTyped("a", "2,1 2", "", "", "", "save"),
			with(func(a *form.Answer) { a.Choice, a.Grants = form.AllowAlways, []string{"fs.write", "fs.create"} }), nil},
		{"deny always asks no grants", false, lineTyped("d", "3", "", "3", "save"),
			with(func(a *form.Answer) { a.Choice, a.Lifetime, a.Scopes["path"] = form.DenyAlways, "57600", "*" }),
			[]string{"Deny always…: the rule to save.", "Scope [1-3]: ", `Rule: deny write_file, with File [path] any value, with host exactly "h", in workdir "/home/a/p", for 16 hours`}},
		{"invalid numbers ask again", false, lineTyped("a", "0", "1 x", "2", "4", "3", "", "", "save"),
			with(func(a *form.Answer) {
				a.Choice, a.Grants, a.Scopes["path"] = form.AllowAlways, []string{"fs.create"}, "*"
			}),
			[]string{"Type numbers from 1 to 2 separated by spaces", "Type numbers from 1 to 2", "Type one number from 1 to 3"}},
		{"three invalid numbers go back", false, lineTyped("a", "0", "0", "0", "n"), with(func(a *form.Answer) { a.Choice = form.DenyOnce }),
			[]string{"no valid answer; back to the choice.", "Request: write_file wants to write /home/a/p/report.md\n"}},
		{"back keeps the reason and the rule answers", false, lineTyped("m", "why", "a", "", "3", "b", "d", "", "", "", "save"),
			with(func(a *form.Answer) { a.Choice, a.Message, a.Scopes["path"] = form.DenyAlways, "why", "*" }),
			[]string{"Scope [1-3]: ", "Workdir [1-2]: ", "Denial reason: why", "  3. [x] any file: any value"}},
		{"Enter alone at save goes back", false, lineTyped("a", "", "", "", "", "", "n"), with(func(a *form.Answer) { a.Choice = form.DenyOnce }),
			[]string{"Save this rule? ", "Request: write_file wants to write /home/a/p/report.md\n"}},
		{"n at save denies once, keeping the reason", false, lineTyped("m", "no", "a", "", "", "", "", "n"),
			with(func(a *form.Answer) { a.Choice, a.Message = form.DenyOnce, "no" }), []string{"n to deny once"}},
		{"b goes back from any rule question", false, lineTyped("a", "b", "y"), with(func(a *form.Answer) { a.Choice = form.AllowOnce }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := form.New(lineReq(), form.Options{SessionMemory: tc.session})
			a, out, err := lineDrive(t, f, 0, tc.in)
			if err != nil {
				t.Fatalf("error %v; transcript:\n%s", err, out)
			}
			if !reflect.DeepEqual(a, tc.want) {
				t.Errorf("answer\n got %+v\nwant %+v\ntranscript:\n%s", a, tc.want, out)
			}
			rest := out
			for _, s := range tc.shown {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("transcript lacks %q (in order); transcript:\n%s", s, out)
				}
				rest = rest[i+len(s):]
			}
			if _, err := f.Decide(a, "line", time.Now()); err != nil {
				t.Errorf("the form rejects the answer: %v", err)
			}
		})
	}
}

func TestLineOnlyOfferedKeys(t *testing.T) {
	req := lineReq()
	req.Persistent = new(false)
	a, out, err := lineDrive(t, form.New(req, form.Options{}), 0, lineTyped("a", "d", "s", "y"))
	if err != nil || a.Choice != form.DenyOnce {
		t.Fatalf("got %v, %v; want deny once after three keys not offered; transcript:\n%s", a.Choice, err, out)
	}
	if strings.Contains(out, "Allow always") || !strings.Contains(out, "Answer [y/n/m/?]: ") {
		t.Errorf("legend lists choices not offered:\n%s", out)
	}
}

func TestLineReasonTooLong(t *testing.T) {
	long := strings.Repeat("x", form.MaxMessageBytes+1)
	a, out, err := lineDrive(t, form.New(lineReq(), form.Options{}), 0, lineTyped("m", long, "n"))
	if err != nil || a.Message != "" {
		t.Fatalf("got message of %d bytes, %v; want none kept", len(a.Message), err)
	}
	if !strings.Contains(out, "Not kept: message: longer than 4096 bytes.") {
		t.Errorf("no reason given for dropping the message:\n%s", out)
	}
}

// TestLineCancelled: EOF, a read error and a write error end the prompt as
// cancelled, whatever was typed before.
func TestLineCancelled(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"EOF at the choice", lineTyped()},
		{"EOF in the rule stage", lineTyped("a", "2")},
		{"EOF after a partial line", &lineTerminal{steps: []lineStep{{text: "y"}}}},
		{"read error", lineErrReader{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out, err := lineDrive(t, form.New(lineReq(), form.Options{}), 0, tc.r)
			if !errors.Is(err, prompt.ErrCancelled) {
				t.Fatalf("err = %v, want prompt.ErrCancelled", err)
			}
			if !strings.HasSuffix(out, "\naskperm: denied: cancelled: write_file wants to write /home/a/p/report.md\n") {
				t.Errorf("no final line; transcript:\n%s", out)
			}
		})
	}
	_, err := newLinePrompt(lineTyped("y"), lineErrWriter{}, 0).run(context.Background(), form.New(lineReq(), form.Options{}))
	if !errors.Is(err, prompt.ErrCancelled) {
		t.Errorf("write error: err = %v, want prompt.ErrCancelled", err)
	}
}

type lineErrReader struct{}

func (lineErrReader) Read([]byte) (int, error) { return 0, errors.New("input/output error") }

type lineErrWriter struct{}

func (lineErrWriter) Write([]byte) (int, error) { return 0, errors.New("input/output error") }

// TestLineContextEnds: a read that never returns is interrupted by the
// context, and the prompt says why it ended.
func TestLineContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		want    error
		message string
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, "askperm: denied: cancelled: write_file wants to write /home/a/p/report.md"},
		{"timed out", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded, "askperm: denied: timed out: write_file wants to write /home/a/p/report.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			ctx, cancel := tc.ctx()
			defer cancel()
			var out bytes.Buffer
			start := time.Now()
			_, err := newLinePrompt(r, &out, 0).run(ctx, form.New(lineReq(), form.Options{}))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v to notice", d)
			}
			if !strings.HasSuffix(out.String(), "\n"+tc.message+"\n") {
				t.Errorf("transcript does not end with %q:\n%s", tc.message, out.String())
			}
		})
	}
}

// TestLineTypeaheadNeverDecides: lines that arrive together, or before the
// arming delay ended, are discarded and the question is asked again.
func TestLineTypeaheadNeverDecides(t *testing.T) {
	const arm = 200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		arm     time.Duration
		steps   []lineStep
		pending []bool // what linesWaiting says after each read
		notice  string
	}{
		{"two lines in one read", 0, []lineStep{{text: "y\ny\n"}, {text: "n\n"}}, nil, "ignored input that arrived all at once"},
		{"a line and the start of another", 0, []lineStep{{text: "y\nn"}, {text: "n\n"}}, nil, "ignored input that arrived all at once"},
		{"more lines waiting in the terminal", 0, []lineStep{{text: "y\n"}, {text: "n\n"}}, []bool{true},
			"ignored input that arrived all at once"},
		{"a line before the arming delay", arm, []lineStep{{text: "y\n"}, {after: 3 * arm, text: "n\n"}}, nil,
			"ignored what was typed before the question was ready"},
		{"a line right after one before the arming delay", arm, []lineStep{{text: "y\n"}, {after: arm / 2, text: "y\n"}, {after: 3 * arm, text: "n\n"}}, nil,
			"ignored what was typed before the question was ready"},
		{"a line right after a paste", arm, []lineStep{{after: 2 * arm, text: "n\nn\n"}, {after: arm / 4, text: "y\n"}, {after: 3 * arm, text: "n\n"}}, nil,
			"ignored what was typed before the question was ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newLinePrompt(&lineTerminal{steps: tc.steps}, &out, tc.arm)
			reads := 0
			p.in.pending = func() bool {
				reads++
				return reads <= len(tc.pending) && tc.pending[reads-1]
			}
			a, err := p.run(context.Background(), form.New(lineReq(), form.Options{}))
			if err != nil || a.Choice != form.DenyOnce {
				t.Fatalf("got %v, %v; want deny once; transcript:\n%s", a.Choice, err, out.String())
			}
			if !strings.Contains(out.String(), tc.notice) || strings.Count(out.String(), "Answer [") < 2 {
				t.Errorf("want %q and the question asked again; transcript:\n%s", tc.notice, out.String())
			}
		})
	}
}

// TestLineFlushes: typeahead is discarded each time a question is shown,
// and never when the arming delay ends (that would cut a line in two).
func TestLineFlushes(t *testing.T) {
	slow := &lineTerminal{steps: []lineStep{{after: 100 * time.Millisecond, text: "m\n"}, {after: 100 * time.Millisecond, text: "no\n"}, {after: 100 * time.Millisecond, text: "n\n"}}}
	p := newLinePrompt(slow, io.Discard, time.Millisecond)
	flushes := 0
	p.flush = func() error { flushes++; return nil }
	if _, err := p.run(context.Background(), form.New(lineReq(), form.Options{})); err != nil {
		t.Fatal(err)
	}
	if flushes != 3 {
		t.Errorf("flushed %d times, want 3: when each of 3 questions is shown", flushes)
	}
	p = newLinePrompt(lineTyped("y"), io.Discard, 0)
	p.flush = func() error { return errors.New("input/output error") }
	if _, err := p.run(context.Background(), form.New(lineReq(), form.Options{})); !errors.Is(err, prompt.ErrCancelled) {
		t.Errorf("a failed flush gave %v, want prompt.ErrCancelled", err)
	}
}

// TestLineOutputPlain: the hostile parts of a request reach the terminal
// escaped, and nothing but newlines is a control character.
func TestLineOutputPlain(t *testing.T) {
	req := lineReq()
	req.Tool = "write_file\r\x1b[1Als -la"
	req.Reason = "line one\r\x1b[2Kall fine\n\u009b31mred\u202eexe"
	req.Details = []decision.Detail{{Label: "diff\x1b[6n", Text: "+ good\n- bad\r\t\x1b[32mhidden\n"}}
	_, out, err := lineDrive(t, form.New(req, form.Options{}), 0, lineTyped("?", "a", "", "", "", "", "save"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r == '\u202e' {
			t.Fatalf("transcript holds %U:\n%s", r, out)
		}
	}
	if !strings.Contains(out, `Tool: write_file\r\e[1Als -la`) || !strings.Contains(out, "│ - bad\\r \\e[32mhidden") {
		t.Errorf("hostile text not shown escaped:\n%s", out)
	}
}

func TestLineUnavailable(t *testing.T) {
	notTTY := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notTTY, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(t.TempDir(), "missing"), notTTY} {
		fe := New(prompt.Options{TTY: path})
		if _, err := fe.Ask(context.Background(), form.New(lineReq(), form.Options{})); !errors.Is(err, prompt.ErrUnavailable) {
			t.Errorf("%s: err = %v, want prompt.ErrUnavailable", path, err)
		}
		if fe.Name() != "line" {
			t.Errorf("Name() = %q", fe.Name())
		}
	}
}

// TestPollableTTY checks the kernel behaviour the line prompt relies on: in
// canonical mode one read returns one line and TIOCINQ counts the complete
// lines still waiting; closing the pollable copy ends a pending read.
func TestPollableTTY(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptm.Close()
	tty, err := pollable(pts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ptm.Write([]byte("y\nn\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	n, err := tty.Read(buf)
	if err != nil || string(buf[:n]) != "y\n" {
		t.Fatalf("first read: %q, %v", buf[:n], err)
	}
	if !linesWaiting(tty) {
		t.Error("linesWaiting = false with a line waiting")
	}
	if n, err = tty.Read(buf); err != nil || string(buf[:n]) != "n\n" {
		t.Fatalf("second read: %q, %v", buf[:n], err)
	}
	if _, err := ptm.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if linesWaiting(tty) {
		t.Error("linesWaiting = true with only a partial line")
	}
	done := make(chan error, 1)
	go func() {
		_, err := tty.Read(buf)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	tty.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("pending read ended with %v, want os.ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("closing did not end the pending read")
	}
}

// TestLineDelayRestarts: while lines keep arriving sooner than the arming
// delay, each one starts the delay again; one notice follows once input
// pauses, and only a line after a whole quiet delay counts.
func TestLineDelayRestarts(t *testing.T) {
	t.Parallel()
	const arm = 300 * time.Millisecond
	steps := []lineStep{{text: "y\n"}}
	for range 6 {
		steps = append(steps, lineStep{after: arm / 5, text: "y\n"}) // 6 × 60 ms: longer than the delay in all
	}
	steps = append(steps, lineStep{after: 4 * arm, text: "n\n"})
	var out bytes.Buffer
	p := newLinePrompt(&lineTerminal{steps: steps}, &out, arm)
	a, err := p.run(context.Background(), form.New(lineReq(), form.Options{}))
	if err != nil || a.Choice != form.DenyOnce {
		t.Fatalf("got %v, %v; want deny once; transcript:\n%s", a.Choice, err, out.String())
	}
	if n := strings.Count(out.String(), "ignored what was typed before the question was ready"); n != 1 {
		t.Errorf("%d notices, want 1: the delay restarts with each line; transcript:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "Answer ["); n != 2 {
		t.Errorf("asked %d times, want 2; transcript:\n%s", n, out.String())
	}
}

// TestLineEveryQuestionArmed: every question, the choice, the denial
// reason and each rule question and the save alike, discards a line that
// arrives within its delay; only the answers after it count.
func TestLineEveryQuestionArmed(t *testing.T) {
	t.Parallel()
	const arm = 100 * time.Millisecond
	var steps []lineStep
	for _, qa := range [][2]string{{"y", "m"}, {"evil", "why"}, {"y", "d"}, {"b", "3"}, {"b", ""}, {"b", ""}, {"n", "save"}} {
		steps = append(steps, lineStep{text: qa[0] + "\n"}, lineStep{after: 4 * arm, text: qa[1] + "\n"})
	}
	var out bytes.Buffer
	p := newLinePrompt(&lineTerminal{steps: steps}, &out, arm)
	p.cols = func() int { return flowColumns }
	a, err := p.run(context.Background(), form.New(lineReq(), form.Options{}))
	if err != nil {
		t.Fatalf("%v; transcript:\n%s", err, out.String())
	}
	if a.Choice != form.DenyAlways || a.Message != "why" || a.Scopes["path"] != "*" {
		t.Errorf("got %+v, want deny always of any file with the reason typed after the delay; transcript:\n%s", a, out.String())
	}
	if n := strings.Count(out.String(), "ignored what was typed before the question was ready"); n != 7 {
		t.Errorf("%d notices, want one for each of the 7 questions; transcript:\n%s", n, out.String())
	}
}

// nonKeys generates lines a person may type for another program: words,
// commands, the keys doubled, spaced or in words, any Unicode. None is
// exactly one key.
func nonKeys(rng *rand.Rand, n int) []string {
	seeds := []string{"git status", "yes please", "y y", "yy", "ya", "sy", "y.", "'y'", "y\ty", "ye", "Yes!", "git apply", "ls -a", "save", "y\\", "ｙ", "y\u0301", "ok", "yess", "non"}
	alphabet := []rune("ysadnm? \tgitstaus-.yY'\"ｙé\u00a0")
	var out []string
	for len(out) < n {
		var s string
		switch rng.IntN(3) {
		case 0:
			s = seeds[rng.IntN(len(seeds))]
		case 1:
			rs := make([]rune, 2+rng.IntN(6))
			for i := range rs {
				rs[i] = alphabet[rng.IntN(len(alphabet))]
			}
			s = string(rs)
		default:
			s = seeds[rng.IntN(len(seeds))] + " " + seeds[rng.IntN(len(seeds))]
		}
		if k := keyWord(strings.TrimSpace(s)); len(k) > 1 || !strings.ContainsAny(k, "ysadnm?v") {
			out = append(out, s)
		}
	}
	return out
}

// TestLineOnlyKeysAct: typing meant for another program never decides:
// lines that are not exactly one key are refused, three of them deny, and
// pasted lines are discarded whatever they hold.
func TestLineOnlyKeysAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	lines := nonKeys(rng, 600)
	f := form.New(lineReq(), form.Options{SessionMemory: true})
	for i := 0; i < len(lines); i += maxInvalid {
		typed := lines[i : i+maxInvalid]
		a, out, err := lineDrive(t, f, 0, lineTyped(slices.Concat(typed, []string{"y"})...))
		if err != nil || a.Choice != form.DenyOnce || !strings.Contains(out, "no valid answer; denying once.") {
			t.Fatalf("typed %q: got %v, %v; want deny once after three lines that are no key; transcript:\n%s", typed, a.Choice, err, out)
		}
	}
	keys := []string{"y", "s", "a", "save", "1", "n"}
	for range 200 {
		paste := make([]string, 2+rng.IntN(5))
		for j := range paste {
			paste[j] = keys[rng.IntN(len(keys))]
		}
		text := strings.Join(paste, "\n") + "\n"
		if rng.IntN(2) == 0 {
			text = text[:len(text)-1] // the last line still being typed
		}
		a, out, err := lineDrive(t, f, 0, &lineTerminal{steps: []lineStep{{text: text}, {text: "\n"}, {text: "n\n"}}})
		if err != nil || a.Choice != form.DenyOnce || !strings.Contains(out, "arrived all at once") {
			t.Fatalf("pasted %q: got %v, %v; want it discarded; transcript:\n%s", text, a.Choice, err, out)
		}
	}
}

// TestLineAgentWordsMarked: each text the agent says of its request (title,
// descriptions, workdir label, reason, details) stands on a line marked as
// the agent's words, or in the gutter below one.
func TestLineAgentWordsMarked(t *testing.T) {
	req := lineReq()
	req.Annotations = &decision.Annotations{Title: "tokentitle"}
	req.ActionDescription = "tokenaction"
	req.Workdir.Label = "tokenworkdir"
	req.Grants[0].Description = "tokengrant"
	req.Reason = "first line\ntokenreason"
	req.Details = []decision.Detail{{Label: "tokenlabel", Text: "a\ntokendetail\n"}}
	_, out, err := lineDrive(t, form.New(req, form.Options{}), 0, lineTyped("n"))
	if err != nil {
		t.Fatal(err)
	}
	view, _, _ := strings.Cut(out, "Keys (")
	lines := strings.Split(view, "\n")
	for _, token := range []string{"tokentitle", "tokenaction", "tokenworkdir", "tokengrant", "tokenreason", "tokenlabel", "tokendetail"} {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, token) })
		if i < 0 {
			t.Fatalf("%s not shown:\n%s", token, view)
		}
		for i > 0 && strings.HasPrefix(lines[i], gutter) {
			i--
		}
		if !strings.Contains(lines[i], "(agent's words") {
			t.Errorf("%s is under %q, not marked as the agent's words", token, lines[i])
		}
	}
}

// TestLineNarrowTerminal: a terminal narrower than minColumns gets no
// prompt: unavailable when it starts so, cancelled when it narrows later.
// A terminal that reports no width is taken as defaultColumns wide.
func TestLineNarrowTerminal(t *testing.T) {
	for _, widths := range [][]int{{minColumns - 1}, {80, 80, minColumns - 1}} {
		var out bytes.Buffer
		p := newLinePrompt(lineTyped("?", "y"), &out, 0)
		p.cols = func() int {
			w := widths[0]
			if len(widths) > 1 {
				widths = widths[1:]
			}
			return w
		}
		if _, err := p.run(context.Background(), form.New(lineReq(), form.Options{})); !errors.Is(err, prompt.ErrCancelled) || !strings.Contains(err.Error(), "columns wide") {
			t.Errorf("widths %v: err = %v, want prompt.ErrCancelled naming the width", widths, err)
		}
	}
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptm.Close()
	defer pts.Close()
	for _, tc := range []struct{ set, want int }{{0, defaultColumns}, {37, 37}, {minColumns - 1, minColumns - 1}} {
		if err := pty.Setsize(ptm, &pty.Winsize{Rows: 24, Cols: uint16(tc.set)}); err != nil {
			t.Fatal(err)
		}
		if got := columns(pts); got != tc.want {
			t.Errorf("terminal set to %d columns: columns = %d, want %d", tc.set, got, tc.want)
		}
	}
	_, err = New(prompt.Options{TTY: pts.Name()}).Ask(context.Background(), form.New(lineReq(), form.Options{}))
	if !errors.Is(err, prompt.ErrUnavailable) || !strings.Contains(err.Error(), "columns wide") {
		t.Errorf("Ask on a narrow terminal: err = %v, want prompt.ErrUnavailable naming the width", err)
	}
}

// navLines generates lines holding the escape sequences that navigation
// keys send in canonical mode (arrows in CSI and SS3 form, Home, End,
// PgUp, PgDn, Shift+Tab, with modifiers), alone or around the keys and
// words that answer.
func navLines(rng *rand.Rand, n int) []string {
	nav := []string{"\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D", "\x1bOA", "\x1bOB", "\x1b[H", "\x1b[F", "\x1bOH", "\x1bOF",
		"\x1b[1~", "\x1b[4~", "\x1b[7~", "\x1b[8~", "\x1b[5~", "\x1b[6~", "\x1b[Z", "\x1b[1;5A", "\x1b[1;2B", "\x1b"}
	words := []string{"y", "s", "a", "yes", "save", "1", "2", "Y", " "}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		b.WriteString(nav[rng.IntN(len(nav))])
		for range rng.IntN(5) {
			if rng.IntN(3) == 0 {
				b.WriteString(words[rng.IntN(len(words))])
			} else {
				b.WriteString(nav[rng.IntN(len(nav))])
			}
		}
		s := b.String()
		if rng.IntN(2) == 0 { // the answer first, then a key that moves
			s = words[rng.IntN(len(words))] + s
		}
		out[i] = s
	}
	return out
}

// TestLineNavigationKeysNeverAnswer: in canonical mode the arrows, Home,
// PgUp and the rest arrive as escape sequences inside the line; such a
// line is no key, whatever answer it holds besides. Three of them deny
// once in stage choice; at Save this rule? they go back, never save.
func TestLineNavigationKeysNeverAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	lines := navLines(rng, 300)
	f := form.New(lineReq(), form.Options{SessionMemory: true})
	a := f.Defaults()
	a.Choice = form.AllowAlways
	skip := make([]string, len(f.RuleQuestions(a))) // Enter alone keeps each rule answer
	for i := 0; i+maxInvalid <= len(lines); i += maxInvalid {
		typed := lines[i : i+maxInvalid]
		got, out, err := lineDrive(t, f, 0, lineTyped(slices.Concat(typed, []string{"y"})...))
		if err != nil || got.Choice != form.DenyOnce || !strings.Contains(out, "no valid answer; denying once.") {
			t.Fatalf("typed %q: got %v, %v; want deny once; transcript:\n%s", typed, got.Choice, err, out)
		}
		got, out, err = lineDrive(t, f, 0, lineTyped(slices.Concat([]string{"a"}, skip, typed, []string{"n"})...))
		if err != nil || got.Choice != form.DenyOnce || !strings.Contains(out, "Type save to save the rule") ||
			!strings.Contains(out, "no valid answer; back to the choice.") {
			t.Fatalf("at Save, typed %q: got %v, %v; want back, then deny once; transcript:\n%s", typed, got.Choice, err, out)
		}
	}
}

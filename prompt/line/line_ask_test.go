package line

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

const lineHeadline = "write_file wants to write /home/a/p/report.md"

// TestLineReadyStaysReady: a question shown again after a line it did not
// take (an unknown key, a number out of range, the notice about early
// lines) stays ready: an answer typed right after counts, and nobody is
// told it came before the question was ready.
func TestLineReadyStaysReady(t *testing.T) {
	t.Parallel()
	const arm = 200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		steps   []lineStep
		want    form.Choice
		notices int
	}{
		{"an answer right after an unknown key", []lineStep{{after: 2 * arm, text: "x\n"}, {after: arm / 5, text: "y\n"}}, form.AllowOnce, 0},
		{"an answer right after a number out of range", []lineStep{{after: 2 * arm, text: "d\n"}, {after: 2 * arm, text: "9\n"}, {after: arm / 5, text: "1\n"},
			{after: 2 * arm, text: "\n"}, {after: 2 * arm, text: "\n"}, {after: 2 * arm, text: "save\n"}}, form.DenyAlways, 0},
		{"an answer right after the notice", []lineStep{{text: "n\n"}, {after: arm + arm/4, text: "y\n"}}, form.AllowOnce, 1},
		{"an answer after a pause, no notice", []lineStep{{after: 2 * arm, text: "y\n"}}, form.AllowOnce, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			p := newLinePrompt(&lineTerminal{steps: tc.steps}, &out, arm)
			a, err := p.run(context.Background(), form.New(lineReq(), form.Options{}))
			if err != nil || a.Choice != tc.want {
				t.Fatalf("got %v, %v; want %v; transcript:\n%s", a.Choice, err, tc.want, out.String())
			}
			if n := strings.Count(out.String(), earlyNotice); n != tc.notices {
				t.Errorf("%d notices of early lines, want %d; transcript:\n%s", n, tc.notices, out.String())
			}
		})
	}
}

// cutReq is lineReq with a detail of 1 MiB and a bit, a control character
// and a last line of its own past what the request view shows.
func cutReq() *decision.Request {
	req := lineReq()
	text := strings.Repeat("0123456789abcde\n", 1<<16) + "tail\x1b[2J\nTHE LAST LINE\n"
	req.Details = append(req.Details, decision.Detail{Label: "big", Text: text})
	return req
}

// TestLineViewDetails: v shows a detail cut short in full, rendered and
// behind the gutter, then asks again; it is offered only when a detail was
// cut.
func TestLineViewDetails(t *testing.T) {
	a, out, err := lineDrive(t, form.New(cutReq(), form.Options{}), 0, lineTyped("v", "n"))
	if err != nil || a.Choice != form.DenyOnce {
		t.Fatalf("got %v, %v; transcript tail:\n%s", a.Choice, err, tail(out))
	}
	view, rest, _ := strings.Cut(out, "Answer [y/a/d/n/m/v/?]: ")
	if strings.Contains(view, "THE LAST LINE") || !strings.Contains(view, "  v  View the details in full\n") ||
		!strings.Contains(view, "WARNING: only the first 65536 of ") {
		t.Fatalf("the request view shows the whole detail or does not offer v:\n%s", tail(view))
	}
	for _, s := range []string{
		"Detail (agent's words), in full: big (all 1048599 characters)\n│ 0123456789abcde\n",
		"│ tail\\e[2J\n│ THE LAST LINE\nEnd of the detail big.\n",
		"Key facts:", "Answer [y/a/d/n/m/v/?]: ",
	} {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("after v, the transcript lacks %q (in order):\n%s", s, tail(rest))
		}
		rest = rest[i+len(s):]
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape reached the terminal")
	}
	_, out, _ = lineDrive(t, form.New(lineReq(), form.Options{}), 0, lineTyped("v", "n"))
	if strings.Contains(out, "View the details") || strings.Contains(out, "/v/") || !strings.Contains(out, "Type one of the keys listed") {
		t.Errorf("v offered or taken without a detail cut short:\n%s", out)
	}
}

// TestLineNewQuestionArmed: after v or ?, the question is new: a line
// right after it is discarded with the notice.
func TestLineNewQuestionArmed(t *testing.T) {
	t.Parallel()
	const arm = 200 * time.Millisecond
	for _, key := range []string{"v", "?", "m"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			steps := []lineStep{{after: 2 * arm, text: key + "\n"}, {after: arm / 5, text: "y\n"}, {after: 3 * arm, text: "n\n"}}
			if key == "m" {
				steps = append(steps, lineStep{after: arm / 5, text: "y\n"}, lineStep{after: 3 * arm, text: "n\n"})
			}
			p := newLinePrompt(&lineTerminal{steps: steps}, &out, arm)
			a, err := p.run(context.Background(), form.New(cutReq(), form.Options{}))
			if err != nil || a.Choice != form.DenyOnce {
				t.Fatalf("got %v, %v; want deny once; transcript:\n%s", a.Choice, err, tail(out.String()))
			}
			want := 1
			if key == "m" {
				want = 2 // the reason's question, then the choice again
			}
			if n := strings.Count(out.String(), earlyNotice); n != want {
				t.Errorf("%d notices, want %d; transcript:\n%s", n, want, tail(out.String()))
			}
		})
	}
}

// TestLineHeadlineFirst: the request opens with the question in one line,
// askperm's label at column 0 and a wrapped rest indented.
func TestLineHeadlineFirst(t *testing.T) {
	_, out, err := lineDrive(t, form.New(lineReq(), form.Options{}), 0, lineTyped("n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "\nRequest: "+lineHeadline+"\nTool: write_file\n") {
		t.Errorf("the request does not open with the headline:\n%s", out)
	}
	req := lineReq()
	req.Tool = "Answer [y/a/d/n/m/?]: y " + strings.Repeat("x", 30)
	var buf bytes.Buffer
	p := newLinePrompt(lineTyped("n"), &buf, 0)
	p.cols = func() int { return 30 }
	if _, err := p.run(context.Background(), form.New(req, form.Options{})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if want := []string{"", "Request: Answer [y/a/d/n/m/?]:", "    y xxxxxxxxxxxxxxxxxxxxxxxx", "    xxxxxx wants to write", "    /home/a/p/report.md"}; strings.Join(lines[:5], "\n") != strings.Join(want, "\n") {
		t.Errorf("headline laid out as\n%s\nwant\n%s", strings.Join(lines[:5], "\n"), strings.Join(want, "\n"))
	}
}

// TestLineTimeLeft: every question says how long is left before the
// deadline, counting down; without a deadline it says nothing.
func TestLineTimeLeft(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {0, "0s"}, {time.Millisecond, "1s"}, {59*time.Second + time.Millisecond, "1m"},
		{4*time.Minute + 52*time.Second, "4m52s"}, {4*time.Minute + 5*time.Second, "4m05s"}, {30 * time.Minute, "30m"},
		{time.Hour, "1h"}, {time.Hour + time.Second, "1h01m"}, {25*time.Hour + 30*time.Minute, "25h30m"},
	} {
		if got := formatLeft(tc.d); got != tc.want {
			t.Errorf("formatLeft(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second+500*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	steps := []lineStep{{after: 1200 * time.Millisecond, text: "a\n"}, {after: 1200 * time.Millisecond, text: "x\n"}, {text: "b\n"}, {text: "m\n"}, {text: "no\n"}, {text: "n\n"}}
	p := newLinePrompt(&lineTerminal{steps: steps}, &out, 0)
	p.cols = func() int { return flowColumns }
	if _, err := p.run(ctx, form.New(lineReq(), form.Options{})); err != nil {
		t.Fatalf("%v; transcript:\n%s", err, out.String())
	}
	rest := out.String()
	for _, s := range []string{"Answer [y/a/d/n/m/?] (4s left): ", "Grants [1-2] (3s left): ", "Grants [1-2] (2s left): ",
		"Answer [y/a/d/n/m/?] (2s left): ", "Denial reason (Enter alone clears it) (2s left): ", "Answer [y/a/d/n/m/?] (2s left): "} {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("transcript lacks %q (in order):\n%s", s, out.String())
		}
		rest = rest[i+len(s):]
	}
	_, out2, _ := lineDrive(t, form.New(lineReq(), form.Options{}), 0, lineTyped("a", "", "", "", "", "save"))
	if strings.Contains(out2, " left)") {
		t.Errorf("time left shown without a deadline:\n%s", out2)
	}
}

// TestLineClosingLine: however the prompt ends, its last line is
// prompt.ClosingLine's, on a line of its own.
func TestLineClosingLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    io.Reader
		ctx   time.Duration
		cols  []int
		want  string
		wantE error
	}{
		{"allowed", lineTyped("y"), 0, nil, ": askperm: allowed once: " + lineHeadline + "\n", nil},
		{"allowed always", lineTyped("a", "", "", "", "", "save"), 0, nil, ": askperm: allowed always: " + lineHeadline + "\n", nil},
		{"denied", lineTyped("n"), 0, nil, ": askperm: denied: " + lineHeadline + "\n", nil},
		{"denied always", lineTyped("d", "", "", "", "save"), 0, nil, ": askperm: denied always: " + lineHeadline + "\n", nil},
		{"three unknown lines", lineTyped("x", "x", "x"), 0, nil, "denying once.\naskperm: denied: " + lineHeadline + "\n", nil},
		{"EOF", lineTyped(), 0, nil, "]: \naskperm: denied: cancelled: " + lineHeadline + "\n", prompt.ErrCancelled},
		{"timed out", &lineTerminal{steps: []lineStep{{after: time.Hour}}}, 100 * time.Millisecond, nil,
			"left): \naskperm: denied: timed out: " + lineHeadline + "\n", context.DeadlineExceeded},
		{"narrowed", lineTyped("?", "y"), 0, []int{80, 80, minColumns - 1}, "\naskperm: denied:\n    cancelled:\n    write_file\n    wants to write\n    /home/a/p/repor\n    t.md\n", prompt.ErrCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			var out bytes.Buffer
			p := newLinePrompt(tc.in, &out, 0)
			if tc.cols != nil {
				cols := tc.cols
				p.cols = func() int {
					w := cols[0]
					if len(cols) > 1 {
						cols = cols[1:]
					}
					return w
				}
			}
			_, err := p.run(ctx, form.New(lineReq(), form.Options{}))
			if tc.wantE != nil && !errors.Is(err, tc.wantE) {
				t.Errorf("err = %v, want %v", err, tc.wantE)
			}
			if !strings.HasSuffix(out.String(), tc.want) {
				t.Errorf("transcript does not end with %q:\n%s", tc.want, tail(out.String()))
			}
		})
	}
}

// TestLineBell: with the bell configured the prompt opens with BEL, the
// one control character but newline it writes; without it, none.
func TestLineBell(t *testing.T) {
	for _, bell := range []bool{true, false} {
		var out bytes.Buffer
		p := newLinePrompt(lineTyped("?", "n"), &out, 0)
		p.bell = bell
		if _, err := p.run(context.Background(), form.New(lineReq(), form.Options{})); err != nil {
			t.Fatal(err)
		}
		if got := strings.HasPrefix(out.String(), "\a\nRequest: "); got != bell {
			t.Errorf("bell %v: transcript opens with %q", bell, out.String()[:12])
		}
		if n := strings.Count(out.String(), "\a"); n != map[bool]int{true: 1, false: 0}[bell] {
			t.Errorf("bell %v: %d bells", bell, n)
		}
	}
}

// tail is the end of a long transcript.
func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

package ask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askperm/askperm/answers"
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// fake is a frontend with a scripted outcome.
type fake struct {
	name   string
	answer form.Answer
	err    error
	block  bool // wait for ctx to end
	asked  *int
}

func (f fake) Name() string { return f.name }

func (f fake) Ask(ctx context.Context, _ *form.Form) (form.Answer, error) {
	if f.asked != nil {
		*f.asked++
	}
	if f.block {
		<-ctx.Done()
		return form.Answer{}, ctx.Err()
	}
	return f.answer, f.err
}

func request(t *testing.T, s string) *decision.Request {
	t.Helper()
	r, err := decision.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func options(chain ...prompt.Frontend) Options {
	return Options{Start: time.Now(), Chain: chain, Now: time.Now, Warn: func(string) {}}
}

func TestDecideMapsEveryFrontendOutcome(t *testing.T) {
	req := request(t, `{"action":"write","grants":[{"name":"g"}]}`)
	unavailable := fake{name: "tui", err: fmt.Errorf("no tty: %w", prompt.ErrUnavailable)}
	for _, tc := range []struct {
		name                      string
		chain                     []prompt.Frontend
		decision, cause, frontend string
		internal                  bool
	}{
		{"allow", []prompt.Frontend{fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}}}, "allow", "user", "tui", false},
		{"unavailable passes on", []prompt.Frontend{unavailable, fake{name: "line", answer: form.Answer{Choice: form.AllowOnce}}}, "allow", "user", "line", false},
		{"nobody", []prompt.Frontend{unavailable}, "deny", "unavailable", "none", false},
		{"empty chain", nil, "deny", "unavailable", "none", false},
		{"dismissed", []prompt.Frontend{fake{name: "yad", err: fmt.Errorf("escape: %w", prompt.ErrCancelled)}, fake{name: "zenity", answer: form.Answer{Choice: form.AllowOnce}}}, "deny", "cancelled", "yad", false},
		{"broken frontend", []prompt.Frontend{fake{name: "tui", err: errors.New("boom")}}, "deny", "error", "none", true},
		{"invalid answer", []prompt.Frontend{fake{name: "tui", answer: form.Answer{Choice: "allow"}}}, "deny", "error", "none", true},
	} {
		d, err := Decide(context.Background(), req, options(tc.chain...))
		if d.Decision != tc.decision || string(d.Cause) != tc.cause || d.Frontend != tc.frontend || (err != nil) != tc.internal {
			t.Errorf("%s: got %+v, %v", tc.name, d, err)
		}
	}
}

func TestDecideContextEnds(t *testing.T) {
	req := request(t, `{"action":"write"}`)
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, ErrTimeout)
		defer cancel()
		d, err := Decide(ctx, req, options(fake{name: "tui", block: true}))
		if err != nil || d.Decision != "deny" || d.Cause != decision.CauseTimeout || d.Frontend != "tui" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("signal", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(fmt.Errorf("signal %v", syscall.SIGTERM)) })
		d, err := Decide(ctx, req, options(fake{name: "line", block: true}))
		if err != nil || d.Decision != "deny" || d.Cause != decision.CauseCancelled || d.Frontend != "line" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("caller deadline of one second asks nobody", func(t *testing.T) {
		asked := 0
		d, err := Decide(context.Background(), request(t, `{"action":"x","timeout":1}`), options(fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}, asked: &asked}))
		if err != nil || d.Cause != decision.CauseTimeout || d.Frontend != "none" || asked != 0 {
			t.Errorf("got %+v, %v, asked %d", d, err, asked)
		}
	})
	t.Run("a huge caller deadline changes nothing", func(t *testing.T) {
		d, err := Decide(context.Background(), request(t, `{"action":"x","timeout":1e300}`), options(fake{name: "tui", answer: form.Answer{Choice: form.AllowOnce}}))
		if err != nil || d.Decision != "allow" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("caller deadline shortens ours", func(t *testing.T) {
		start := time.Now()
		d, _ := Decide(context.Background(), request(t, `{"action":"x","timeout":1.2}`), options(fake{name: "tui", block: true}))
		if d.Cause != decision.CauseTimeout || time.Since(start) > 2*time.Second {
			t.Errorf("got %+v after %v", d, time.Since(start))
		}
	})
}

func TestDecideCannedAnswers(t *testing.T) {
	req := request(t, `{"action":"write","tool":"write_file"}`)
	file, err := answers.Parse([]byte("[[answer]]\ntool = \"read_*\"\nchoice = \"allow-once\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	o := options(fake{name: "tui", answer: form.Answer{Choice: form.DenyOnce}, asked: &asked})
	o.Answers = file
	if d, err := Decide(context.Background(), req, o); err != nil || d.Frontend != "tui" || asked != 1 {
		t.Errorf("unmatched request was not asked: %+v, %v", d, err)
	}
	o.Strict = true
	if _, err := Decide(context.Background(), req, o); !errors.Is(err, ErrNoMatch) {
		t.Errorf("strict: got %v", err)
	}
	single, _ := answers.Single("allow-session", "")
	o.Single = &single
	if _, err := Decide(context.Background(), req, o); !errors.Is(err, ErrBadAnswer) || asked != 1 {
		t.Errorf("a choice not offered: got %v, asked %d", err, asked)
	}
	var warned []string
	single, _ = answers.Single("allow-once", "because")
	o.Single, o.Warn = &single, func(m string) { warned = append(warned, m) }
	d, err := Decide(context.Background(), req, o)
	if err != nil || d.Decision != "allow" || d.Message != "" || d.Frontend != "answers" || len(warned) != 1 {
		t.Errorf("got %+v, %v, warnings %q", d, err, warned)
	}
}

func TestReadRequest(t *testing.T) {
	b, err := ReadRequest(context.Background(), strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Errorf("got %q, %v", b, err)
	}
	if _, err := ReadRequest(context.Background(), strings.NewReader("123456"), 5); err == nil || !strings.Contains(err.Error(), "larger than 5 bytes") {
		t.Errorf("oversized: got %v", err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, ErrTimeout)
	defer cancel()
	if _, err := ReadRequest(ctx, pr, 5); !errors.Is(err, ErrTimeout) {
		t.Errorf("never closed: got %v", err)
	}
}

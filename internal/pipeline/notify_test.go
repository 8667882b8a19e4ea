package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/answers"
	"github.com/askperm/askperm/internal/notify"
	"github.com/askperm/askperm/internal/notify/notifytest"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/prompt"
)

// opening is a frontend that puts the form before a person (Opened),
// lets the notification be seen (seen), then answers.
type opening struct {
	name   decision.Frontend
	choice form.Choice
	seen   func(*form.Form)
}

func (o opening) Name() decision.Frontend { return o.name }

func (o opening) Ask(_ context.Context, f *form.Form) (form.Answer, error) {
	f.Opened(o.name)
	f.Opened(o.name) // a frontend opening twice still notifies once
	if o.seen != nil {
		o.seen(f)
	}
	return form.Answer{Choice: o.choice}, nil
}

// The notification program runs once per request a person is asked
// about, through whichever frontend, and never for one that policy,
// memory's rules, canned answers or nobody decide: over a generated mix
// of requests.
func TestNotifyOncePerPersonAsked(t *testing.T) {
	rec := notifytest.NewRecorder(t, notifytest.Dir(t))
	cfg := &notify.Config{Command: []string{rec.Program}, Host: "box"}
	canned, err := answers.Single("deny-once", "")
	if err != nil {
		t.Fatal(err)
	}
	unavailable := fake{name: "tui", err: fmt.Errorf("no tty: %w", prompt.ErrUnavailable)}
	rng := rand.New(rand.NewPCG(24, 3))
	want := 0
	for i := range 60 {
		c := Config{Notify: cfg}
		var chain []prompt.Frontend
		person := false
		by := []decision.Frontend{decision.FrontendTUI, decision.FrontendLine, decision.FrontendYad, decision.FrontendZenity, decision.FrontendTeam}[rng.IntN(5)]
		// seen waits for this request's call: a frontend answering before
		// its notification ran would end it.
		seen := func(f *form.Form) {
			calls := rec.WaitCalls(t, want)
			if len(calls) != want {
				t.Fatalf("request %d: %d calls, want %d", i, len(calls), want)
			}
		}
		switch kind := rng.IntN(6); kind {
		case 0:
			c.Policy = []Source{source(ruleAllow)}
		case 1:
			c.Policy = []Source{source(ruleDeny)}
		case 2:
			c.Policy = []Source{source([]policy.Opinion{ruleDeny, memoryDeny}[rng.IntN(2)], ruleAllow)}
		case 3:
			c.Answers = canned
		case 4:
			chain = []prompt.Frontend{unavailable, prompt.None{}}
		default:
			person = true
			if rng.IntN(2) == 0 {
				c.Policy = []Source{source(rulePrompt)}
			}
		}
		switch {
		case person:
			want++
			chain = []prompt.Frontend{unavailable, opening{name: by, choice: form.AllowOnce, seen: seen}}
		case chain == nil:
			chain = []prompt.Frontend{opening{name: by, choice: form.AllowOnce, seen: func(*form.Form) { t.Errorf("request %d asked", i) }}}
		}
		d, _ := decideRaw(t, context.Background(), pipe(c, chain...), fmt.Sprintf(`{"tool":"t%d","action":"write"}`, i))
		if asked := d.Frontend == by && d.Cause == decision.CauseUser; asked != person {
			t.Fatalf("request %d: %+v, a person asked: %v", i, d, person)
		}
		if calls := rec.Calls(t); len(calls) != want {
			t.Fatalf("after request %d: %d calls, want %d", i, len(calls), want)
		}
	}
	for _, c := range rec.Calls(t) {
		notifytest.OnlyNames(t, c, notify.Names())
		if c["ASKPERM_HOST"] != "box" || !strings.HasPrefix(c["ASKPERM_QUESTION"], "t") || c["ASKPERM_DEADLINE"] == "" {
			t.Errorf("environment: %v", c)
		}
	}
}

// marker is the text put in a request's free text, which no
// notification may carry.
const marker = "MARKER7f3c"

// markedRequest is a request whose every free text (reason, the
// action's description, details, arguments, the annotations' title,
// _meta) holds the marker, and whose headline does not.
func markedRequest(rng *rand.Rand) string {
	r := map[string]any{
		"tool":   fmt.Sprintf("tool_%d", rng.IntN(100)),
		"action": []string{"read", "write", "exec", "fetch"}[rng.IntN(4)],
	}
	pad := strings.Repeat("x", rng.IntN(300))
	at := func() string {
		switch rng.IntN(3) {
		case 0:
			return marker + pad
		case 1:
			return pad + marker
		}
		return pad + "\n" + marker + "\u202e"
	}
	free := []func(){
		func() { r["reason"] = at() },
		func() { r["action_description"] = at() },
		func() { r["details"] = []any{map[string]any{"label": "stdin", "text": at()}} },
		func() { r["arguments"] = map[string]any{"path": "/p", "content": at(), "n": []any{1, at()}} },
		func() { r["annotations"] = map[string]any{"title": at()} },
		func() { r["_meta"] = map[string]any{"note": at()} },
	}
	for _, i := range rng.Perm(len(free))[:1+rng.IntN(len(free))] {
		free[i]()
	}
	if rng.IntN(2) == 0 {
		r["dimensions"] = []any{map[string]any{"name": "path", "value": "/home/a/" + pad}}
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// A notification never carries the request's free text: over generated
// requests whose free text holds a marker, the marker is nowhere in the
// program's environment, and the question is the form's headline.
func TestNotifyNeverFreeText(t *testing.T) {
	rec := notifytest.NewRecorder(t, notifytest.Dir(t))
	cfg := &notify.Config{Command: []string{rec.Program}}
	rng := rand.New(rand.NewPCG(24, 4))
	headlines := map[string]bool{}
	for i := range 40 {
		seen := func(f *form.Form) {
			headlines[f.Headline()] = true
			if calls := rec.WaitCalls(t, i+1); len(calls) != i+1 {
				t.Fatalf("request %d: %d calls", i, len(calls))
			}
		}
		raw := markedRequest(rng)
		decideRaw(t, context.Background(), pipe(Config{Notify: cfg}, opening{name: decision.FrontendLine, choice: form.DenyOnce, seen: seen}), raw)
	}
	calls := rec.Calls(t)
	if len(calls) != 40 {
		t.Fatalf("%d calls", len(calls))
	}
	for _, c := range calls {
		for k, v := range c {
			if strings.Contains(v, marker) {
				t.Fatalf("%s carries the request's free text: %q", k, v)
			}
		}
		if !headlines[c["ASKPERM_QUESTION"]] {
			t.Errorf("ASKPERM_QUESTION %q is no request's headline", c["ASKPERM_QUESTION"])
		}
	}
}

// A notification program that hangs neither delays nor changes the
// decision, and is killed, with what it started, once the request is
// decided; one that cannot run is a warning, the decision the same.
func TestNotifyHangingOrMissing(t *testing.T) {
	dir := notifytest.Dir(t)
	h := notifytest.NewHanging(t, dir)
	var pids []int
	seen := func(*form.Form) { pids = h.Pids(t) }
	var w warnings
	p := pipe(Config{Notify: &notify.Config{Command: []string{h.Program}}, Warn: w.warn}, opening{name: decision.FrontendYad, choice: form.AllowOnce, seen: seen})
	d, err := decideRaw(t, context.Background(), p, `{"tool":"t","action":"read"}`)
	if err != nil || d.Decision != decision.Allow || d.Frontend != decision.FrontendYad {
		t.Fatalf("%+v, %v", d, err)
	}
	notifytest.WaitGone(t, pids)
	if w.all() != "" {
		t.Errorf("warned: %q", w.all())
	}

	p = pipe(Config{Notify: &notify.Config{Command: []string{dir + "/missing"}}, Warn: w.warn}, opening{name: decision.FrontendTUI, choice: form.DenyOnce})
	d, err = decideRaw(t, context.Background(), p, `{"tool":"t","action":"read"}`)
	if err != nil || d.Decision != decision.Deny || d.Cause != decision.CauseUser {
		t.Fatalf("%+v, %v", d, err)
	}
	if !strings.Contains(w.all(), "notify: ") || !strings.Contains(w.all(), "missing") {
		t.Errorf("warnings: %q", w.all())
	}
}

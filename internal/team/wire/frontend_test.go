package wire

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team/teamtest"
	"github.com/askperm/askperm/prompt"

	"github.com/askperm/askperm/internal/team"
)

// approverSide is what an approver's askperm does, in a test: it sets up
// the team's streams, reads the requests published, and writes answers.
type approverSide struct {
	t       *testing.T
	c       team.Config
	cons    jetstream.Consumer
	answers jetstream.KeyValue
	done    jetstream.KeyValue
}

func newApproverSide(t *testing.T, c team.Config) *approverSide {
	t.Helper()
	js := jetStream(t, c)
	ctx := context.Background()
	if err := EnsureStreams(ctx, js, c); err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, c.Names().RequestStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bind(ctx, js, c)
	if err != nil {
		t.Fatal(err)
	}
	return &approverSide{t: t, c: c, cons: cons, answers: b.Answers, done: b.Done}
}

// next is the next request published.
func (a *approverSide) next() Pending {
	a.t.Helper()
	msg, err := a.cons.Next(jetstream.FetchMaxWait(30 * time.Second))
	if err != nil {
		a.t.Fatal(err)
	}
	p, err := ParsePending(a.c.Names(), msg.Subject(), msg.Headers(), msg.Data())
	if err != nil {
		a.t.Fatal(err)
	}
	return p
}

// answer writes kp's signed answer fa to p.
func (a *approverSide) answer(kp nkeys.KeyPair, p Pending, fa form.Answer) decision.Decision {
	a.t.Helper()
	d := decide(a.t, p.Request, fa)
	if err := WriteAnswer(context.Background(), a.answers, p.Host, p.Ask, sign(a.t, kp, d, p)); err != nil {
		a.t.Fatal(err)
	}
	return d
}

// put writes value under key of the answers bucket, as a rogue could.
func (a *approverSide) put(key string, value []byte) {
	a.t.Helper()
	if _, err := a.answers.Create(context.Background(), key, value); err != nil {
		a.t.Fatal(err)
	}
}

// doneOf is how the host recorded p's end.
func (a *approverSide) doneOf(p Pending) team.Done {
	a.t.Helper()
	got, err := a.done.Get(context.Background(), team.DoneKey(p.Host, p.Ask))
	if err != nil {
		a.t.Fatalf("done %s: %v", team.DoneKey(p.Host, p.Ask), err)
	}
	var d team.Done
	if err := json.Unmarshal(got.Value(), &d); err != nil {
		a.t.Fatal(err)
	}
	return d
}

// noWarning fails t on anything said.
func noWarning(t *testing.T) func(string) {
	return func(s string) { t.Errorf("said: %s", s) }
}

type asked struct {
	a   form.Answer
	err error
}

// ask runs the frontend on the request raw in the background.
func ask(ctx context.Context, fe *team.Frontend, raw string) (*decision.Request, <-chan asked) {
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		panic(err)
	}
	ch := make(chan asked, 1)
	go func() {
		a, err := fe.Ask(ctx, form.New(req, form.Options{Sent: []byte(raw)}))
		ch <- asked{a, err}
	}()
	return req, ch
}

// requestN is testRequest with its own id: a request of its own.
func requestN(n int) string { return strings.Replace(testRequest, `"r1"`, fmt.Sprintf(`"r%d"`, n), 1) }

// warnings collects what the frontend says.
type warnings struct {
	mu    sync.Mutex
	lines []string
	ch    chan string
}

func newWarnings() *warnings { return &warnings{ch: make(chan string, 100)} }

func (w *warnings) warn(s string) {
	w.mu.Lock()
	w.lines = append(w.lines, s)
	w.mu.Unlock()
	w.ch <- s
}

func teamUp(t *testing.T, approvers ...nkeys.KeyPair) (*testServer, team.Config, *approverSide) {
	t.Helper()
	ts := startServer(t)
	c := validConfig()
	c.URL = ts.url()
	for _, kp := range approvers {
		c.Approvers = append(c.Approvers, team.PublicKey(kp))
	}
	return ts, c, newApproverSide(t, c)
}

// A request is published as sent and answered: allow once, deny with a
// message, allow always with the rule stage's answers; the frontend's
// answer gives the approver's decision again, by that approver, and the
// host records the request's end.
func TestAskAnswered(t *testing.T) {
	kp := userKey(t)
	_, c, side := teamUp(t, kp)
	fe := team.New(&c, noWarning(t))
	for i, fa := range []form.Answer{
		{Choice: form.AllowOnce},
		{Choice: form.DenyOnce, Message: "not before the release"},
		{Choice: form.AllowAlways, Grants: []string{"fs.create"}, Scopes: map[string]string{"path": "/p/"}, Lifetime: "900"},
		{Choice: form.DenyAlways, Message: "never", Scopes: map[string]string{"path": "/p/a"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		raw := requestN(i)
		req, res := ask(ctx, fe, raw)
		p := side.next()
		if p.Host != c.Host || p.Digest != req.SHA256 || string(p.Raw) != raw || !p.Deadline.After(time.Now()) {
			t.Fatalf("%s: published %+v", fa.Choice, p)
		}
		want := side.answer(kp, p, fa)
		r := <-res
		cancel()
		if r.err != nil {
			t.Fatalf("%s: %v", fa.Choice, r.err)
		}
		if r.a.Approver != team.PublicKey(kp) || r.a.Choice != fa.Choice || len(r.a.Ignored) != 0 {
			t.Errorf("%s: answer %+v", fa.Choice, r.a)
		}
		got, err := form.New(req, form.Options{}).Decide(r.a, decision.FrontendTeam, time.Unix(1_800_000_000, 0))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the host decides\n%+v, %v\nthe approver decided\n%+v", fa.Choice, got, err, want)
		}
		wantDone := team.Done{Outcome: want.Decision, Frontend: decision.FrontendTeam, Approver: team.PublicKey(kp), Cause: decision.CauseUser}
		if d := side.doneOf(p); d != wantDone {
			t.Errorf("%s: done %+v, want %+v", fa.Choice, d, wantDone)
		}
	}
}

// Forged answers are ignored, each said and listed, while the request
// keeps waiting; then a valid answer decides.
func TestAskIgnoresForgedAnswers(t *testing.T) {
	a, b, cc, d, e, f, rogue := userKey(t), userKey(t), userKey(t), userKey(t), userKey(t), userKey(t), userKey(t)
	_, c, side := teamUp(t, a, b, cc, d, e, f)
	w := newWarnings()
	fe := team.New(&c, w.warn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw := requestN(1)
	req, res := ask(ctx, fe, raw)
	p := side.next()
	key := func(kp nkeys.KeyPair) string { return team.AnswerKey(p.Host, p.Ask, team.PublicKey(kp)) }
	allow := decide(t, req, form.Answer{Choice: form.AllowOnce})
	widened := allow
	widened.Grants = append(append([]string{}, allow.Grants...), "fs.delete")
	other := decide(t, parse(t, requestN(2)), form.Answer{Choice: form.AllowOnce})
	badSig := sign(t, a, allow, p)
	badSig = []byte(strings.Replace(string(badSig), `"allow"`, `"deny"`, 1))

	forged := []struct {
		name, key string
		value     []byte
		want      string
	}{
		{"an unlisted key", key(rogue), sign(t, rogue, allow, p), "not one of this host's approvers"},
		{"a bad signature", key(a), badSig, "signature does not verify"},
		{"another request's decision", key(cc), sign(t, cc, other, p), "request_sha256"},
		{"a decision widening grants", key(d), sign(t, d, widened, p), `"fs.delete" was not requested`},
		{"a key that is not the value's approver", key(f), sign(t, e, allow, p), "not the key's"},
	}
	for _, fg := range forged {
		side.put(fg.key, fg.value)
		select {
		case line := <-w.ch:
			if !strings.Contains(line, fg.want) {
				t.Errorf("%s: said %q, want %q", fg.name, line, fg.want)
			}
		case r := <-res:
			t.Fatalf("%s decided: %+v, %v", fg.name, r.a, r.err)
		}
	}
	select {
	case r := <-res:
		t.Fatalf("the request stopped waiting after forged answers: %+v, %v", r.a, r.err)
	default:
	}
	side.answer(b, p, form.Answer{Choice: form.DenyOnce, Message: "b says no"})
	r := <-res
	if r.err != nil || r.a.Approver != team.PublicKey(b) || r.a.Choice != form.DenyOnce || r.a.Message != "b says no" {
		t.Fatalf("the valid answer: %+v, %v", r.a, r.err)
	}
	if len(r.a.Ignored) != len(forged) {
		t.Errorf("ignored %d answers, want %d: %q", len(r.a.Ignored), len(forged), r.a.Ignored)
	}
}

// A request nobody answers ends with its context, and its end is recorded
// as a deny by timeout.
func TestAskTimeout(t *testing.T) {
	_, c, side := teamUp(t, userKey(t))
	fe := team.New(&c, noWarning(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, res := ask(ctx, fe, requestN(1))
	p := side.next()
	r := <-res
	if !errors.Is(r.err, context.DeadlineExceeded) || r.a.Choice != "" {
		t.Fatalf("got %+v, %v; want the context's deadline", r.a, r.err)
	}
	want := team.Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseTimeout}
	if d := side.doneOf(p); d != want {
		t.Errorf("done %+v, want %+v", d, want)
	}
}

// A request whose caller goes away (a signal) is recorded as cancelled.
func TestAskCancelled(t *testing.T) {
	_, c, side := teamUp(t, userKey(t))
	fe := team.New(&c, noWarning(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	_, res := ask(ctx, fe, requestN(1))
	p := side.next()
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %+v, %v; want cancelled", r.a, r.err)
	}
	want := team.Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseCancelled}
	if d := side.doneOf(p); d != want {
		t.Errorf("done %+v, want %+v", d, want)
	}
}

// Team mode unavailable, for each reason, lets the chain ask the next
// frontend.
func TestAskUnavailable(t *testing.T) {
	k := team.PublicKey(userKey(t))
	ts := startServer(t) // up, but nobody set the streams up
	down := validConfig(k)
	down.URL = "nats://127.0.0.1:" + fmt.Sprint(freePort(t))
	notSetUp := validConfig(k)
	notSetUp.URL = ts.url()
	noApprovers := notSetUp
	noApprovers.Approvers = nil
	for _, tc := range []struct {
		name string
		c    *team.Config
		want string
	}{
		{"not configured", nil, "no [team]"},
		{"no approvers", &noApprovers, "approvers is empty"},
		{"server down", &down, "no servers available"},
		{"streams missing", &notSetUp, "run askperm-team setup once"},
		{"no request as sent", &notSetUp, "the request as sent is unknown"},
		{"another request sent", &notSetUp, "not the request asked about"},
	} {
		sent := []byte(testRequest)
		switch tc.name {
		case "no request as sent":
			sent = nil
		case "another request sent":
			sent = []byte(requestN(2))
		}
		next := &teamtest.Next{}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req := parse(t, testRequest)
		_, by, err := prompt.Ask(ctx, []prompt.Frontend{prompt.Unavailable(team.New(tc.c, noWarning(t)), team.ErrUnavailable), next}, form.New(req, form.Options{Sent: sent}))
		cancel()
		if err != nil || by != decision.FrontendLine || !next.Asked {
			t.Errorf("%s: %v by %s; the next frontend asked: %v", tc.name, err, by, next.Asked)
		}
		_, _, err = prompt.Ask(context.Background(), []prompt.Frontend{prompt.Unavailable(team.New(tc.c, nil), team.ErrUnavailable)}, form.New(req, form.Options{Sent: sent}))
		if !errors.Is(err, prompt.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s alone: %v, want unavailable: %q", tc.name, err, tc.want)
		}
	}
}

// The server restarted while a request waits: the host reconnects, watches
// again, and the answer written after the restart arrives.
func TestAskServerRestarted(t *testing.T) {
	kp := userKey(t)
	ts, c, side := teamUp(t, kp)
	fe := team.New(&c, noWarning(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, res := ask(ctx, fe, requestN(1))
	p := side.next()
	ts.stop()
	ts.start()
	// The approver's own connection comes back too; its answer may
	// fail while it does.
	for {
		d := decide(t, p.Request, form.Answer{Choice: form.AllowOnce})
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		err := WriteAnswer(wctx, side.answers, p.Host, p.Ask, sign(t, kp, d, p))
		wcancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the answer could not be written after the restart: %v", err)
		}
	}
	r := <-res
	if r.err != nil || r.a.Choice != form.AllowOnce || r.a.Approver != team.PublicKey(kp) {
		t.Fatalf("after the restart: %+v, %v", r.a, r.err)
	}
}

// Two identical calls asked at the same time are two asks: one approver's
// allow-once answer to one of them allows that call alone, the other
// keeps waiting (here, to its deadline: a deny).
func TestConcurrentIdenticalAsksEachTheirOwn(t *testing.T) {
	kp := userKey(t)
	_, c, side := teamUp(t, kp)
	fe := team.New(&c, func(string) {})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw := requestN(7)
	_, res1 := ask(ctx, fe, raw)
	_, res2 := ask(ctx, fe, raw)
	p1, p2 := side.next(), side.next()
	if p1.Ask == p2.Ask || p1.Digest != p2.Digest {
		t.Fatalf("two asks of one request: %s and %s", p1.ID(), p2.ID())
	}
	side.answer(kp, p1, form.Answer{Choice: form.AllowOnce})
	allowed := 0
	for _, r := range []asked{<-res1, <-res2} {
		switch {
		case r.err == nil && r.a.Choice == form.AllowOnce:
			allowed++
		case !errors.Is(r.err, context.DeadlineExceeded):
			t.Errorf("the unanswered call: %+v, %v", r.a, r.err)
		}
	}
	if allowed != 1 {
		t.Errorf("one allow-once answer allowed %d calls", allowed)
	}
}

// An answer to an earlier ask never decides a later one, done mark or
// none: the same request asked again waits for its own answer, even with
// the earlier answer's value written under its key.
func TestEarlierAnswerNeverDecidesAgain(t *testing.T) {
	kp := userKey(t)
	_, c, side := teamUp(t, kp)
	w := newWarnings()
	fe := team.New(&c, w.warn)
	raw := requestN(8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, res := ask(ctx, fe, raw)
	p := side.next()
	side.answer(kp, p, form.Answer{Choice: form.AllowOnce})
	if r := <-res; r.err != nil || r.a.Choice != form.AllowOnce {
		t.Fatalf("first: %+v, %v", r.a, r.err)
	}
	old, err := side.answers.Get(ctx, team.AnswerKey(p.Host, p.Ask, team.PublicKey(kp)))
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	_, res = ask(ctx2, fe, raw)
	p2 := side.next()
	if p2.Ask == p.Ask {
		t.Fatalf("asked again with the same ask id %s", p.Ask)
	}
	side.put(team.AnswerKey(p2.Host, p2.Ask, team.PublicKey(kp)), old.Value())
	select {
	case line := <-w.ch:
		if !strings.Contains(line, "signature does not verify") {
			t.Errorf("said %q", line)
		}
	case r := <-res:
		t.Fatalf("the earlier answer decided: %+v, %v", r.a, r.err)
	}
	if r := <-res; !errors.Is(r.err, context.DeadlineExceeded) || r.a.Choice != "" {
		t.Errorf("asked again: %+v, %v; want its deadline", r.a, r.err)
	}
}

package natstest_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/askperm/askperm/internal/team/natstest"
)

// team is a server running docs/team/nats.conf for hosts hosta and hostb and
// two approvers, its streams and buckets created by the first approver.
type team struct {
	hostA, hostB *client
	appr1, appr2 *client
	tm           *natstest.Team
	url          string
}

func startTeam(t *testing.T) *team {
	t.Helper()
	tm := natstest.NewTeam(t, []string{"hosta", "hostb"}, 2)
	srv := natstest.StartServer(t, tm)
	tt := &team{
		hostA: connect(t, tm.Hosts[0], srv.URL),
		hostB: connect(t, tm.Hosts[1], srv.URL),
		appr1: connect(t, tm.Approvers[0], srv.URL),
		appr2: connect(t, tm.Approvers[1], srv.URL),
	}
	tm.SetUp(t, srv.URL, 1)
	tt.tm, tt.url = tm, srv.URL
	return tt
}

// answerKey is the answers bucket key of an approver's answer to a host's
// request.
func answerKey(host, d string, approver *client) string {
	return host + "." + d + "." + approver.user.Public
}

func TestDocConfigRefusesToStartWithPlaceholders(t *testing.T) {
	opts, err := server.ProcessConfigFile(natstest.DocConfig())
	if err == nil {
		_, err = server.NewServer(opts)
	}
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "nkey") {
		t.Fatalf("docs/team/nats.conf as shipped: %v, want a refused nkey", err)
	}
}

func TestHostPublishesItsRequestAndReadsItsAnswer(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	req := []byte(`{"id":"r1","tool":"write_file"}`)
	d := digest(req)

	if _, err := tt.hostA.publishRequest(ctx, "hosta", req); err != nil {
		t.Fatalf("host publishes its request: %v", err)
	}

	// The approver reads it from the requests stream.
	cons, err := tt.appr1.js.OrderedConsumer(ctx, reqStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("approver consumes requests: %v", err)
	}
	m, err := cons.Next(jetstream.FetchContext(ctx))
	if err != nil || string(m.Data()) != string(req) || m.Subject() != "askperm.req.hosta" {
		t.Fatalf("approver reads %v, %v", m, err)
	}

	// The host watches its answers; the approver's answer arrives.
	w, err := tt.hostA.kv(t, answersKV).Watch(ctx, "hosta.>")
	if err != nil {
		t.Fatalf("host watches its answers: %v", err)
	}
	defer func() { _ = w.Stop() }()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("no answer yet, got %s", e.Key())
	}
	key := answerKey("hosta", d, tt.appr1)
	if _, err := tt.appr1.kv(t, answersKV).Create(ctx, key, []byte(`{"answer":1}`)); err != nil {
		t.Fatalf("approver answers: %v", err)
	}
	if e := <-w.Updates(); e == nil || e.Key() != key {
		t.Fatalf("host sees %v, want %s", e, key)
	}
	if _, err := tt.appr1.kv(t, answersKV).Create(ctx, key, []byte(`{"answer":2}`)); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Fatalf("a second answer by the same approver: %v, want key exists", err)
	}
	if e, err := tt.hostA.kv(t, answersKV).Get(ctx, key); err != nil || string(e.Value()) != `{"answer":1}` {
		t.Fatalf("host gets its answer: %v", err)
	}

	// The host marks it done (once) and publishes its audit line; the
	// approver sees both.
	done := tt.hostA.kv(t, doneKV)
	if _, err := done.Create(ctx, "hosta."+d, []byte(`{"outcome":"allow"}`)); err != nil {
		t.Fatalf("host marks done: %v", err)
	}
	if _, err := done.Create(ctx, "hosta."+d, []byte(`{"outcome":"deny"}`)); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Fatalf("a second DONE: %v, want key exists", err)
	}
	if _, err := tt.hostA.js.Publish(ctx, "askperm.audit.hosta", []byte(`{"audit":1}`)); err != nil {
		t.Fatalf("host publishes its audit line: %v", err)
	}
	if e, err := tt.appr2.kv(t, doneKV).Get(ctx, "hosta."+d); err != nil || string(e.Value()) != `{"outcome":"allow"}` {
		t.Fatalf("approver reads DONE: %v", err)
	}
	dw, err := tt.appr2.kv(t, doneKV).WatchAll(ctx)
	if err != nil {
		t.Fatalf("approver watches DONE: %v", err)
	}
	defer func() { _ = dw.Stop() }()
	if e := <-dw.Updates(); e == nil || e.Key() != "hosta."+d {
		t.Fatalf("approver's DONE watch: %v", e)
	}
	audit, err := tt.appr2.js.OrderedConsumer(ctx, auditStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("approver reads audit: %v", err)
	}
	if m, err := audit.Next(jetstream.FetchContext(ctx)); err != nil || m.Subject() != "askperm.audit.hosta" {
		t.Fatalf("approver reads audit: %v, %v", m, err)
	}
}

func TestHostCannotReadAnotherHostsAnswers(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	key := answerKey("hostb", digest([]byte("b's request")), tt.appr1)
	if _, err := tt.appr1.kv(t, answersKV).Create(ctx, key, []byte(`{"answer":"b"}`)); err != nil {
		t.Fatal(err)
	}
	answers := tt.hostA.kv(t, answersKV)

	tt.hostA.denied(t, "$KV.ASKPERM_ANSWERS.hostb.>", func(ctx context.Context) error {
		_, err := answers.Watch(ctx, "hostb.>")
		return err
	})
	tt.hostA.denied(t, "$KV.ASKPERM_ANSWERS.>", func(ctx context.Context) error {
		_, err := answers.WatchAll(ctx)
		return err
	})
	tt.hostA.denied(t, "$JS.API.DIRECT.GET.KV_ASKPERM_ANSWERS.$KV.ASKPERM_ANSWERS.hostb.", func(ctx context.Context) error {
		_, err := answers.Get(ctx, key)
		return err
	})
	// A consumer whose filter is only in the request body, and the stream
	// message API, are refused as well.
	tt.hostA.denied(t, "$JS.API.CONSUMER.CREATE.KV_ASKPERM_ANSWERS.peek", func(ctx context.Context) error {
		_, err := tt.hostA.js.CreateConsumer(ctx, "KV_ASKPERM_ANSWERS", jetstream.ConsumerConfig{
			Name: "peek", FilterSubjects: []string{"$KV.ASKPERM_ANSWERS.hostb.>", "$KV.ASKPERM_ANSWERS.hosta.>"}})
		return err
	})
	tt.hostA.denied(t, "$JS.API.STREAM.MSG.GET.KV_ASKPERM_ANSWERS", func(ctx context.Context) error {
		_, err := tt.hostA.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_ASKPERM_ANSWERS",
			[]byte(`{"last_by_subj":"$KV.ASKPERM_ANSWERS.`+key+`"}`))
		return err
	})
	// Raw subscriptions on the bucket's subjects or another host's inbox.
	for _, subj := range []string{"$KV.ASKPERM_ANSWERS.>", "_INBOX_hostb.>", "askperm.req.hostb"} {
		tt.hostA.denied(t, subj, func(context.Context) error {
			_, err := tt.hostA.nc.SubscribeSync(subj)
			return err
		})
	}
}

func TestHostWritesNothingButItsOwnSubjects(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	d := digest([]byte("a's request"))
	a := tt.hostA

	a.denied(t, "$KV.ASKPERM_ANSWERS.hosta.", func(ctx context.Context) error {
		_, err := a.kv(t, answersKV).Create(ctx, answerKey("hosta", d, tt.appr1), []byte(`{"forged":true}`))
		return err
	})
	a.denied(t, "askperm.req.hostb", func(ctx context.Context) error {
		_, err := a.publishRequest(ctx, "hostb", []byte(`{"id":"as b"}`))
		return err
	})
	a.denied(t, "askperm.audit.hostb", func(ctx context.Context) error {
		_, err := a.js.Publish(ctx, "askperm.audit.hostb", []byte(`{}`))
		return err
	})
	a.denied(t, "$KV.ASKPERM_DONE.hostb.", func(ctx context.Context) error {
		_, err := a.kv(t, doneKV).Create(ctx, "hostb."+d, []byte(`{"outcome":"deny"}`))
		return err
	})
	a.denied(t, "$KV.ASKPERM_RULES.", func(ctx context.Context) error {
		_, err := a.kv(t, rulesKV).Put(ctx, tt.appr1.user.Public+".r1", []byte(`{}`))
		return err
	})
	a.denied(t, "$JS.API.STREAM.DELETE.ASKPERM_REQ", func(ctx context.Context) error {
		return a.js.DeleteStream(ctx, reqStream)
	})
	a.denied(t, "$JS.API.STREAM.CREATE.ASKPERM_X", func(ctx context.Context) error {
		_, err := a.js.CreateStream(ctx, jetstream.StreamConfig{Name: "ASKPERM_X", Subjects: []string{"x.>"}})
		return err
	})
	a.denied(t, "$JS.API.STREAM.PURGE.KV_ASKPERM_ANSWERS", func(ctx context.Context) error {
		s, err := a.js.Stream(ctx, "KV_"+answersKV)
		if err != nil {
			return err
		}
		return s.Purge(ctx)
	})
	for stream, want := range map[string]uint64{reqStream: 0, auditStream: 0,
		"KV_" + answersKV: 0, "KV_" + doneKV: 0, "KV_" + rulesKV: 0} {
		if n := tt.appr1.msgs(t, stream); n != want {
			t.Errorf("%s holds %d messages after refused writes", stream, n)
		}
	}

	// Its own subjects, for contrast.
	if _, err := a.publishRequest(ctx, "hosta", []byte(`{"id":"mine"}`)); err != nil {
		t.Fatal(err)
	}
	if n := tt.appr1.msgs(t, reqStream); n != 1 {
		t.Fatalf("requests stream holds %d", n)
	}
}

func TestHostReadsTeamRules(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	key := tt.appr1.user.Public + ".rule1"
	if _, err := tt.appr1.kv(t, rulesKV).Put(ctx, key, []byte(`{"rule":1}`)); err != nil {
		t.Fatalf("approver writes its rule: %v", err)
	}
	rules := tt.hostA.kv(t, rulesKV)
	if e, err := rules.Get(ctx, key); err != nil || string(e.Value()) != `{"rule":1}` {
		t.Fatalf("host gets the rule: %v", err)
	}
	keys, err := rules.ListKeys(ctx)
	if err != nil {
		t.Fatalf("host lists rules: %v", err)
	}
	var got []string
	for k := range keys.Keys() {
		got = append(got, k)
	}
	if len(got) != 1 || got[0] != key {
		t.Fatalf("host lists %v", got)
	}
}

func TestApproverWritesOnlyUnderItsKey(t *testing.T) {
	tt := startTeam(t)
	ctx := testContext(t)
	d := digest([]byte("a's request"))
	ap := tt.appr1
	answers := ap.kv(t, answersKV)
	rules := ap.kv(t, rulesKV)

	if _, err := answers.Create(ctx, answerKey("hosta", d, ap), []byte(`{}`)); err != nil {
		t.Fatalf("own answer: %v", err)
	}
	if _, err := rules.Put(ctx, ap.user.Public+".r1", []byte(`{}`)); err != nil {
		t.Fatalf("own rule: %v", err)
	}
	if err := rules.Delete(ctx, ap.user.Public+".r1"); err != nil {
		t.Fatalf("forget own rule: %v", err)
	}
	other := tt.appr2.user.Public
	ap.denied(t, "$KV.ASKPERM_ANSWERS.hosta."+d+"."+other, func(ctx context.Context) error {
		_, err := answers.Create(ctx, answerKey("hosta", d, tt.appr2), []byte(`{"forged":true}`))
		return err
	})
	ap.denied(t, "$KV.ASKPERM_RULES."+other, func(ctx context.Context) error {
		_, err := rules.Put(ctx, other+".r1", []byte(`{}`))
		return err
	})
	ap.denied(t, "askperm.req.hosta", func(ctx context.Context) error {
		_, err := ap.publishRequest(ctx, "hosta", []byte(`{"id":"as host"}`))
		return err
	})
	ap.denied(t, "$KV.ASKPERM_DONE.hosta.", func(ctx context.Context) error {
		_, err := ap.kv(t, doneKV).Create(ctx, "hosta."+d, []byte(`{}`))
		return err
	})
	ap.denied(t, "askperm.audit.hosta", func(ctx context.Context) error {
		_, err := ap.js.Publish(ctx, "askperm.audit.hosta", []byte(`{}`))
		return err
	})
	// Approvers do not read answers (their own arrive through DONE) nor
	// anybody's inbox.
	ap.denied(t, "$KV.ASKPERM_ANSWERS.hosta.>", func(ctx context.Context) error {
		_, err := answers.Watch(ctx, "hosta.>")
		return err
	})
	ap.denied(t, "_INBOX_hosta.>", func(context.Context) error {
		_, err := ap.nc.SubscribeSync("_INBOX_hosta.>")
		return err
	})
	ap.denied(t, "$JS.API.STREAM.DELETE.ASKPERM_REQ", func(ctx context.Context) error {
		return ap.js.DeleteStream(ctx, reqStream)
	})
	ap.denied(t, "$JS.API.STREAM.PURGE.ASKPERM_REQ", func(ctx context.Context) error {
		s, err := ap.js.Stream(ctx, reqStream)
		if err != nil {
			return err
		}
		return s.Purge(ctx)
	})
	if n := ap.msgs(t, "KV_"+answersKV); n != 1 {
		t.Fatalf("answers bucket holds %d messages, want the one allowed", n)
	}
	if n := ap.msgs(t, reqStream); n != 0 {
		t.Fatalf("requests stream holds %d", n)
	}
}

// A host or approver may publish only on the subjects docs/team.md grants
// it. Subjects generated over the team's names (known and unknown hosts and
// keys, extra tokens, other inboxes) are published by a host and an
// approver, and the server's verdict is compared with the table's.
func TestRawPublishFollowsTheTable(t *testing.T) {
	tt := startTeam(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	k1, k2 := tt.appr1.user.Public, tt.appr2.user.Public
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	host := func() string { return pick("hosta", "hostb", "hostc", "hosta-x") }
	key := func() string { return pick(k1, k2, natstest.NewTeam(t, nil, 1).Approvers[0].Public) }
	tail := func() string { return pick("", "", ".x", ".x.y") }
	d := digest([]byte("x"))
	gen := []func() string{
		func() string { return "askperm.req." + host() + tail() },
		func() string { return "askperm.audit." + host() + tail() },
		func() string { return "$KV.ASKPERM_ANSWERS." + host() + "." + d + "." + key() + tail() },
		func() string { return "$KV.ASKPERM_DONE." + host() + "." + d + tail() },
		func() string { return "$KV.ASKPERM_RULES." + key() + ".r" + tail() },
		func() string { return "_INBOX_" + pick(host(), key()) + ".n" },
	}
	// The table of docs/team.md, for hosta and the first approver.
	may := map[*client]func(string) bool{
		tt.hostA: func(s string) bool {
			return s == "askperm.req.hosta" || s == "askperm.audit.hosta" ||
				strings.HasPrefix(s, "$KV.ASKPERM_DONE.hosta.")
		},
		tt.appr1: func(s string) bool {
			tok := strings.Split(s, ".")
			return len(tok) == 5 && tok[1] == "ASKPERM_ANSWERS" && tok[4] == k1 ||
				len(tok) >= 4 && tok[1] == "ASKPERM_RULES" && tok[2] == k1
		},
	}
	for range 60 {
		subj := gen[rng.IntN(len(gen))]()
		for c, allowed := range may {
			if got, want := publishAllowed(t, c, subj), allowed(subj); got != want {
				t.Errorf("%s publishing on %s: allowed %v, want %v", c.user, subj, got, want)
			}
		}
	}
}

// publishAllowed publishes a request on subj, whose subscriber the server
// is (a stream) or nobody; a refused publish is reported as a permission
// violation, an allowed one gets a reply or no responders.
func publishAllowed(t *testing.T, c *client, subj string) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	reply := make(chan error, 1)
	go func() {
		_, err := c.nc.RequestWithContext(ctx, subj, []byte(`{}`))
		reply <- err
	}()
	for {
		select {
		case err := <-reply:
			if errors.Is(err, context.Canceled) {
				continue
			}
			return err == nil || errors.Is(err, nats.ErrNoResponders)
		case err := <-c.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subj) {
				return false
			}
		case <-ctx.Done():
			t.Fatalf("%s on %s: neither reply nor violation", c.user, subj)
		}
	}
}

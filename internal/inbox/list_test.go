package inbox

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team/wire"
)

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

// pending is a request with id on host h, published at t0+at, ending at
// t0+deadline.
func pending(tb testing.TB, h, id string, deadline time.Duration) wire.Pending {
	tb.Helper()
	raw := fmt.Appendf(nil, `{"id":%q,"tool":"write_file","action":"write","session_id":"s-%s",
		"dimensions":[{"name":"path","value":"/home/a/%s","scopes":[{"label":"this file","match":"/home/a/%s","kind":"exact"}]}]}`, id, id, id, id)
	req, err := decision.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return wire.Pending{Host: h, Ask: req.SHA256[:32], Digest: req.SHA256, Raw: raw, Request: req, Deadline: t0.Add(deadline)}
}

// added says whether List.Add added the request.
func added(ok bool, err error) bool { return ok && err == nil }

func ids(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Host+"/"+*e.Request.ID)
	}
	return out
}

func TestListNewestLastAndRemovals(t *testing.T) {
	l := NewList()
	a, b, c := pending(t, "alpha", "a", time.Minute), pending(t, "beta", "b", 2*time.Minute), pending(t, "alpha", "c", 30*time.Second)
	l.Add(b, t0.Add(2*time.Second), t0)
	l.Add(a, t0.Add(1*time.Second), t0)
	l.Add(c, t0.Add(3*time.Second), t0)
	if got, want := ids(l.Pending()), []string{"alpha/a", "beta/b", "alpha/c"}; !slices.Equal(got, want) {
		t.Fatalf("pending %v, want %v (by publication, newest last)", got, want)
	}
	if added(l.Add(a, t0.Add(time.Second), t0)) {
		t.Error("a request seen twice was added twice")
	}

	l.Done("beta", b.Ask, t0)
	if got := ids(l.Pending()); !slices.Equal(got, []string{"alpha/a", "alpha/c"}) {
		t.Fatalf("after beta/b's done mark: %v", got)
	}
	if e, why := l.Get("beta", b.Ask); e != nil || why != Ended {
		t.Errorf("Get of a done request: %v, %v; want nil, Ended", e, why)
	}

	// c's deadline is the first: it expires alone, and the next deadline is a's.
	next := l.Expire(t0.Add(30 * time.Second))
	if got := ids(l.Pending()); !slices.Equal(got, []string{"alpha/a"}) || !next.Equal(a.Deadline) {
		t.Fatalf("after c's deadline: %v, next %v; want [alpha/a], %v", got, next, a.Deadline)
	}
	if _, why := l.Get("alpha", c.Ask); why != Expired {
		t.Errorf("Get of an expired request: %v, want Expired", why)
	}
	if _, why := l.Get("alpha", strings.Repeat("0", 32)); why != Unknown {
		t.Errorf("Get of an unknown ask: %v, want Unknown", why)
	}
	if next := l.Expire(t0.Add(time.Hour)); !next.IsZero() || l.Len() != 0 {
		t.Errorf("everything expired: next %v, %d left", next, l.Len())
	}
}

func TestListDoneBeforeTheRequestIsNeverListed(t *testing.T) {
	l := NewList()
	p := pending(t, "alpha", "a", time.Minute)
	l.Done("alpha", p.Ask, t0)
	if added(l.Add(p, t0, t0)) || l.Len() != 0 {
		t.Fatal("a request read after its done mark was listed")
	}
	// The same ask id from another host is another request.
	p.Host = "beta"
	if !added(l.Add(p, t0, t0)) {
		t.Fatal("beta's request was refused for alpha's done mark")
	}
	if e, _ := l.Get("beta", p.Ask); e == nil {
		t.Fatal("beta's request is not pending")
	}
}

func TestListRefusesAnExpiredRequest(t *testing.T) {
	l := NewList()
	p := pending(t, "alpha", "a", time.Minute)
	if added(l.Add(p, t0, p.Deadline)) {
		t.Fatal("a request whose deadline is now was listed")
	}
	if _, why := l.Get("alpha", p.Ask); why != Expired {
		t.Fatalf("why %v, want Expired", why)
	}
}

func TestListSignalsChanges(t *testing.T) {
	l := NewList()
	p := pending(t, "alpha", "a", time.Minute)
	for _, change := range []func(){
		func() { l.Add(p, t0, t0) },
		func() { l.Done("alpha", p.Ask, t0) },
	} {
		change()
		select {
		case <-l.Changed():
		default:
			t.Fatal("no change signalled")
		}
	}
	l.Done("alpha", p.Ask, t0) // nothing left to change
	select {
	case <-l.Changed():
		t.Fatal("a change signalled for nothing")
	default:
	}
}

// TestListProperty: whatever order requests, done marks and expiries come
// in, the list holds exactly the requests added, neither done nor past
// their deadline, oldest first.
func TestListProperty(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		l := NewList()
		type req struct {
			p         wire.Pending
			published time.Time
			added     bool
			done      bool
		}
		var reqs []*req
		for i := range 30 {
			reqs = append(reqs, &req{p: pending(t, []string{"alpha", "beta"}[rng.IntN(2)], fmt.Sprint(i), time.Duration(1+rng.IntN(60))*time.Second),
				published: t0.Add(time.Duration(rng.IntN(10)) * time.Second)})
		}
		now := t0
		for range 100 {
			r := reqs[rng.IntN(len(reqs))]
			switch rng.IntN(3) {
			case 0:
				l.Add(r.p, r.published, now)
				r.added = r.added || !r.done && r.p.Deadline.After(now)
			case 1:
				l.Done(r.p.Host, r.p.Ask, now)
				r.done = true
			case 2:
				now = now.Add(time.Duration(rng.IntN(5)) * time.Second)
				l.Expire(now)
			}
		}
		var want []*Entry
		for _, r := range reqs {
			if r.added && !r.done && r.p.Deadline.After(now) {
				want = append(want, &Entry{Pending: r.p, Published: r.published})
			}
		}
		slices.SortFunc(want, func(a, b *Entry) int {
			if c := a.Published.Compare(b.Published); c != 0 {
				return c
			}
			return strings.Compare(a.Host+a.Ask, b.Host+b.Ask)
		})
		if got := ids(l.Pending()); !slices.Equal(got, ids(want)) {
			t.Fatalf("seed %d: pending %v, want %v", seed, got, ids(want))
		}
	}
}

func TestListHoldsTenThousand(t *testing.T) {
	const n = 10_000
	l := NewList()
	ps := make([]wire.Pending, n)
	for i := range ps {
		ps[i] = pending(t, fmt.Sprintf("host%d", i%20), fmt.Sprint(i), time.Duration(n-i)*time.Second)
		if !added(l.Add(ps[i], t0.Add(time.Duration(i)*time.Millisecond), t0)) {
			t.Fatalf("request %d refused", i)
		}
	}
	got := l.Pending()
	if len(got) != n || *got[0].Request.ID != "0" || *got[n-1].Request.ID != fmt.Sprint(n-1) {
		t.Fatalf("%d pending, first %s, last %s", len(got), *got[0].Request.ID, *got[len(got)-1].Request.ID)
	}
	// The last published has the first deadline.
	if next := l.Expire(t0.Add(time.Second)); !next.Equal(t0.Add(2*time.Second)) || l.Len() != n-1 {
		t.Fatalf("after one expiry: next %v, %d left", next, l.Len())
	}
	for i := 0; i < n; i += 2 {
		l.Done(ps[i].Host, ps[i].Ask, t0)
	}
	if l.Len() != n/2-1 {
		t.Fatalf("%d left after half were done, want %d", l.Len(), n/2-1)
	}
}

func TestListIsCapped(t *testing.T) {
	l := NewList()
	for i := range MaxPending {
		if !added(l.Add(pending(t, fmt.Sprintf("host%d", i%20), fmt.Sprint(i), time.Hour), t0, t0)) {
			t.Fatalf("request %d refused", i)
		}
	}
	p := pending(t, "alpha", "one too many", time.Hour)
	if ok, err := l.Add(p, t0, t0); ok || !errors.Is(err, ErrFull) {
		t.Fatalf("request past the cap: %v, %v", ok, err)
	}
	// Once one leaves, there is room again.
	first := l.Pending()[0]
	l.Done(first.Host, first.Ask, t0)
	if !added(l.Add(p, t0, t0)) {
		t.Fatal("no room after a request left")
	}
}

// One host, however many requests it sends, with whatever deadline, holds
// at most its share of the list, and each of its requests at most the
// request stream's age: every other host's request is still listed, and
// the flood leaves when the stream would have dropped it.
func TestListOneHostCannotTakeIt(t *testing.T) {
	l := NewList()
	year3000 := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	refused := 0
	for i := range MaxPending {
		p := pending(t, "rogue", fmt.Sprint(i), 0)
		p.Deadline = year3000
		if ok, err := l.Add(p, t0, t0); !ok {
			if !errors.Is(err, ErrFull) {
				t.Fatalf("rogue %d: %v", i, err)
			}
			refused++
		}
	}
	if l.Len() > MaxPerHost || refused != MaxPending-l.Len() {
		t.Fatalf("one host holds %d requests (%d refused), more than its share %d", l.Len(), refused, MaxPerHost)
	}
	if e := l.Pending()[0]; !e.Deadline.Equal(t0.Add(wire.RequestsMaxAge)) {
		t.Errorf("a year-3000 deadline is listed as %v, not at most the stream's age %v", e.Deadline, t0.Add(wire.RequestsMaxAge))
	}
	later := t0.Add(time.Hour)
	if !added(l.Add(pending(t, "alpha", "real", 2*time.Hour), later, later)) {
		t.Error("another host's request is not listed")
	}
	l.Expire(t0.Add(wire.RequestsMaxAge))
	if got := ids(l.Pending()); !slices.Equal(got, nil) {
		t.Errorf("after the stream's age: %v", got)
	}
}

// A host's requests are capped by their size too: large requests fill
// its share of bytes before its share of requests.
func TestListCapsBytesPerHost(t *testing.T) {
	l := NewList()
	var dims []string
	for j := range 250 {
		dims = append(dims, fmt.Sprintf(`{"name":"d%d","value":"%s"}`, j, strings.Repeat("A", 4000)))
	}
	big := strings.Join(dims, ",")
	n, held := 0, 0
	for i := range MaxPerHost {
		raw := fmt.Appendf(nil, `{"id":"%d","tool":"t","action":"write","dimensions":[%s]}`, i, big)
		req, err := decision.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := l.Add(wire.Pending{Host: "rogue", Ask: req.SHA256[:32], Digest: req.SHA256, Raw: raw, Request: req, Deadline: t0.Add(time.Hour)}, t0, t0); !ok {
			break
		}
		n, held = n+1, held+2*len(raw)
	}
	if n == MaxPerHost || held > MaxBytesPerHost {
		t.Errorf("one host holds %d requests of 1 MB, %d bytes counted", n, held)
	}
}

// The ended requests remembered are capped, the oldest forgotten first,
// however many done marks arrive.
func TestListForgetsTheOldestEnded(t *testing.T) {
	l := NewList()
	for i := range maxEnded + 10 {
		l.Done("alpha", fmt.Sprintf("%032x", i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	if len(l.ended) != maxEnded || len(l.endedOrder) != maxEnded {
		t.Fatalf("%d ended remembered (%d noted), want %d", len(l.ended), len(l.endedOrder), maxEnded)
	}
	if _, why := l.Get("alpha", fmt.Sprintf("%032x", 0)); why != Unknown {
		t.Errorf("the oldest: %v, want forgotten", why)
	}
	if _, why := l.Get("alpha", fmt.Sprintf("%032x", maxEnded+9)); why != Ended {
		t.Errorf("the newest: %v, want Ended", why)
	}
}

// BenchmarkListMemory measures the memory each pending request costs,
// as the inbox holds it: its bytes as received, the request parsed once,
// and its entry in the list.
func BenchmarkListMemory(b *testing.B) {
	const n = 10_000
	raws := make([][]byte, n)
	for i := range raws {
		raws[i] = pending(b, "alpha", fmt.Sprint(i), time.Hour).Raw
	}
	var before, after runtime.MemStats
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		l := NewList()
		for i, raw := range raws {
			raw = slices.Clone(raw) // the message's buffer, kept
			req, err := decision.Parse(raw)
			if err != nil {
				b.Fatal(err)
			}
			l.Add(wire.Pending{Host: fmt.Sprintf("host%d", i%20), Ask: req.SHA256[:32], Digest: req.SHA256, Raw: raw, Request: req, Deadline: t0.Add(time.Hour)}, t0, t0)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/request")
		runtime.KeepAlive(l)
	}
}

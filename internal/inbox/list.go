// Package inbox is the approver's side of team mode (protocol section
// 11): the list of requests pending on the team's server, kept current
// from the requests stream and the done bucket, the full-screen list an
// approver picks from, and the signed answer written back. The request
// itself is asked in prompt/tui's two-stage form, with all of its
// protections; this package only chooses which request and where the
// answer goes.
package inbox

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/wire"
)

// Entry is one pending request.
type Entry struct {
	wire.Pending
	// Published is when the host published it (the stream's time).
	Published time.Time
	// Question is the request's one-line question (form's Headline),
	// rendered once: hostile text is escaped.
	Question string

	index int // in the list's deadline heap
}

// Gone says why a request is not pending.
type Gone int

// Why a request is not pending.
const (
	// Unknown: no such request was seen.
	Unknown Gone = iota
	// Ended: its host marked it done (answered, timed out, cancelled).
	Ended
	// Expired: its deadline passed.
	Expired
)

func (g Gone) String() string {
	switch g {
	case Ended:
		return "ended: answered or closed on its host"
	case Expired:
		return "expired: its deadline passed"
	}
	return "no such request is pending"
}

// List is the pending requests of a team: a request is pending from when
// it is seen on the requests stream until its host marks it done or its
// deadline passes. It is safe for concurrent use; Changed is signalled
// after every change.
type List struct {
	mu      sync.Mutex
	pending map[string]*Entry // by Pending.ID
	ended   map[string]ended  // requests that left, or were done before they were seen
	// endedOrder is the keys of ended in the order they were noted, the
	// oldest first, so that the oldest are forgotten first.
	endedOrder []noted
	byTime     deadlines
	// perHost is the count and bytes pending of each host.
	perHost map[string]*share
	bytes   int
	changed chan struct{}
	added   chan struct{} // as changed, for the expiry timer alone
}

// ended is why and since when a request is not pending.
type ended struct {
	why Gone
	at  time.Time
}

// noted is a key of ended, and when it was noted.
type noted struct {
	key string
	at  time.Time
}

// share is what one host holds of the list.
type share struct{ n, bytes int }

// keepEnded is how long the list remembers that a request ended: as long
// as the requests stream keeps a request, so that a request read after
// its done mark is never listed.
const keepEnded = wire.RequestsMaxAge

// maxEnded caps the ended requests remembered, the oldest forgotten
// first: a request forgotten and read again is listed until its
// deadline, and an answer to it decides nothing (its host is not
// waiting).
const maxEnded = 10 * MaxPending

// NewList returns an empty list.
func NewList() *List {
	return &List{pending: map[string]*Entry{}, ended: map[string]ended{}, perHost: map[string]*share{},
		changed: make(chan struct{}, 1), added: make(chan struct{}, 1)}
}

// Changed is signalled (without blocking, coalesced) whenever a request
// arrives or leaves.
func (l *List) Changed() <-chan struct{} { return l.changed }

func (l *List) signal() { notify(l.changed) }

// notify signals c without blocking: a signal pending is enough.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Limits of the list, so that no host, however many requests it sends
// or however large, can take the approver's memory or every other
// host's place: past them, a request is not listed (its host times it
// out, a deny).
const (
	// MaxPending caps the pending requests listed.
	MaxPending = 10_000
	// MaxPerHost caps one host's pending requests.
	MaxPerHost = 1_000
	// MaxBytes caps the size of the pending requests listed (each
	// counted twice: as sent and parsed), MaxBytesPerHost one host's.
	MaxBytes        = 1 << 30
	MaxBytesPerHost = 64 << 20
)

// ErrFull is a request not listed because the list, or its host's share
// of it, is full.
var ErrFull = errors.New("too many requests are pending: more are not listed until some leave (their hosts deny them at their deadline)")

// Add adds p, published at published, unless it ended before, its
// deadline is not after now, or it is already listed: then it returns
// false, nil. Its deadline is taken as at most published +
// wire.RequestsMaxAge, so that no deadline keeps it listed past the
// stream's keeping of it. A request not listed because the list or its
// host's share is full is ErrFull.
func (l *List) Add(p wire.Pending, published, now time.Time) (bool, error) {
	key := p.ID()
	if latest := published.Add(wire.RequestsMaxAge); p.Deadline.After(latest) {
		p.Deadline = latest
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.pending[key]; ok {
		return false, nil
	}
	if _, ok := l.ended[key]; ok {
		return false, nil
	}
	if !p.Deadline.After(now) {
		l.end(key, Expired, now)
		return false, nil
	}
	size := 2 * len(p.Raw)
	sh := l.perHost[p.Host]
	if sh == nil {
		sh = &share{}
	}
	if len(l.pending) >= MaxPending || l.bytes+size > MaxBytes || sh.n >= MaxPerHost || sh.bytes+size > MaxBytesPerHost {
		return false, fmt.Errorf("%s: %w", form.Line(p.Host), ErrFull)
	}
	e := &Entry{Pending: p, Published: published, Question: formOf(p.Request).Headline()}
	l.pending[key] = e
	sh.n, sh.bytes = sh.n+1, sh.bytes+size
	l.perHost[p.Host], l.bytes = sh, l.bytes+size
	heap.Push(&l.byTime, e)
	l.signal()
	notify(l.added)
	return true, nil
}

// end notes that key is not pending, and why; past maxEnded, the oldest
// noted is forgotten.
func (l *List) end(key string, why Gone, now time.Time) {
	l.ended[key] = ended{why, now}
	l.endedOrder = append(l.endedOrder, noted{key, now})
	for len(l.endedOrder) > maxEnded {
		l.forgetOldest()
	}
}

// forgetOldest forgets the oldest key noted, unless it was noted again
// since.
func (l *List) forgetOldest() {
	n := l.endedOrder[0]
	l.endedOrder = l.endedOrder[1:]
	if e, ok := l.ended[n.key]; ok && e.at.Equal(n.at) {
		delete(l.ended, n.key)
	}
}

// remove takes e off the list.
func (l *List) remove(key string, e *Entry) {
	delete(l.pending, key)
	sh := l.perHost[e.Host]
	sh.n, sh.bytes = sh.n-1, sh.bytes-2*len(e.Raw)
	l.bytes -= 2 * len(e.Raw)
	if sh.n == 0 {
		delete(l.perHost, e.Host)
	}
}

// Done records that ask of host ended there (seen at now); it leaves
// the list, or is never added.
func (l *List) Done(host, ask string, now time.Time) {
	key := team.AskID(host, ask)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.end(key, Ended, now)
	if e, ok := l.pending[key]; ok {
		heap.Remove(&l.byTime, e.index)
		l.remove(key, e)
		l.signal()
	}
}

// Expire removes every request whose deadline is not after now, forgets
// requests that ended more than keepEnded ago, and returns the next
// deadline (zero when nothing is pending).
func (l *List) Expire(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	removed := false
	for len(l.byTime) > 0 && !l.byTime[0].Deadline.After(now) {
		e := heap.Pop(&l.byTime).(*Entry)
		key := e.ID()
		l.remove(key, e)
		l.end(key, Expired, now)
		removed = true
	}
	for len(l.endedOrder) > 0 && now.Sub(l.endedOrder[0].at) > keepEnded {
		l.forgetOldest()
	}
	if removed {
		l.signal()
	}
	if len(l.byTime) == 0 {
		return time.Time{}
	}
	return l.byTime[0].Deadline
}

// Pending is the pending requests, oldest first (newest last), ties in
// host and ask order.
func (l *List) Pending() []*Entry {
	l.mu.Lock()
	out := make([]*Entry, 0, len(l.pending))
	for _, e := range l.pending {
		out = append(out, e)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b *Entry) int {
		if c := a.Published.Compare(b.Published); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Ask, b.Ask))
	})
	return out
}

// Len is the number of pending requests.
func (l *List) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// Get is ask of host, or why it is not pending.
func (l *List) Get(host, ask string) (*Entry, Gone) {
	key := team.AskID(host, ask)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.pending[key]; ok {
		return e, 0
	}
	return nil, l.ended[key].why
}

// deadlines is a heap of entries, the earliest deadline first.
type deadlines []*Entry

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].Deadline.Before(d[j].Deadline) }
func (d deadlines) Swap(i, j int) {
	d[i], d[j] = d[j], d[i]
	d[i].index, d[j].index = i, j
}
func (d *deadlines) Push(x any) {
	e := x.(*Entry)
	e.index = len(*d)
	*d = append(*d, e)
}
func (d *deadlines) Pop() any {
	old := *d
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*d = old[:len(old)-1]
	return e
}

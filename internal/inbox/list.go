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
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askperm/askperm/internal/team"
)

// Entry is one pending request.
type Entry struct {
	team.Pending
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
	pending map[string]*Entry // by team.DoneKey(host, digest)
	ended   map[string]ended  // requests that left, or were done before they were seen
	byTime  deadlines
	changed chan struct{}
	added   chan struct{} // as changed, for the expiry timer alone
}

// ended is why and since when a request is not pending.
type ended struct {
	why Gone
	at  time.Time
}

// keepEnded is how long the list remembers that a request ended: as long
// as the requests stream keeps a request, so that a request read after
// its done mark is never listed.
const keepEnded = 24 * time.Hour

// NewList returns an empty list.
func NewList() *List {
	return &List{pending: map[string]*Entry{}, ended: map[string]ended{}, changed: make(chan struct{}, 1), added: make(chan struct{}, 1)}
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

// MaxPending caps the pending requests listed: past it, a request is not
// listed (its host times it out, a deny), so that a flood of requests
// cannot exhaust the approver's memory.
const MaxPending = 10_000

// ErrFull is a request not listed because MaxPending are.
var ErrFull = fmt.Errorf("%d requests are pending: more are not listed until some leave (their hosts deny them at their deadline)", MaxPending)

// Add adds p, published at published, unless it ended before, its
// deadline is not after now, or it is already listed: then it returns
// false, nil. A request not listed because the list is full is ErrFull.
func (l *List) Add(p team.Pending, published, now time.Time) (bool, error) {
	key := team.DoneKey(p.Host, p.Digest)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.pending[key]; ok {
		return false, nil
	}
	if _, ok := l.ended[key]; ok {
		return false, nil
	}
	if !p.Deadline.After(now) {
		l.ended[key] = ended{Expired, now}
		return false, nil
	}
	if len(l.pending) >= MaxPending {
		return false, ErrFull
	}
	e := &Entry{Pending: p, Published: published, Question: formOf(p.Request).Headline()}
	l.pending[key] = e
	heap.Push(&l.byTime, e)
	l.signal()
	notify(l.added)
	return true, nil
}

// Done records that request digest of host ended there (seen at now);
// it leaves the list, or is never added.
func (l *List) Done(host, digest string, now time.Time) {
	key := team.DoneKey(host, digest)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended[key] = ended{Ended, now}
	if e, ok := l.pending[key]; ok {
		heap.Remove(&l.byTime, e.index)
		delete(l.pending, key)
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
		key := team.DoneKey(e.Host, e.Digest)
		delete(l.pending, key)
		l.ended[key] = ended{Expired, now}
		removed = true
	}
	for key, e := range l.ended {
		if now.Sub(e.at) > keepEnded {
			delete(l.ended, key)
		}
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
// host and digest order.
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
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Digest, b.Digest))
	})
	return out
}

// Len is the number of pending requests.
func (l *List) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// Get is request digest of host, or why it is not pending.
func (l *List) Get(host, digest string) (*Entry, Gone) {
	key := team.DoneKey(host, digest)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.pending[key]; ok {
		return e, 0
	}
	return nil, l.ended[key].why
}

// Find is the pending requests with digest, on any host, and when there
// is none, why (the first reason found that is not Unknown).
func (l *List) Find(digest string) ([]*Entry, Gone) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*Entry
	for _, e := range l.pending {
		if e.Digest == digest {
			out = append(out, e)
		}
	}
	if len(out) > 0 {
		slices.SortFunc(out, func(a, b *Entry) int { return cmp.Compare(a.Host, b.Host) })
		return out, Unknown
	}
	why := Unknown
	for key, e := range l.ended {
		if strings.HasSuffix(key, "."+digest) {
			why = max(why, e.why)
		}
	}
	return nil, why
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

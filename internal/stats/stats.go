// Package stats sums up the audit log: how often a person was asked,
// how often they approved and how long they took, per tool and per
// server, what decided the requests, and the denial breaker's stops.
package stats

import (
	"cmp"
	"slices"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// Stats are the figures of the audit log entries read.
type Stats struct {
	// From and To are the window: From the --since given, else the
	// first entry; To now. Days is its length in days, one at least.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Days float64   `json:"days"`
	// Decisions are the entries read.
	Decisions int `json:"decisions"`
	Figures
	// DecidedBy counts the decisions by what decided them: rules,
	// memory, person, answers (canned), reviewer, and for a deny nobody
	// gave, its cause (timeout, cancelled, unavailable, rate-limit,
	// error).
	DecidedBy map[string]int `json:"decided_by"`
	// Stops are the denies that tripped the denial breaker.
	Stops   int   `json:"breaker_stops"`
	Tools   []Row `json:"tools"`
	Servers []Row `json:"servers"`
}

// Figures are the prompts of a set of decisions.
type Figures struct {
	// Prompts are the decisions a person was asked for (their frontend
	// is one a person answers through), whoever ended them; PerDay is
	// Prompts over the window's days.
	Prompts int     `json:"prompts"`
	PerDay  float64 `json:"prompts_per_day"`
	// ByPerson are the prompts a person decided, Approved those they
	// allowed, Share Approved over ByPerson (0 without any).
	ByPerson int     `json:"by_person"`
	Approved int     `json:"approved"`
	Share    float64 `json:"approved_share"`
	// MedianMS and P90MS are the time a person took to decide, by the
	// nearest rank, of the decisions by a person: the line's asked_ms,
	// or latency_ms on a line written before asked_ms was kept.
	MedianMS int64 `json:"median_ms"`
	P90MS    int64 `json:"p90_ms"`
	took     []int64
}

// Row is the figures of one tool or one server ("" none).
type Row struct {
	Name string `json:"name"`
	Figures
}

// Counter sums up entries as they are read.
type Counter struct {
	s       Stats
	tools   map[string]*Row
	servers map[string]*Row
}

// New is a Counter over a window from since (zero: the first entry) to
// now.
func New(since, now time.Time) *Counter {
	return &Counter{s: Stats{From: since, To: now, DecidedBy: map[string]int{}}, tools: map[string]*Row{}, servers: map[string]*Row{}}
}

// Add counts e.
func (c *Counter) Add(e state.AuditEntry) {
	if c.s.From.IsZero() || e.Time.Before(c.s.From) {
		c.s.From = e.Time
	}
	c.s.Decisions++
	c.s.DecidedBy[DecidedBy(e)]++
	if e.Stop {
		c.s.Stops++
	}
	if !e.Asked() {
		return
	}
	for _, f := range []*Figures{&c.s.Figures, &row(c.tools, e.Tool).Figures, &row(c.servers, e.Server).Figures} {
		f.add(e)
	}
}

func row(rows map[string]*Row, name string) *Row {
	r, ok := rows[name]
	if !ok {
		r = &Row{Name: name}
		rows[name] = r
	}
	return r
}

func (f *Figures) add(e state.AuditEntry) {
	f.Prompts++
	if !e.ByPerson() {
		return
	}
	f.ByPerson++
	if e.Decision == decision.Allow {
		f.Approved++
	}
	took := e.LatencyMS
	if e.AskedMS != nil {
		took = *e.AskedMS
	}
	f.took = append(f.took, took)
}

// DecidedBy is what decided e: rules, memory, person, answers, another
// frontend that is not a person's (a reviewer), or the cause of a deny
// nobody gave.
func DecidedBy(e state.AuditEntry) string {
	switch {
	case e.ByPerson():
		return "person"
	case e.Cause == decision.CauseUser || e.Cause == decision.CauseRule || e.Cause == decision.CauseSession:
		return string(e.Frontend)
	}
	return string(e.Cause)
}

// Stats are the figures of what was added, the rows by prompts, most
// first, then by name.
func (c *Counter) Stats() Stats {
	s := c.s
	if s.From.IsZero() {
		s.From = s.To // nothing read, no window given
	}
	s.Days = max(1, s.To.Sub(s.From).Hours()/24)
	s.Figures.finish(s.Days)
	for _, rows := range []struct {
		m   map[string]*Row
		out *[]Row
	}{{c.tools, &s.Tools}, {c.servers, &s.Servers}} {
		*rows.out = []Row{}
		for _, r := range rows.m {
			r.finish(s.Days)
			*rows.out = append(*rows.out, *r)
		}
		slices.SortFunc(*rows.out, func(a, b Row) int { return cmp.Or(cmp.Compare(b.Prompts, a.Prompts), cmp.Compare(a.Name, b.Name)) })
	}
	return s
}

func (f *Figures) finish(days float64) {
	f.PerDay = float64(f.Prompts) / days
	if f.ByPerson > 0 {
		f.Share = float64(f.Approved) / float64(f.ByPerson)
	}
	slices.Sort(f.took)
	f.MedianMS, f.P90MS = Rank(f.took, 50), Rank(f.took, 90)
}

// Rank is the pct-th percentile of sorted by the nearest rank: the
// smallest value with at least pct percent of them at or below it; 0 of
// none. In integers, so that no rounding moves the rank.
func Rank(sorted []int64, pct int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(1, (pct*len(sorted)+99)/100)-1]
}

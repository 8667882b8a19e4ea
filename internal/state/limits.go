package state

import (
	"encoding/json"
	"fmt"
	"time"
)

// Buckets of the memory limits.
var (
	breakerBucket = []byte("breaker")
	promptsBucket = []byte("prompts")
)

// Breaker holds the denial breaker's thresholds (protocol section 9); a
// zero threshold is off.
type Breaker struct {
	Consecutive int // this many counted denials in a row trip it
	Window      int // over the last Window counted decisions,
	Within      int // this many denials trip it
}

// DefaultBreaker is the breaker unless configured.
var DefaultBreaker = Breaker{Consecutive: 3, Window: 50, Within: 10}

// breakerCounts are one session's counts.
type breakerCounts struct {
	Consecutive int    `json:"consecutive"`
	Recent      []bool `json:"recent"` // the last counted decisions, true for a denial
}

// CountDecision counts a decision of session (by a person or a canned
// answer, or a deny by timeout or cancellation) and reports whether it
// trips the breaker; then both counts start again. Requests without a
// session never trip it.
func (s *Store) CountDecision(session string, denied bool, b Breaker) (tripped bool, err error) {
	err = s.Do(func(tx *Tx) (err error) {
		tripped, err = tx.CountDecision(session, denied, b)
		return err
	})
	return tripped && err == nil, err
}

// CountDecision is Store.CountDecision in tx.
func (tx *Tx) CountDecision(session string, denied bool, b Breaker) (tripped bool, err error) {
	defer guard(&err)
	if session == "" {
		return false, nil
	}
	bk := tx.bucket(breakerBucket)
	var c breakerCounts
	if v := bk.Get([]byte(session)); v != nil {
		if err := json.Unmarshal(v, &c); err != nil {
			return false, fmt.Errorf("%w: breaker: %v", ErrCorrupt, err)
		}
	}
	if denied {
		c.Consecutive++
	} else {
		c.Consecutive = 0
	}
	if b.Window > 0 {
		c.Recent = append(c.Recent, denied)
		c.Recent = c.Recent[max(0, len(c.Recent)-b.Window):]
	}
	denials := 0
	for _, d := range c.Recent {
		if d {
			denials++
		}
	}
	tripped = denied && (b.Consecutive > 0 && c.Consecutive >= b.Consecutive || b.Within > 0 && denials >= b.Within)
	if tripped {
		c = breakerCounts{}
	}
	v, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	return tripped, tx.put(bk, []byte(session), v)
}

// TakePrompt takes one of the perMinute prompts that key (a session, or ""
// for the user's requests without one) may have in any sliding minute,
// and reports whether one was left. Zero perMinute is no limit.
func (s *Store) TakePrompt(key string, now time.Time, perMinute int) (bool, error) {
	ok := false
	err := s.Do(func(tx *Tx) (err error) {
		ok, err = tx.TakePrompt(key, now, perMinute)
		return err
	})
	return ok && err == nil, err
}

// TakePrompt is Store.TakePrompt in tx.
func (tx *Tx) TakePrompt(key string, now time.Time, perMinute int) (ok bool, err error) {
	defer guard(&err)
	if perMinute <= 0 {
		return true, nil
	}
	bk := tx.bucket(promptsBucket)
	k := []byte("session\x00" + key)
	var times []int64 // Unix nanoseconds of the prompts in the last minute
	if v := bk.Get(k); v != nil {
		if err := json.Unmarshal(v, &times); err != nil {
			return false, fmt.Errorf("%w: prompt rate: %v", ErrCorrupt, err)
		}
	}
	since := now.Add(-time.Minute).UnixNano()
	kept := times[:0]
	for _, t := range times {
		if t > since {
			kept = append(kept, t)
		}
	}
	if ok = len(kept) < perMinute; ok {
		kept = append(kept, now.UnixNano())
	}
	v, err := json.Marshal(kept)
	if err != nil {
		return false, err
	}
	return ok, tx.put(bk, k, v)
}

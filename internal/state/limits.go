package state

import (
	"encoding/json"
	"fmt"
)

// breakerBucket holds the denial breaker's counts (the prompt rate limit
// has a file of its own: PromptsFile).
var breakerBucket = []byte("breaker")

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

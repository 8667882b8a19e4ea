package state

import (
	"encoding/json"
	"fmt"
)

// breakerBucket holds the denial breaker's counts of each session,
// userBreakerBucket the user's over all sessions (the prompt rate limit
// has a file of its own: PromptsFile).
var (
	breakerBucket     = []byte("breaker")
	userBreakerBucket = []byte("breaker-user")
	userKey           = []byte("user")
)

// Thresholds trip the denial breaker (protocol section 9); a zero
// threshold is off.
type Thresholds struct {
	Consecutive int // this many counted denials in a row trip it
	Window      int // over the last Window counted decisions,
	Within      int // this many denials trip it
}

// Breaker holds the denial breaker's thresholds: per session, and per
// user over every session and the requests without one, so that a caller
// naming a new session for every request is stopped too.
type Breaker struct {
	Session, User Thresholds
}

// DefaultBreaker is the breaker unless configured. The user's thresholds
// are far above what one person's sessions reach together.
var DefaultBreaker = Breaker{
	Session: Thresholds{Consecutive: 3, Window: 50, Within: 10},
	User:    Thresholds{Consecutive: 10, Window: 100, Within: 30},
}

// breakerCounts are the counts of one session, or of the user.
type breakerCounts struct {
	Consecutive int    `json:"consecutive"`
	Recent      []bool `json:"recent"` // the last counted decisions, true for a denial
}

// count counts a decision and reports whether it trips t.
func (c *breakerCounts) count(denied bool, t Thresholds) bool {
	if denied {
		c.Consecutive++
	} else {
		c.Consecutive = 0
	}
	if t.Window > 0 {
		c.Recent = append(c.Recent, denied)
		c.Recent = c.Recent[max(0, len(c.Recent)-t.Window):]
	}
	denials := 0
	for _, d := range c.Recent {
		if d {
			denials++
		}
	}
	return denied && (t.Consecutive > 0 && c.Consecutive >= t.Consecutive || t.Within > 0 && denials >= t.Within)
}

// CountDecision is Store.CountDecision in tx.
func (tx *Tx) CountDecision(session string, denied bool, b Breaker) (tripped bool, err error) {
	defer guard(&err)
	user, err := tx.breakerCounts(userBreakerBucket, userKey)
	if err != nil {
		return false, err
	}
	tripped = user.count(denied, b.User)
	var sess breakerCounts
	if session != "" {
		if sess, err = tx.breakerCounts(breakerBucket, []byte(session)); err != nil {
			return false, err
		}
		tripped = sess.count(denied, b.Session) || tripped
	}
	if tripped {
		user, sess = breakerCounts{}, breakerCounts{}
	}
	if err := tx.putCounts(userBreakerBucket, userKey, user); err != nil || session == "" {
		return tripped, err
	}
	return tripped, tx.putCounts(breakerBucket, []byte(session), sess)
}

// breakerCounts reads the counts under key in bucket; none are zero.
func (tx *Tx) breakerCounts(bucket, key []byte) (breakerCounts, error) {
	var c breakerCounts
	if v := tx.bucket(bucket).Get(key); v != nil {
		if err := json.Unmarshal(v, &c); err != nil {
			return c, fmt.Errorf("%w: breaker: %v", ErrCorrupt, err)
		}
	}
	return c, nil
}

// putCounts writes the counts under key in bucket.
func (tx *Tx) putCounts(bucket, key []byte, c breakerCounts) error {
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return tx.put(tx.bucket(bucket), key, v)
}

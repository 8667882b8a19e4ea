package state

import (
	"time"

	"github.com/askperm/askperm/decision"
)

// The store's operations each in a transaction of its own, for tests: the
// pipeline runs them in one transaction per request (Store.Do).

// ApproveSession remembers req's exact call for its session.
func (s *Store) ApproveSession(req *decision.Request, now time.Time) error {
	sess, ok := SessionOf(req)
	if !ok {
		return errNoSession
	}
	return s.Do(func(tx *Tx) error { return tx.ApproveSession(sess, now) })
}

// SessionApproved reports whether req's exact call was approved for its
// session and used within idle of now; it then counts as used now. An
// approval idle for longer is removed.
func (s *Store) SessionApproved(req *decision.Request, now time.Time, idle time.Duration) (bool, error) {
	sess, ok := SessionOf(req)
	if !ok {
		return false, nil
	}
	approved := false
	err := s.Do(func(tx *Tx) (err error) {
		approved, err = tx.SessionApproved(sess, now, idle)
		return err
	})
	return approved && err == nil, err
}

// CountDecision counts a decision of session (by a person or a canned
// answer, or a deny by timeout or cancellation) and reports whether it
// trips the breaker, by the session's counts or the user's; then both
// start again. Requests without a session count for the user only.
func (s *Store) CountDecision(session string, denied bool, b Breaker) (tripped bool, err error) {
	err = s.Do(func(tx *Tx) (err error) {
		tripped, err = tx.CountDecision(session, denied, b)
		return err
	})
	return tripped && err == nil, err
}

// Remember stores r under a new ID and returns it.
func (s *Store) Remember(r Rule) (Rule, error) {
	err := s.Do(func(tx *Tx) (err error) {
		r, err = tx.Remember(r)
		return err
	})
	return r, err
}

// Covering returns the rules that decide req at now, and prunes expired
// ones.
func (s *Store) Covering(req *decision.Request, now time.Time) (rules []Match, err error) {
	err = s.Do(func(tx *Tx) (err error) {
		rules, err = tx.Covering(req, now)
		return err
	})
	return rules, err
}

// PeekSession is SessionApproved without using the approval: it writes
// nothing, so a test may look without changing what it looks at.
func (s *Store) PeekSession(req *decision.Request, now time.Time, idle time.Duration) (bool, error) {
	sess, ok := SessionOf(req)
	if !ok {
		return false, nil
	}
	found := false
	err := s.View(func(tx *Tx) (err error) {
		found, err = tx.SessionApproved(sess, now, idle)
		return err
	})
	return found, err
}

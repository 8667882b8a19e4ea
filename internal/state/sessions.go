package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// SessionApproval is an "allow for this session" of one exact call
// (protocol section 6): the call and all it showed, as
// decision.SessionApprovalOf binds them, and when it was last used.
type SessionApproval struct {
	Approval decision.Approval `json:"approval"`
	// Server is the call's server as the request named it, and Question
	// the one-line question the person approved (form's Headline,
	// rendered safe): what session list shows. Both are "" in approvals
	// recorded before they were kept; neither binds the approval.
	Server   string `json:"server,omitempty"`
	Question string `json:"question,omitempty"`
	Created  int64  `json:"created"`
	LastUsed int64  `json:"last_used"`
}

// idleExpired reports whether a went unused for longer than idle by now.
func (a SessionApproval) idleExpired(now time.Time, idle time.Duration) bool {
	return now.Sub(time.Unix(a.LastUsed, 0)) > idle
}

// Session is a request's binding for session memory (SessionOf): the
// approval it would be, and its key. The arguments' digest in it is the
// costly part: a request computes it once.
type Session struct {
	approval decision.Approval
	req      *decision.Request // for its server and question, when approved
	key      []byte
}

// SessionOf binds req for session memory (decision.SessionApprovalOf);
// false when req has no session or its arguments cannot be digested.
func SessionOf(req *decision.Request) (Session, bool) {
	a, err := decision.SessionApprovalOf(req)
	if err != nil {
		return Session{}, false
	}
	// One key per bound call: the session first, so that a session's
	// approvals sit together, then the digest of all the call showed.
	// The key only finds the approval; decision.Approval.SessionCovers
	// decides whether it covers the call.
	return Session{approval: a, req: req, key: []byte(a.SessionID + "\x00" + a.Shown)}, true
}

var errNoSession = errors.New("a request without session_id cannot be approved for its session")

// ApproveSession remembers the call bound by sess for its session.
func (tx *Tx) ApproveSession(sess Session, now time.Time) (err error) {
	defer guard(&err)
	if sess.key == nil {
		return errNoSession
	}
	v, err := json.Marshal(SessionApproval{Approval: sess.approval, Server: sess.req.Server, Question: form.New(sess.req, form.Options{}).Headline(),
		Created: now.Unix(), LastUsed: now.Unix()})
	if err != nil {
		return err
	}
	return tx.put(tx.bucket(sessionsBucket), sess.key, v)
}

// SessionApproved reports whether the call bound by sess was approved for
// its session and used within idle of now. In a read-write transaction
// it then counts as used now, and an approval idle for longer (or not
// covering the call) is removed; a read-only one changes nothing. The
// use is written only when it moves the approval's time, kept in seconds:
// twins approved in the same second cost no write.
func (tx *Tx) SessionApproved(sess Session, now time.Time, idle time.Duration) (approved bool, err error) {
	defer guard(&err)
	if sess.key == nil {
		return false, nil
	}
	b := tx.bucket(sessionsBucket)
	v := b.Get(sess.key)
	if v == nil {
		return false, nil
	}
	var a SessionApproval
	if err := json.Unmarshal(v, &a); err != nil {
		return false, fmt.Errorf("%w: session approval: %v", ErrCorrupt, err)
	}
	if a.idleExpired(now, idle) || !a.Approval.SessionCovers(sess.approval) {
		if !tx.tx.Writable() {
			return false, nil
		}
		return false, tx.del(b, sess.key)
	}
	if !tx.tx.Writable() || a.LastUsed == now.Unix() {
		return true, nil
	}
	a.LastUsed = now.Unix()
	if v, err = json.Marshal(a); err != nil {
		return false, err
	}
	return true, tx.put(b, sess.key, v)
}

// Sessions returns the session approvals in use at now, by session, after
// removing those idle for longer than idle.
func (s *Store) Sessions(now time.Time, idle time.Duration) ([]SessionApproval, error) {
	var out []SessionApproval
	err := s.EachSession(now, idle, func(a SessionApproval) error {
		out = append(out, a)
		return nil
	})
	return out, err
}

// EachSession calls each with the session approvals in use at now, by
// session, one at a time, removing those idle for longer than idle.
func (s *Store) EachSession(now time.Time, idle time.Duration, each func(SessionApproval) error) error {
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		idled, err := keysWhere(b, func(k, v []byte) (bool, error) {
			var a SessionApproval
			if err := json.Unmarshal(v, &a); err != nil {
				return false, fmt.Errorf("%w: session approval: %v", ErrCorrupt, err)
			}
			if a.idleExpired(now, idle) {
				return true, nil
			}
			return false, each(a)
		})
		return cmpErr(err, deleteKeys(b, idled))
	})
}

// ForgetSessions removes the approvals of session id, or of every session
// when id is "", and returns how many there were.
func (s *Store) ForgetSessions(id string) (int, error) {
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		keys, err := keysWhere(b, func(k, _ []byte) (bool, error) {
			return id == "" || bytes.HasPrefix(k, []byte(id+"\x00")), nil
		})
		n = len(keys)
		return cmpErr(err, deleteKeys(b, keys))
	})
	return n, err
}

package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/askperm/askperm/decision"
)

// SessionApproval is an "allow for this session" of one exact call
// (protocol section 5): the session, tool, source, argument digest and
// policy revision it binds, and when it was last used.
type SessionApproval struct {
	Approval decision.Approval `json:"approval"`
	Created  int64             `json:"created"`
	LastUsed int64             `json:"last_used"`
}

// idleExpired reports whether a went unused for longer than idle by now.
func (a SessionApproval) idleExpired(now time.Time, idle time.Duration) bool {
	return now.Sub(time.Unix(a.LastUsed, 0)) > idle
}

// sessionApproval binds req for session memory; false when req has no
// session or its arguments cannot be digested.
func sessionApproval(req *decision.Request) (decision.Approval, []byte, bool) {
	digest, err := decision.ArgumentsDigest(req.Arguments)
	if req.SessionID == "" || err != nil {
		return decision.Approval{}, nil, false
	}
	a := decision.Approval{SessionID: req.SessionID, Tool: req.Tool, Source: req.Source, PolicyRevision: req.PolicyRevision, ArgumentsSHA256: digest}
	// One key per bound call: the session first, so that a session's
	// approvals sit together; the rest hashed (each part length-prefixed
	// by JSON, so that no two calls share a key). Beside the protocol's
	// binding, the key holds what the person saw of the call (its action,
	// each dimension's value, the workdir): an approval never covers a
	// request that shows something else, even with the same arguments.
	parts := []string{a.Tool, a.Source, a.PolicyRevision, a.ArgumentsSHA256, req.Action}
	for _, d := range req.Dimensions {
		parts = append(parts, d.Name, d.Value)
	}
	if req.Workdir != nil {
		parts = append(parts, "workdir", req.Workdir.Value)
	}
	rest, _ := json.Marshal(parts)
	sum := sha256.Sum256(rest)
	return a, []byte(a.SessionID + "\x00" + hex.EncodeToString(sum[:])), true
}

// ApproveSession remembers req's exact call for its session.
func (s *Store) ApproveSession(req *decision.Request, now time.Time) error {
	a, key, ok := sessionApproval(req)
	if !ok {
		return fmt.Errorf("a request without session_id cannot be approved for its session")
	}
	v, err := json.Marshal(SessionApproval{Approval: a, Created: now.Unix(), LastUsed: now.Unix()})
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error { return tx.Bucket(sessionsBucket).Put(key, v) })
}

// SessionApproved reports whether req's exact call was approved for its
// session and used within idle of now; it then counts as used now. An
// approval idle for longer is removed.
func (s *Store) SessionApproved(req *decision.Request, now time.Time, idle time.Duration) (bool, error) {
	_, key, ok := sessionApproval(req)
	if !ok {
		return false, nil
	}
	if err := s.view(func(tx *bolt.Tx) error {
		if tx.Bucket(sessionsBucket).Get(key) == nil {
			key = nil // nothing to look at or to write
		}
		return nil
	}); err != nil || key == nil {
		return false, err
	}
	approved := false
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		v := b.Get(key)
		if v == nil {
			return nil
		}
		var a SessionApproval
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("%w: session approval: %v", ErrCorrupt, err)
		}
		if a.idleExpired(now, idle) || !a.Approval.SessionCovers(decision.CallOf(req)) {
			return b.Delete(key)
		}
		approved = true
		a.LastUsed = now.Unix()
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		return b.Put(key, v)
	})
	return approved, err
}

// PeekSession is SessionApproved without using the approval: it writes
// nothing (askperm check).
func (s *Store) PeekSession(req *decision.Request, now time.Time, idle time.Duration) (bool, error) {
	_, key, ok := sessionApproval(req)
	if !ok {
		return false, nil
	}
	found := false
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(sessionsBucket).Get(key)
		if v == nil {
			return nil
		}
		var a SessionApproval
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("%w: session approval: %v", ErrCorrupt, err)
		}
		found = !a.idleExpired(now, idle) && a.Approval.SessionCovers(decision.CallOf(req))
		return nil
	})
	return found, err
}

// Sessions returns the session approvals in use at now, by session, after
// removing those idle for longer than idle.
func (s *Store) Sessions(now time.Time, idle time.Duration) ([]SessionApproval, error) {
	var out []SessionApproval
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		idled, err := keysWhere(b, func(k, v []byte) (bool, error) {
			var a SessionApproval
			if err := json.Unmarshal(v, &a); err != nil {
				return false, fmt.Errorf("%w: session approval: %v", ErrCorrupt, err)
			}
			if a.idleExpired(now, idle) {
				return true, nil
			}
			out = append(out, a)
			return false, nil
		})
		return cmpErr(err, deleteKeys(b, idled))
	})
	return out, err
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

package decision

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
)

// Call is one tool call in its context.
type Call struct {
	SessionID, RunID, Tool, Source, PolicyRevision string
	Arguments                                      []byte // raw JSON, nil = absent
}

// CallOf returns the call a request describes.
func CallOf(r *Request) Call {
	return Call{
		SessionID:      r.SessionID,
		RunID:          r.RunID,
		Tool:           r.Tool,
		Source:         r.Source,
		PolicyRevision: r.PolicyRevision,
		Arguments:      r.Arguments,
	}
}

// Approval is the approval of one exact call (protocol.md section 5). It
// holds the arguments by digest, never by reference, so arguments changed in
// place after the approval are seen as changed.
type Approval struct {
	SessionID, RunID, Tool, Source, ArgumentsSHA256, PolicyRevision string
	// Shown binds a session approval (SessionApprovalOf) to everything
	// else the person was shown; "" in the approval of one call.
	Shown string `json:",omitempty"`
}

// ApprovalFor returns the approval of c. Absent arguments are bound as null;
// every other part of the context is required, since a missing field could
// never be matched safely.
func ApprovalFor(c Call) (Approval, error) {
	for _, f := range []struct{ name, value string }{
		{"session_id", c.SessionID},
		{"run_id", c.RunID},
		{"tool", c.Tool},
		{"source", c.Source},
		{"policy_revision", c.PolicyRevision},
	} {
		if f.value == "" {
			return Approval{}, fmt.Errorf("approval: %s is missing", f.name)
		}
	}
	digest, err := ArgumentsDigest(c.Arguments)
	if err != nil {
		return Approval{}, fmt.Errorf("approval: %w", err)
	}
	return Approval{
		SessionID:       c.SessionID,
		RunID:           c.RunID,
		Tool:            c.Tool,
		Source:          c.Source,
		ArgumentsSHA256: digest,
		PolicyRevision:  c.PolicyRevision,
	}, nil
}

// Covers reports whether c is exactly the approved call: same session, run,
// tool, source, policy revision and argument digest. A field missing from
// either side never matches, and arguments that cannot be digested are not
// covered.
func (a Approval) Covers(c Call) bool {
	for _, f := range [][2]string{
		{a.SessionID, c.SessionID},
		{a.RunID, c.RunID},
		{a.Tool, c.Tool},
		{a.Source, c.Source},
		{a.PolicyRevision, c.PolicyRevision},
	} {
		if f[0] == "" || f[0] != f[1] {
			return false
		}
	}
	return a.coversArguments(c)
}

// SessionApprovalOf is the binding of r for session memory (protocol.md
// section 6): the approval of its call without the run (a session approval
// spans the session's runs), and Shown, the digest of everything else the
// person was shown of the call. It fails without a session, or when the
// arguments cannot be digested.
func SessionApprovalOf(r *Request) (Approval, error) {
	if r.SessionID == "" {
		return Approval{}, fmt.Errorf("approval: session_id is missing")
	}
	digest, err := ArgumentsDigest(r.Arguments)
	if err != nil {
		return Approval{}, fmt.Errorf("approval: %w", err)
	}
	return Approval{
		SessionID:       r.SessionID,
		Tool:            r.Tool,
		Source:          r.Source,
		ArgumentsSHA256: digest,
		PolicyRevision:  r.PolicyRevision,
		Shown:           shownDigest(r, digest),
	}, nil
}

// SessionCovers is the session-memory rule, the only one: b, the binding
// of a later request (SessionApprovalOf), is covered by the session
// approval a when both are of the same session and bind the same call and
// the same shown facts. The session itself is required: an approval
// without one would cover every session-less request. A stored approval
// from before Shown existed covers nothing.
func (a Approval) SessionCovers(b Approval) bool {
	return a.SessionID != "" && a.Shown != "" &&
		a.SessionID == b.SessionID &&
		a.Tool == b.Tool &&
		a.Source == b.Source &&
		a.PolicyRevision == b.PolicyRevision &&
		a.ArgumentsSHA256 == b.ArgumentsSHA256 &&
		a.Shown == b.Shown
}

// shownDigest is the lowercase hex SHA-256 of every field of r a person is
// shown when asked, or that changes what the call does: server and alias,
// tool, source, action and its description, the stated reason, the role,
// the policy revision, each dimension (name, label, value, its path
// resolved, scopes and default), the workdir and its label, each grant with
// its description and what it implies, each detail, persistent, the
// annotations, and the arguments by their digest. Left out: the session
// (compared on its own), the run (a session approval spans runs), the id,
// the timeout and _meta, which no one is shown and which change nothing the
// call does. Each part is length-prefixed, so no two requests share a form.
func shownDigest(r *Request, argumentsSHA256 string) string {
	h := binder{sha256.New()}
	h.str(r.Server, r.Alias, r.Tool, r.Source, r.Action, r.ActionDescription, r.Reason, r.Role, r.PolicyRevision, argumentsSHA256)
	h.n(len(r.Dimensions))
	for _, d := range r.Dimensions {
		h.str(d.Name, d.Label, d.Value, d.Resolved, d.Anchored, string(d.Syntax), string(d.Shell))
		h.n(d.Default, len(d.Scopes))
		for _, s := range d.Scopes {
			h.str(s.Label, s.Match, string(s.Kind))
		}
	}
	h.present(r.Workdir != nil)
	if r.Workdir != nil {
		h.str(r.Workdir.Value, r.Workdir.Label)
	}
	h.n(len(r.Grants))
	for _, g := range r.Grants {
		h.str(g.Name, g.Description)
		h.n(len(g.Implies))
		h.str(g.Implies...)
	}
	h.n(len(r.Details))
	for _, d := range r.Details {
		h.str(d.Label, d.Text)
	}
	h.flag(r.Persistent)
	h.present(r.Annotations != nil)
	if a := r.Annotations; a != nil {
		h.str(a.Title)
		h.flag(a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// binder writes the parts of a binding into a hash, each one
// length-prefixed or of fixed size.
type binder struct{ hash.Hash }

func (b binder) str(ss ...string) {
	for _, s := range ss {
		b.n(len(s))
		b.Write([]byte(s))
	}
}

func (b binder) n(ns ...int) {
	for _, n := range ns {
		b.Write(binary.AppendUvarint(nil, uint64(n)))
	}
}

func (b binder) present(ok bool) { b.flag(&ok) }

// flag writes each optional boolean as absent, false or true.
func (b binder) flag(fs ...*bool) {
	for _, f := range fs {
		switch {
		case f == nil:
			b.n(0)
		case !*f:
			b.n(1)
		default:
			b.n(2)
		}
	}
}

func (a Approval) coversArguments(c Call) bool {
	digest, err := ArgumentsDigest(c.Arguments)
	return err == nil && digest == a.ArgumentsSHA256
}

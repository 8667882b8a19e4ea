package decision

import "fmt"

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

// SessionCovers is the session-memory binding: Covers without the run (a
// session approval spans the session's runs), where a tool, source or policy
// revision absent from both compares equal. The session itself is required:
// session memory exists only for requests with a session_id, and an approval
// without one would cover every session-less request.
func (a Approval) SessionCovers(c Call) bool {
	return a.SessionID != "" &&
		a.SessionID == c.SessionID &&
		a.Tool == c.Tool &&
		a.Source == c.Source &&
		a.PolicyRevision == c.PolicyRevision &&
		a.coversArguments(c)
}

func (a Approval) coversArguments(c Call) bool {
	digest, err := ArgumentsDigest(c.Arguments)
	return err == nil && digest == a.ArgumentsSHA256
}

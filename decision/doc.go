// Package decision is askperm's helper protocol (protocol.md) in Go, for
// both ends of the pipe.
//
// A caller (a runner, an MCP proxy, an agent hook adapter) fills a Request
// and gets the bytes for askperm's stdin from EncodeRequest, then reads
// askperm's whole stdout with ParseDecision:
//
//	b, sent, err := decision.EncodeRequest(&decision.Request{Tool: "write_file", Action: "write"})
//	// run askperm with b on its stdin; out is all of its stdout
//	d, err := decision.ParseDecision(out, sent)
//	if err != nil || exitStatus != 0 || d.Decision != decision.Allow {
//		// deny
//	}
//
// EncodeRequest checks its bytes with Parse, so a caller cannot send what
// askperm would refuse, and returns them parsed as sent, whose SHA256 the
// decision must echo. ParseDecision accepts one decision, on one line,
// that can answer sent (its id, digest, grants and rule); anything else is
// an error, which a caller must take for a deny.
//
// askperm itself reads the request with Parse and writes its answer with
// Encode; Denied is the deny-once decision of a timeout, a cancellation or
// a failure. Parse and ParseDecision are equally strict: duplicate or
// unknown names, wrong types, null, invalid UTF-8, a byte order mark or
// trailing data are an *Error naming the field, never guessed at.
//
// An approval binds to one exact call: ApprovalFor(CallOf(req)) records it,
// and Approval.Covers reports whether a later call is that call (same
// session, run, tool, source and policy revision, and the same arguments by
// ArgumentsDigest, however they are written). SessionApprovalOf and
// SessionCovers are session memory's binding, the only one: the call
// without its run, and everything else the person was shown.
// Scope.Covers reports whether a persistent rule's scope covers a later
// value, an absolute path in its one PathForm; Allows and Denies judge a
// dimension's value and its resolved path, narrowly for an allow (both)
// and widely for a deny (either). CompileGlob compiles a glob once for
// many values, for scopes of kind glob and the matchers of answers and
// rules files, and none of its wildcards ever matches one of
// CommandStarters.
// Request.Implications and WithImplied follow the grants' implies, which
// Parse has checked name other grants of the request.
//
// The package never touches a terminal, the disk or the clock: callers pass
// in bytes and times.
package decision

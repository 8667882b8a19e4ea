package team

import (
	"fmt"
	"strings"

	"github.com/nats-io/nkeys"
)

// Names are the streams, buckets, subjects and keys of one prefix (p,
// upper-cased P for streams and buckets). Every token in them is a host
// name, a digest or a public key: never request text.
type Names struct{ Prefix string }

// Names are c's names.
func (c Config) Names() Names { return Names{c.Prefix} }

func (n Names) upper() string { return strings.ToUpper(n.Prefix) }

// RequestStream is the stream of requests, P_REQ.
func (n Names) RequestStream() string { return n.upper() + "_REQ" }

// RequestSubjects are the subjects of RequestStream, p.req.*.
func (n Names) RequestSubjects() string { return n.Prefix + ".req.*" }

// RequestSubject is where host h publishes its requests, p.req.<h>.
func (n Names) RequestSubject(h string) string { return n.Prefix + ".req." + h }

// HostOfSubject is the host of a request subject, false for another
// subject.
func (n Names) HostOfSubject(subject string) (string, bool) {
	h, ok := strings.CutPrefix(subject, n.Prefix+".req.")
	return h, ok && CheckHost(h) == nil
}

// AnswersBucket is the KV bucket of answers, P_ANSWERS.
func (n Names) AnswersBucket() string { return n.upper() + "_ANSWERS" }

// DoneBucket is the KV bucket of ended requests, P_DONE.
func (n Names) DoneBucket() string { return n.upper() + "_DONE" }

// RulesBucket is the KV bucket of team rules, P_RULES.
func (n Names) RulesBucket() string { return n.upper() + "_RULES" }

// AuditStream is the stream of team decisions' audit lines, P_AUDIT.
func (n Names) AuditStream() string { return n.upper() + "_AUDIT" }

// AuditSubjects are the subjects of AuditStream, p.audit.*.
func (n Names) AuditSubjects() string { return n.Prefix + ".audit.*" }

// AuditSubject is where host h publishes its audit lines, p.audit.<h>.
func (n Names) AuditSubject(h string) string { return n.Prefix + ".audit." + h }

// Headers of a published request.
const (
	// HeaderMsgID is JetStream's deduplication id: the request's digest.
	HeaderMsgID = "Nats-Msg-Id"
	// HeaderDeadline is the host's deadline for the request, in Unix
	// milliseconds.
	HeaderDeadline = "Askperm-Deadline"
	// HeaderHost is the requesting host.
	HeaderHost = "Askperm-Host"
)

// AnswerKey is approver k's answer to request d of host h: <h>.<d>.<k>.
// The host comes first so that a host may be let read only its own
// answers, the approver last so that an approver may be let write only
// its own.
func AnswerKey(h, d, k string) string { return h + "." + d + "." + k }

// AnswerWatch is the key filter of every answer to request d of host h.
func AnswerWatch(h, d string) string { return h + "." + d + ".>" }

// DoneKey is the key of request d of host h in DoneBucket: <h>.<d>.
func DoneKey(h, d string) string { return h + "." + d }

// HostInbox is host h's reply subject prefix, so that permissions can
// keep each client to its own replies.
func HostInbox(h string) string { return "_INBOX_" + h }

// ApproverInbox is approver k's reply subject prefix: its whole public
// key, as the server's permissions (docs/team/nats.conf) name it.
func ApproverInbox(k string) string { return "_INBOX_" + k }

// CheckDigest checks a request digest: lowercase hex SHA-256.
func CheckDigest(d string) error {
	hex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
	if len(d) != 64 || !isToken(d, 64, hex) {
		return fmt.Errorf("%q is not a request digest (64 lowercase hex digits)", d)
	}
	return nil
}

// ParseAnswerKey splits an answer key into host, digest and approver,
// each checked.
func ParseAnswerKey(key string) (h, d, k string, err error) {
	parts := strings.Split(key, ".")
	if len(parts) != 3 {
		return "", "", "", fmt.Errorf("answer key %q is not <host>.<digest>.<approver>", key)
	}
	h, d, k = parts[0], parts[1], parts[2]
	switch {
	case CheckHost(h) != nil:
		return "", "", "", fmt.Errorf("answer key %q: %w", key, CheckHost(h))
	case CheckDigest(d) != nil:
		return "", "", "", fmt.Errorf("answer key %q: %w", key, CheckDigest(d))
	case !nkeys.IsValidPublicUserKey(k):
		return "", "", "", fmt.Errorf("answer key %q: %q is not an NKey user public key", key, k)
	}
	return h, d, k, nil
}

package team

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
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
	// HeaderMsgID is JetStream's deduplication id: MsgID(host, ask).
	HeaderMsgID = "Nats-Msg-Id"
	// HeaderDeadline is the host's deadline for the request, in Unix
	// milliseconds.
	HeaderDeadline = "Askperm-Deadline"
	// HeaderHost is the requesting host.
	HeaderHost = "Askperm-Host"
	// HeaderAsk is the ask id (NewAsk): this one asking of the request.
	HeaderAsk = "Askperm-Ask"
)

// NewAsk is a new ask id: 128 random bits in lowercase hex. The host
// makes one each time it asks the team, and answers are signed for it,
// so an answer decides that one asking only.
func NewAsk() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // it never fails (it crashes the program instead)
	return hex.EncodeToString(b[:])
}

// CheckAsk checks an ask id: 32 lowercase hex digits.
func CheckAsk(a string) error {
	if len(a) != 32 || !isToken(a, 32, isHex) {
		return fmt.Errorf("%q is not an ask id (32 lowercase hex digits)", a)
	}
	return nil
}

// AskID is the id of ask a of host h, <h>.<a>: its request's message
// id, its done key, the id inbox list and inbox answer give.
func AskID(h, a string) string { return h + "." + a }

// ParseAskID splits an AskID into host and ask, each checked.
func ParseAskID(id string) (h, a string, err error) {
	h, a, ok := strings.Cut(id, ".")
	switch {
	case !ok:
		return "", "", fmt.Errorf("%q is not <host>.<ask id>", id)
	case CheckHost(h) != nil:
		return "", "", fmt.Errorf("%q: %w", id, CheckHost(h))
	case CheckAsk(a) != nil:
		return "", "", fmt.Errorf("%q: %w", id, CheckAsk(a))
	}
	return h, a, nil
}

// AnswerKey is approver k's answer to ask a of host h: <h>.<a>.<k>.
// The host comes first so that a host may be let read only its own
// answers, the approver last so that an approver may be let write only
// its own.
func AnswerKey(h, a, k string) string { return AskID(h, a) + "." + k }

// AnswerWatch is the key filter of every answer to ask a of host h.
func AnswerWatch(h, a string) string { return AskID(h, a) + ".>" }

// DoneKey is the key of ask a of host h in DoneBucket: <h>.<a>.
func DoneKey(h, a string) string { return AskID(h, a) }

// HostInbox is host h's reply subject prefix, so that permissions can
// keep each client to its own replies.
func HostInbox(h string) string { return "_INBOX_" + h }

// ApproverInbox is approver k's reply subject prefix: its whole public
// key, as the server's permissions (docs/team/nats.conf) name it.
func ApproverInbox(k string) string { return "_INBOX_" + k }

// SetupInbox is the set-up user's reply subject prefix.
const SetupInbox = "_INBOX_setup"

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// CheckDigest checks a request digest: lowercase hex SHA-256.
func CheckDigest(d string) error {
	if len(d) != 64 || !isToken(d, 64, isHex) {
		return fmt.Errorf("%q is not a request digest (64 lowercase hex digits)", d)
	}
	return nil
}

// ParseAnswerKey splits an answer key into host, ask id and approver,
// each checked.
func ParseAnswerKey(key string) (h, a, k string, err error) {
	parts := strings.Split(key, ".")
	if len(parts) != 3 {
		return "", "", "", fmt.Errorf("answer key %q is not <host>.<ask id>.<approver>", key)
	}
	h, a, k = parts[0], parts[1], parts[2]
	switch {
	case CheckHost(h) != nil:
		return "", "", "", fmt.Errorf("answer key %q: %w", key, CheckHost(h))
	case CheckAsk(a) != nil:
		return "", "", "", fmt.Errorf("answer key %q: %w", key, CheckAsk(a))
	case !IsUserKey(k):
		return "", "", "", fmt.Errorf("answer key %q: %q is not an NKey user public key", key, k)
	}
	return h, a, k, nil
}

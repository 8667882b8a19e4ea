package team

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/askperm/askperm/decision"
)

// Answer is an approver's signed answer, the value of an answer key:
// Decision is the decision object (protocol section 4) the approver's
// askperm built for the request, Sig an Ed25519 signature by Approver's
// key over AnswerDomain and the RFC 8785 form of the answerStatement
// that binds it to one ask of one host, in unpadded base64url.
type Answer struct {
	Decision jsontext.Value `json:"decision"`
	Approver string         `json:"approver"`
	Sig      string         `json:"sig"`
}

// MaxAnswer caps an answer's size: a decision is a line of at most a few
// kilobytes per grant and scope.
const MaxAnswer = 1 << 20

// Signer is an approver's signing key: an nkeys.KeyPair of a user.
type Signer interface {
	PublicKey() (string, error)
	Sign(input []byte) ([]byte, error)
}

// PublicKey is kp's public key (U...).
func PublicKey(kp Signer) string {
	k, err := kp.PublicKey()
	if err != nil {
		panic("team: a key pair without a public key: " + err.Error()) // every user key pair has one
	}
	return k
}

// answerStatement is what an answer's signature covers: the decision, for ask
// Ask of host Host. An answer thus decides that one asking only: not
// the same request asked again or at the same time (another ask id),
// not another host's.
type answerStatement struct {
	Decision jsontext.Value `json:"decision"`
	Host     string         `json:"host"`
	Ask      string         `json:"ask"`
}

// AnswerDomain and RuleDomain start the bytes an answer's and a team
// rule's signatures cover, so that the approver's key, which also signs
// the server's nonce at login, signs nothing that means one where the
// other is expected: no nonce starts so (wire refuses any but
// nats-server's), and an answer is no rule.
const (
	AnswerDomain = "askperm team answer v1\n"
	RuleDomain   = "askperm team rule v1\n"
)

// domainSigned is domain followed by canon, the bytes a signature covers.
func domainSigned(domain string, canon []byte) []byte {
	return append([]byte(domain), canon...)
}

// signedBytes is what an answer's signature covers: AnswerDomain and the
// RFC 8785 form of answerStatement{canon, h, a}, canon being a decision
// in its RFC 8785 form.
func signedBytes(canon []byte, h, a string) ([]byte, error) {
	b, err := json.Marshal(answerStatement{Decision: canon, Host: h, Ask: a})
	if err != nil {
		return nil, err
	}
	st, err := decision.Canonical(b)
	if err != nil {
		return nil, err
	}
	return domainSigned(AnswerDomain, st), nil
}

// Sign is the answer, encoded, that kp gives with decision d to ask a of
// host h. An approver builds d with form.Decide(answer,
// decision.FrontendTeam, now).
func Sign(kp Signer, d decision.Decision, h, a string) ([]byte, error) {
	line := decision.Encode(d)
	canon, err := decision.Canonical(line[:len(line)-1])
	if err != nil {
		return nil, err
	}
	signed, err := signedBytes(canon, h, a)
	if err != nil {
		return nil, err
	}
	sig, err := kp.Sign(signed)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Answer{Decision: canon, Approver: PublicKey(kp), Sig: base64.RawURLEncoding.EncodeToString(sig)})
}

// errSignature is a signature that does not verify.
var errSignature = errors.New("signature verification failed")

// Verified is an answer that passed every check of Verify.
type Verified struct {
	Decision decision.Decision
	Approver string
}

// Verify checks the answer value found under key of the answers bucket
// against the request sent (as Parse or EncodeRequest returned it) by
// host c.Host in its ask ask, and returns its decision. Every check must
// pass, else the answer is to be ignored and the wait goes on:
//   - the key is <c.Host>.<ask>.<approver> and names the approver the
//     value names;
//   - the approver is one of c.Approvers;
//   - the signature verifies over AnswerDomain and the canonical
//     answerStatement of the decision, c.Host and ask;
//   - the decision passes decision.ParseDecision for sent (id and digest
//     echoed, grants, scopes, fields that go together);
//   - it is a person's answer (cause user), never a session approval
//     (a session lives in one host's memory, not the team's).
func Verify(c Config, ask, key string, value []byte, sent *decision.Request) (Verified, error) {
	h, keyAsk, k, err := ParseAnswerKey(key)
	if err != nil {
		return Verified{}, err
	}
	switch {
	case h != c.Host:
		return Verified{}, fmt.Errorf("answer key %q is for host %q, not this host %q", key, h, c.Host)
	case keyAsk != ask:
		return Verified{}, fmt.Errorf("answer key %q is for ask %s, not %s", key, keyAsk, ask)
	case len(value) > MaxAnswer:
		return Verified{}, fmt.Errorf("answer %q: larger than %d bytes", key, MaxAnswer)
	}
	var a Answer
	if err := json.Unmarshal(value, &a, json.RejectUnknownMembers(true)); err != nil {
		return Verified{}, fmt.Errorf("answer %q: %w", key, err)
	}
	switch {
	case a.Approver != k:
		return Verified{}, fmt.Errorf("answer %q: signed as approver %q, not the key's %q", key, a.Approver, k)
	case !c.Trusts(k):
		return Verified{}, fmt.Errorf("answer %q: approver %s is not one of this host's approvers", key, k)
	case len(a.Decision) == 0:
		return Verified{}, fmt.Errorf("answer %q: no decision", key)
	}
	sig, err := base64.RawURLEncoding.DecodeString(a.Sig)
	if err != nil {
		return Verified{}, fmt.Errorf("answer %q: sig: %w", key, err)
	}
	canon, err := decision.Canonical(a.Decision)
	if err != nil {
		return Verified{}, fmt.Errorf("answer %q: decision: %w", key, err)
	}
	pub, ok := userPublicKey(k)
	if !ok { // ParseAnswerKey checked it
		return Verified{}, fmt.Errorf("answer %q: %q is not an NKey user public key", key, k)
	}
	signed, err := signedBytes(canon, h, ask)
	if err != nil {
		return Verified{}, fmt.Errorf("answer %q: %w", key, err)
	}
	if !ed25519.Verify(pub, signed, sig) {
		return Verified{}, fmt.Errorf("answer %q: the signature does not verify: %w", key, errSignature)
	}
	dec, err := decision.ParseDecision(append(canon, '\n'), sent)
	if err != nil {
		return Verified{}, fmt.Errorf("answer %q: %w", key, err)
	}
	switch {
	case dec.Cause != decision.CauseUser:
		return Verified{}, fmt.Errorf("answer %q: cause %q, not a person's answer (%q)", key, dec.Cause, decision.CauseUser)
	case dec.Persist == decision.PersistSession:
		return Verified{}, fmt.Errorf("answer %q: a session approval cannot come from the team", key)
	}
	return Verified{Decision: dec, Approver: k}, nil
}

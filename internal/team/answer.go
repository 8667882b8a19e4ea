package team

import (
	"encoding/base64"

	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
)

// Answer is an approver's signed answer, the value of an answer key:
// Decision is the decision object (protocol section 4) the approver's
// askperm built for the request, Sig an Ed25519 signature by Approver's
// key over its RFC 8785 form, in unpadded base64url.
type Answer struct {
	Decision jsontext.Value `json:"decision"`
	Approver string         `json:"approver"`
	Sig      string         `json:"sig"`
}

// maxAnswer caps an answer's size: a decision is a line of at most a few
// kilobytes per grant and scope.
const maxAnswer = 1 << 20

// Sign is the answer, encoded, that kp gives with decision d. An
// approver builds d with form.Decide(answer, decision.FrontendTeam, now).
func Sign(kp nkeys.KeyPair, d decision.Decision) ([]byte, error) {
	line := decision.Encode(d)
	canon, err := decision.Canonical(line[:len(line)-1])
	if err != nil {
		return nil, err
	}
	sig, err := kp.Sign(canon)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Answer{Decision: canon, Approver: PublicKey(kp), Sig: base64.RawURLEncoding.EncodeToString(sig)})
}

// Verified is an answer that passed every check of Verify.
type Verified struct {
	Decision decision.Decision
	Approver string
}

// Verify checks the answer value found under key of the answers bucket
// against the request sent (as Parse or EncodeRequest returned it) by
// host c.Host, and returns its decision. Every check must pass, else the
// answer is to be ignored and the wait goes on:
//   - the key is <c.Host>.<sent's digest>.<approver> and names the
//     approver the value names;
//   - the approver is one of c.Approvers;
//   - the signature verifies over the canonical form of the decision;
//   - the decision passes decision.ParseDecision for sent (id and digest
//     echoed, grants, scopes, fields that go together);
//   - it is a person's answer (cause user), never a session approval
//     (a session lives in one host's memory, not the team's).
func Verify(c Config, key string, value []byte, sent *decision.Request) (Verified, error) {
	h, d, k, err := ParseAnswerKey(key)
	if err != nil {
		return Verified{}, err
	}
	switch {
	case h != c.Host:
		return Verified{}, fmt.Errorf("answer key %q is for host %q, not this host %q", key, h, c.Host)
	case d != sent.SHA256:
		return Verified{}, fmt.Errorf("answer key %q is for request %s, not %s", key, d, sent.SHA256)
	case len(value) > maxAnswer:
		return Verified{}, fmt.Errorf("answer %q: larger than %d bytes", key, maxAnswer)
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
	pub, err := nkeys.FromPublicKey(k)
	if err != nil {
		return Verified{}, fmt.Errorf("answer %q: %w", key, err)
	}
	if err := pub.Verify(canon, sig); err != nil {
		return Verified{}, fmt.Errorf("answer %q: the signature does not verify: %w", key, err)
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

package team

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// Rule is a team rule: an always-decision an approver answered,
// remembered for every host that trusts the approver. It is the rule
// local memory would have saved for the same request and decision
// (state.RuleOf: what it decides, the scopes, workdir, grants, created
// and expires), so that it decides later requests by the very same
// matching (state.Matching), with the approver who signed it. Its ID,
// unused by a team rule, is 0 in the signed form.
type Rule struct {
	state.Rule
	Approver string `json:"approver"`
}

// SignedRule is the value of a team rule's key: Rule is the RFC 8785
// form of the rule, Sig an Ed25519 signature by Approver's key over it,
// in unpadded base64url.
type SignedRule struct {
	Rule     jsontext.Value `json:"rule"`
	Approver string         `json:"approver"`
	Sig      string         `json:"sig"`
}

// maxRule caps a team rule's size, as maxAnswer caps an answer's.
const maxRule = 1 << 20

// ruleIDLen is the length of a rule ID in hex digits: 128 bits of the
// SHA-256 digest of the rule's RFC 8785 form.
const ruleIDLen = 32

var ruleIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// RuleKey is approver k's rule id in the rules bucket: <k>.<id>. The
// approver comes first so that an approver may be let write and delete
// only its own rules.
func RuleKey(k, id string) string { return k + "." + id }

// ParseRuleKey splits a rule key into approver and rule id, each checked.
func ParseRuleKey(key string) (k, id string, err error) {
	k, id, ok := strings.Cut(key, ".")
	switch {
	case !ok:
		return "", "", fmt.Errorf("rule key %q is not <approver>.<rule id>", key)
	case !nkeys.IsValidPublicUserKey(k):
		return "", "", fmt.Errorf("rule key %q: %q is not an approver's public key", key, k)
	case !ruleIDRE.MatchString(id):
		return "", "", fmt.Errorf("rule key %q: %q is not a rule id (%d lowercase hex digits)", key, id, ruleIDLen)
	}
	return k, id, nil
}

// ruleID is the id of a rule whose RFC 8785 form is canon.
func ruleID(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:ruleIDLen/2])
}

// SignRule is the team rule approver kp's always-decision d of req
// saves at now, signed: its id and the value of its key. d is the
// decision the approver's form built for req (form.Decide), a person's
// allow-always or deny-always; req the request as the host sent it.
func SignRule(kp nkeys.KeyPair, req *decision.Request, d decision.Decision, now time.Time) (id string, value []byte, err error) {
	switch {
	case d.RequestSHA256 != req.SHA256:
		return "", nil, fmt.Errorf("the decision is for request %s, not %s", d.RequestSHA256, req.SHA256)
	case d.Cause != decision.CauseUser:
		return "", nil, fmt.Errorf("cause %q is not a person's answer", d.Cause)
	}
	r, ok := state.RuleOf(req, d, now)
	if !ok {
		return "", nil, errors.New("the decision is no always-rule that fits its request")
	}
	k := PublicKey(kp)
	b, err := json.Marshal(Rule{Rule: r, Approver: k})
	if err != nil {
		return "", nil, err
	}
	canon, err := decision.Canonical(b)
	if err != nil {
		return "", nil, err
	}
	sig, err := kp.Sign(canon)
	if err != nil {
		return "", nil, err
	}
	value, err = json.Marshal(SignedRule{Rule: canon, Approver: k, Sig: base64.RawURLEncoding.EncodeToString(sig)})
	return ruleID(canon), value, err
}

// WriteRule signs (SignRule) and writes, with create, the team rule of
// approver kp's always-decision d of req to rules, the team's rules
// bucket (Names.RulesBucket), and returns its id. The same rule written
// twice is jetstream.ErrKeyExists.
func WriteRule(ctx context.Context, rules jetstream.KeyValue, kp nkeys.KeyPair, req *decision.Request, d decision.Decision, now time.Time) (string, error) {
	id, value, err := SignRule(kp, req, d, now)
	if err != nil {
		return "", err
	}
	if _, err := rules.Create(ctx, RuleKey(PublicKey(kp), id), value); err != nil {
		return "", fmt.Errorf("%s: %w", rules.Bucket(), err)
	}
	return id, nil
}

// Unverified is a team rule as read from its key and value, before its
// signature is checked (Verify): enough to tell whether it would match a
// request, which costs less than a signature to check.
type Unverified struct {
	Key      string
	ID       string
	Approver string
	Rule     state.Rule
	signed   SignedRule
}

// ReadRule reads the value of rule key key, checking everything but the
// signature and who is trusted: the key names the approver the value and
// its rule name; the rule is a rule (strict JSON, a decision allow or
// deny).
func ReadRule(key string, value []byte) (Unverified, error) {
	k, id, err := ParseRuleKey(key)
	if err != nil {
		return Unverified{}, err
	}
	if len(value) > maxRule {
		return Unverified{}, fmt.Errorf("rule %q: larger than %d bytes", key, maxRule)
	}
	var s SignedRule
	if err := json.Unmarshal(value, &s, json.RejectUnknownMembers(true)); err != nil {
		return Unverified{}, fmt.Errorf("rule %q: %w", key, err)
	}
	var r Rule
	if err := json.Unmarshal(s.Rule, &r, json.RejectUnknownMembers(true)); err != nil {
		return Unverified{}, fmt.Errorf("rule %q: %w", key, err)
	}
	switch {
	case s.Approver != k || r.Approver != k:
		return Unverified{}, fmt.Errorf("rule %q: signed as approver %q, not the key's %q", key, s.Approver, k)
	case r.Decision != decision.Allow && r.Decision != decision.Deny:
		return Unverified{}, fmt.Errorf("rule %q: decision %q is neither allow nor deny", key, r.Decision)
	case r.ID != 0:
		return Unverified{}, fmt.Errorf("rule %q: a team rule has no local id", key)
	}
	return Unverified{Key: key, ID: id, Approver: k, Rule: r.Rule, signed: s}, nil
}

// Verify checks that u may decide on host c: its approver is one of
// c.Approvers (at each use, so that removing a key revokes its rules at
// once), the signature verifies over the RFC 8785 form of the rule, and
// the key's id is that form's digest.
func (u Unverified) Verify(c Config) error {
	if !c.Trusts(u.Approver) {
		return fmt.Errorf("rule %q: approver %s is not one of this host's approvers", u.Key, u.Approver)
	}
	sig, err := base64.RawURLEncoding.DecodeString(u.signed.Sig)
	if err != nil {
		return fmt.Errorf("rule %q: sig: %w", u.Key, err)
	}
	canon, err := decision.Canonical(u.signed.Rule)
	if err != nil {
		return fmt.Errorf("rule %q: %w", u.Key, err)
	}
	pub, err := nkeys.FromPublicKey(u.Approver)
	if err != nil {
		return fmt.Errorf("rule %q: %w", u.Key, err)
	}
	if err := pub.Verify(canon, sig); err != nil {
		return fmt.Errorf("rule %q: the signature does not verify: %w", u.Key, err)
	}
	if ruleID(canon) != u.ID {
		return fmt.Errorf("rule %q: the id is not the rule's digest %s", u.Key, ruleID(canon))
	}
	return nil
}

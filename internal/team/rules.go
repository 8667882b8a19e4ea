package team

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// Signed is what an approver signs for a team rule: the request as its
// host sent it, the always-decision the approver's form built for it
// (frontend team, cause user), the approver, and when (Unix seconds).
// It carries no rule: a host derives the rule from the request and the
// decision, by the function local memory saves rules with
// (state.RuleOf), after checking the decision against the request
// (decision.ParseDecision), so that a team rule is never broader than
// what the form offered for its request.
type Signed struct {
	Request  jsontext.Value `json:"request"`
	Decision jsontext.Value `json:"decision"`
	Approver string         `json:"approver"`
	Created  int64          `json:"created"`
}

// SignedRule is the value of a team rule's key: Rule is the RFC 8785
// form of its Signed, Sig an Ed25519 signature by Approver's key over
// RuleDomain and it, in unpadded base64url.
type SignedRule struct {
	Rule     jsontext.Value `json:"rule"`
	Approver string         `json:"approver"`
	Sig      string         `json:"sig"`
}

// RuleSkew is how far in the future a team rule's created time may be,
// for clocks that differ between machines: a rule created later is
// refused (its lifetime counts from created).
const RuleSkew = 5 * time.Minute

// maxRule caps a team rule's size, as MaxAnswer caps an answer's.
const maxRule = 2 << 20 // it holds its request (at most 1 MiB by default)

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
	case !IsUserKey(k):
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

// SignRule is the team rule approver kp's always-decision d of raw, the
// request as its host sent it, saves at now, signed: its id and the
// value of its key. d is the decision the approver's form built for the
// request (form.Decide, frontend team), a person's allow-always or
// deny-always. The rule is derived as every host derives it, so that a
// rule no host would take is never written.
func SignRule(kp Signer, raw []byte, d decision.Decision, now time.Time) (id string, value []byte, err error) {
	req, err := decision.Parse(raw)
	if err != nil {
		return "", nil, fmt.Errorf("the request: %w", err)
	}
	if d.RequestSHA256 != req.SHA256 {
		return "", nil, fmt.Errorf("the decision is for request %s, not %s", d.RequestSHA256, req.SHA256)
	}
	line := decision.Encode(d)
	k := PublicKey(kp)
	b, err := json.Marshal(Signed{Request: raw, Decision: line[:len(line)-1], Approver: k, Created: now.Unix()})
	if err != nil {
		return "", nil, err
	}
	canon, err := decision.Canonical(b)
	if err != nil {
		return "", nil, err
	}
	if _, err := ruleOf(canon, k); err != nil {
		return "", nil, err
	}
	sig, err := kp.Sign(domainSigned(RuleDomain, canon))
	if err != nil {
		return "", nil, err
	}
	value, err = json.Marshal(SignedRule{Rule: canon, Approver: k, Sig: base64.RawURLEncoding.EncodeToString(sig)})
	return ruleID(canon), value, err
}

// ruleOf is the rule that canon, the RFC 8785 form of a Signed by
// approver k, saves: local memory's rule (state.RuleOf) for its request
// and its decision, checked against that request as any helper's
// decision is (decision.ParseDecision: its digest and id, grants,
// scopes and workdir scope the request offers, a lifetime of the form);
// a person's (cause user) always-decision given in the team's inbox
// (frontend team). Its expiry is created plus the lifetime: the
// decision's own expires is not used.
func ruleOf(canon []byte, k string) (state.Rule, error) {
	var s Signed
	if err := json.Unmarshal(canon, &s, json.RejectUnknownMembers(true)); err != nil {
		return state.Rule{}, err
	}
	switch {
	case s.Approver != k:
		return state.Rule{}, fmt.Errorf("signed as approver %q, not %q", s.Approver, k)
	case s.Created <= 0:
		return state.Rule{}, fmt.Errorf("created %d is no Unix time", s.Created)
	}
	req, err := decision.Parse(s.Request)
	if err != nil {
		return state.Rule{}, fmt.Errorf("the request: %w", err)
	}
	d, err := decision.ParseDecision(append(slices.Clip([]byte(s.Decision)), '\n'), req)
	if err != nil {
		return state.Rule{}, err
	}
	switch {
	case d.Cause != decision.CauseUser:
		return state.Rule{}, fmt.Errorf("cause %q is not a person's answer", d.Cause)
	case d.Frontend != decision.FrontendTeam:
		return state.Rule{}, fmt.Errorf("frontend %q is not the team's", d.Frontend)
	case d.Persist != decision.PersistAlways:
		return state.Rule{}, fmt.Errorf("persist %q: no always-rule", d.Persist)
	}
	life := *d.Rule
	life.Expires = 0
	if secs, err := strconv.ParseInt(life.Lifetime, 10, 64); err == nil {
		life.Expires = s.Created + secs
	}
	d.Rule = &life
	r, ok := state.RuleOf(req, d, time.Unix(s.Created, 0))
	if !ok {
		return state.Rule{}, errors.New("the decision is no always-rule that fits its request")
	}
	return r, nil
}

// Unverified is a team rule as read from its key and value, its rule
// derived (ruleOf), before its signature is checked (Verify): enough to
// tell whether it would match a request, which costs less than a
// signature to check.
type Unverified struct {
	Key      string
	ID       string
	Approver string
	Rule     state.Rule
	canon    []byte // the RFC 8785 form of the Signed
	sig      string
}

// ReadRule reads the value of rule key key, checking everything but the
// signature, the created time and who is trusted: the key names the
// approver of the value, and the value's rule is one its request offered
// (ruleOf). The rule is derived from what is signed, in its RFC 8785
// form, never from other bytes.
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
	if s.Approver != k {
		return Unverified{}, fmt.Errorf("rule %q: signed as approver %q, not the key's %q", key, s.Approver, k)
	}
	canon, err := decision.Canonical(s.Rule)
	if err != nil {
		return Unverified{}, fmt.Errorf("rule %q: %w", key, err)
	}
	r, err := ruleOf(canon, k)
	if err != nil {
		return Unverified{}, fmt.Errorf("rule %q: %w", key, err)
	}
	return Unverified{Key: key, ID: id, Approver: k, Rule: r, canon: canon, sig: s.Sig}, nil
}

// Verify checks that u may decide on host c at now: its approver is one
// of c.Approvers (at each use, so that removing a key revokes its rules
// at once), it was not created later than now and RuleSkew, the
// signature verifies over the RFC 8785 form of what is signed, and the
// key's id is that form's digest (the signature covers RuleDomain and
// that form).
func (u Unverified) Verify(c Config, now time.Time) error {
	if !c.Trusts(u.Approver) {
		return fmt.Errorf("rule %q: approver %s is not one of this host's approvers", u.Key, u.Approver)
	}
	if created := time.Unix(u.Rule.Created, 0); created.After(now.Add(RuleSkew)) {
		return fmt.Errorf("rule %q: created %s, later than now and %s", u.Key, created.UTC().Format(time.RFC3339), RuleSkew)
	}
	sig, err := base64.RawURLEncoding.DecodeString(u.sig)
	if err != nil {
		return fmt.Errorf("rule %q: sig: %w", u.Key, err)
	}
	pub, ok := userPublicKey(u.Approver)
	if !ok {
		return fmt.Errorf("rule %q: %q is not an approver's public key", u.Key, u.Approver)
	}
	if !ed25519.Verify(pub, domainSigned(RuleDomain, u.canon), sig) {
		return fmt.Errorf("rule %q: the signature does not verify: %w", u.Key, errSignature)
	}
	if ruleID(u.canon) != u.ID {
		return fmt.Errorf("rule %q: the id is not the rule's digest %s", u.Key, ruleID(u.canon))
	}
	return nil
}

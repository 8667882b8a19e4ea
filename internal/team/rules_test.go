package team

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/state"
)

var ruleTime = time.Unix(1_800_000_000, 0)

// signRule is the key and value of kp's team rule for answer a to req.
func signRule(t testing.TB, kp nkeys.KeyPair, req *decision.Request, a form.Answer) (string, []byte) {
	t.Helper()
	id, value, err := SignRule(kp, req, decide(t, req, a), ruleTime)
	if err != nil {
		t.Fatal(err)
	}
	return RuleKey(PublicKey(kp), id), value
}

// A team rule is the rule local memory saves for the same request and
// decision, with its approver; it reads back and verifies.
func TestSignRuleIsLocalMemorysRule(t *testing.T) {
	kp := userKey(t)
	c := validConfig(PublicKey(kp))
	req := parse(t, testRequest)
	for _, a := range []form.Answer{
		{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Scopes: map[string]string{"path": "/p/"}, Lifetime: "900"},
		{Choice: form.DenyAlways, Message: "never"},
	} {
		d := decide(t, req, a)
		key, value := signRule(t, kp, req, a)
		u, err := ReadRule(key, value)
		if err != nil {
			t.Fatalf("%s: %v", a.Choice, err)
		}
		if err := u.Verify(c); err != nil {
			t.Fatalf("%s: %v", a.Choice, err)
		}
		local, _ := state.RuleOf(req, d, ruleTime)
		if !equalJSON(t, u.Rule, local) {
			t.Errorf("%s: team rule %+v, local rule %+v", a.Choice, u.Rule, local)
		}
		if u.Approver != PublicKey(kp) {
			t.Errorf("approver %s, want %s", u.Approver, PublicKey(kp))
		}
	}
}

func equalJSON(t testing.TB, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

func TestSignRuleRefuses(t *testing.T) {
	kp := userKey(t)
	req := parse(t, testRequest)
	other := parse(t, strings.Replace(testRequest, `"r1"`, `"r2"`, 1))
	always := decide(t, req, form.Answer{Choice: form.AllowAlways})
	ruled := always
	ruled.Cause = decision.CauseRule
	for _, tc := range []struct {
		name string
		req  *decision.Request
		d    decision.Decision
		want string
	}{
		{"once", req, decide(t, req, form.Answer{Choice: form.AllowOnce}), "no always-rule"},
		{"another request's", other, always, "not " + other.SHA256},
		{"not a person's", req, ruled, `cause "rule"`},
	} {
		if _, _, err := SignRule(kp, tc.req, tc.d, ruleTime); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Every check of ReadRule and Verify, each failing alone.
func TestRuleRejects(t *testing.T) {
	kp, rogue := userKey(t), userKey(t)
	k := PublicKey(kp)
	c := validConfig(k)
	req := parse(t, testRequest)
	key, good := signRule(t, kp, req, form.Answer{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Lifetime: "900"})
	_, id, _ := ParseRuleKey(key)
	rogueKey, rogueValue := signRule(t, rogue, req, form.Answer{Choice: form.AllowAlways})
	edit := func(fn func(*SignedRule)) []byte {
		var s SignedRule
		if err := json.Unmarshal(good, &s); err != nil {
			t.Fatal(err)
		}
		fn(&s)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	widen := func(old, new string) []byte {
		return edit(func(s *SignedRule) { s.Rule = bytes.Replace(s.Rule, []byte(old), []byte(new), 1) })
	}
	for _, tc := range []struct {
		name, key string
		value     []byte
		want      string
	}{
		{"unlisted approver", rogueKey, rogueValue, "not one of this host's approvers"},
		{"bad signature", key, edit(func(s *SignedRule) {
			sig, _ := base64.RawURLEncoding.DecodeString(s.Sig)
			sig[0] ^= 1
			s.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), "signature does not verify"},
		{"signed by another key", key, edit(func(s *SignedRule) {
			sig, _ := rogue.Sign(s.Rule)
			s.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), "signature does not verify"},
		{"scope changed", key, widen(`"match":"/p/a"`, `"match":"/"`), "signature does not verify"},
		{"grants widened", key, widen(`"grants":["fs.write"]`, `"grants":["fs.write","fs.delete"]`), "signature does not verify"},
		{"allow made deny", key, widen(`"decision":"allow"`, `"decision":"deny"`), "signature does not verify"},
		{"expiry lifted", key, widen(`"expires":1800000900`, `"expires":0`), "signature does not verify"},
		{"another approver's key", RuleKey(PublicKey(rogue), id), good, "not the key's"},
		{"another id", RuleKey(k, strings.Repeat("0", ruleIDLen)), good, "not the rule's digest"},
		{"malformed key", k, good, "not <approver>.<rule id>"},
		{"key's id not hex", k + ".xyz", good, "not a rule id"},
		{"unknown member", key, append(good[:len(good)-1:len(good)-1], []byte(`,"extra":1}`)...), "unknown"},
		{"not JSON", key, []byte("allow"), "rule"},
	} {
		u, err := ReadRule(tc.key, tc.value)
		if err == nil {
			err = u.Verify(c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	u, err := ReadRule(key, good)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Verify(validConfig(PublicKey(rogue))); err == nil {
		t.Error("a host that does not trust the approver accepted its rule")
	}
}

// Whatever bytes a rule's value holds, a host uses only a rule its
// approver signed: a value either fails ReadRule or Verify, or holds a
// signed rule unchanged.
func FuzzReadRule(f *testing.F) {
	kp := userKey(f)
	c := validConfig(PublicKey(kp))
	req := parse(f, testRequest)
	signed := map[string]string{} // key → the rule's JSON
	for _, a := range []form.Answer{
		{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Scopes: map[string]string{"path": "/p/"}, Lifetime: "900"},
		{Choice: form.DenyAlways},
	} {
		key, value := signRule(f, kp, req, a)
		u, err := ReadRule(key, value)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := json.Marshal(u.Rule)
		signed[key] = string(b)
		f.Add(key, value)
	}
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		u, err := ReadRule(key, value)
		if err != nil || u.Verify(c) != nil {
			return
		}
		b, _ := json.Marshal(u.Rule)
		if want, ok := signed[key]; !ok || string(b) != want {
			t.Fatalf("a rule never signed was accepted under %q: %s", key, b)
		}
	})
}

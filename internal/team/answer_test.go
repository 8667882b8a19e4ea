package team

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team/teamtest"
)

// testRequest, parse and decide are teamtest's.
const testRequest = teamtest.Request

var parse, decide = teamtest.Parse, teamtest.Decide

// testAsk is the ask id the tests' answers are for, on validConfig's host.
const testAsk = "0123456789abcdef0123456789abcdef"

// sign is kp's answer d to testAsk of validConfig's host.
func sign(t testing.TB, kp nkeys.KeyPair, d decision.Decision) []byte {
	t.Helper()
	return signFor(t, kp, d, validConfig().Host, testAsk)
}

// signFor is kp's answer d to ask a of host h.
func signFor(t testing.TB, kp nkeys.KeyPair, d decision.Decision, h, a string) []byte {
	t.Helper()
	b, err := Sign(kp, d, h, a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyAccepts(t *testing.T) {
	kp := userKey(t)
	k := PublicKey(kp)
	c := validConfig(PublicKey(userKey(t)), k)
	req := parse(t, testRequest)
	key := AnswerKey(c.Host, testAsk, k)
	for _, a := range []form.Answer{
		{Choice: form.AllowOnce},
		{Choice: form.DenyOnce, Message: "not on Fridays"},
		{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Scopes: map[string]string{"path": "/p/"}, Lifetime: "900"},
		{Choice: form.DenyAlways, Message: "never"},
	} {
		d := decide(t, req, a)
		v, err := Verify(c, testAsk, key, sign(t, kp, d), req)
		if err != nil {
			t.Errorf("%s: %v", a.Choice, err)
			continue
		}
		if v.Approver != k || !reflect.DeepEqual(v.Decision, d) {
			t.Errorf("%s: got %+v by %s, want %+v by %s", a.Choice, v.Decision, v.Approver, d, k)
		}
	}
}

// Every check of Verify, each failing alone.
func TestVerifyRejects(t *testing.T) {
	kp, rogue := userKey(t), userKey(t)
	k := PublicKey(kp)
	c := validConfig(k)
	req := parse(t, testRequest)
	other := parse(t, strings.Replace(testRequest, `"r1"`, `"r2"`, 1))
	key := AnswerKey(c.Host, testAsk, k)
	allow := decide(t, req, form.Answer{Choice: form.AllowOnce})
	good := sign(t, kp, allow)

	// reenvelope re-encodes an answer after edit.
	reenvelope := func(edit func(*Answer)) []byte {
		var a Answer
		if err := json.Unmarshal(good, &a); err != nil {
			t.Fatal(err)
		}
		edit(&a)
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	widened := allow
	widened.Grants = append(append([]string{}, allow.Grants...), "fs.delete")
	badScope := decide(t, req, form.Answer{Choice: form.AllowAlways})
	badScope.Rule.Scopes = map[string]string{"path": "/"}
	ruled := allow
	ruled.Cause = decision.CauseRule
	session := allow
	session.Persist = decision.PersistSession

	for _, tc := range []struct {
		name  string
		key   string
		value []byte
		sent  *decision.Request
		want  string
	}{
		{"unlisted key", AnswerKey(c.Host, testAsk, PublicKey(rogue)), sign(t, rogue, allow), req, "not one of this host's approvers"},
		{"bad signature", key, reenvelope(func(a *Answer) {
			sig, _ := base64.RawURLEncoding.DecodeString(a.Sig)
			sig[0] ^= 1
			a.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), req, "signature does not verify"},
		{"signed by another key", key, reenvelope(func(a *Answer) {
			sig, _ := rogue.Sign(a.Decision)
			a.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), req, "signature does not verify"},
		{"signed over the decision alone, bound to no ask", key, reenvelope(func(a *Answer) {
			sig, _ := kp.Sign(a.Decision)
			a.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), req, "signature does not verify"},
		{"signed over the statement without its domain, as a login nonce", key, reenvelope(func(a *Answer) {
			a.Sig = signUnder(t, kp, "", bareStatement(t, a.Decision, c.Host, testAsk))
		}), req, "signature does not verify"},
		{"signed under the rule domain", key, reenvelope(func(a *Answer) {
			a.Sig = signUnder(t, kp, RuleDomain, bareStatement(t, a.Decision, c.Host, testAsk))
		}), req, "signature does not verify"},
		{"decision changed after signing", key, reenvelope(func(a *Answer) {
			a.Decision = bytes.Replace(a.Decision, []byte(`"allow"`), []byte(`"deny"`), 1)
		}), req, "signature does not verify"},
		{"sig not base64url", key, reenvelope(func(a *Answer) { a.Sig = "!!" }), req, "sig:"},
		{"no decision", key, []byte(`{"approver":"` + k + `","sig":""}`), req, "no decision"},
		{"unknown member", key, append(good[:len(good)-1:len(good)-1], []byte(`,"extra":1}`)...), req, "unknown"},
		{"duplicate member", key, append(good[:len(good)-1:len(good)-1], []byte(`,"approver":"`+k+`"}`)...), req, "duplicate"},
		{"another request's answer, under this request's key", key, sign(t, kp, decide(t, other, form.Answer{Choice: form.AllowOnce})), req, "request_sha256"},
		{"this request's answer, waited on by another request", key, good, other, "request_sha256"},
		{"another ask's answer, copied under this ask's key", key, signFor(t, kp, allow, c.Host, "fedcba9876543210fedcba9876543210"), req, "signature does not verify"},
		{"another host's answer, copied under this host's key", key, signFor(t, kp, allow, "ci-2", testAsk), req, "signature does not verify"},
		{"this ask's key, waited on by another ask", AnswerKey(c.Host, "fedcba9876543210fedcba9876543210", k), good, req, "is for ask"},
		{"another host's key", AnswerKey("ci-2", testAsk, k), good, req, `host "ci-2"`},
		{"value's approver not the key's", AnswerKey(c.Host, testAsk, PublicKey(rogue)), good, req, "not the key's"},
		{"malformed key", c.Host + "." + testAsk, good, req, "not <host>.<ask id>.<approver>"},
		{"a digest for the ask id", AnswerKey(c.Host, req.SHA256, k), good, req, "not an ask id"},
		{"grants widened", key, sign(t, kp, widened), req, `"fs.delete" was not requested`},
		{"a scope not offered", key, sign(t, kp, badScope), req, "not a scope the request offers"},
		{"cause not a person's", key, sign(t, kp, ruled), req, `cause "rule"`},
		{"a session approval", key, sign(t, kp, session), req, "session approval"},
		{"not JSON", key, []byte("allow"), req, "answer"},
	} {
		_, err := Verify(c, testAsk, tc.key, tc.value, tc.sent)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Verify(validConfig(), testAsk, key, good, req); err == nil {
		t.Error("a host trusting nobody accepted an answer")
	}
}

// An answer signed for one ask of one host never verifies for another
// ask or another host, whatever the hosts and ask ids (generated), even
// written under the other's key: a replay, a copy to another host and a
// second identical call all wait on their own ask.
func TestAnswerBoundToOneAsk(t *testing.T) {
	kp := userKey(t)
	k := PublicKey(kp)
	req := parse(t, testRequest)
	r := rand.New(rand.NewPCG(1, 2))
	hosts := []string{"ci-1", "ci-2", "alpha", "a"}
	for i := range 200 {
		d := decide(t, req, []form.Answer{{Choice: form.AllowOnce}, {Choice: form.DenyOnce}, {Choice: form.AllowAlways}}[i%3])
		h1, h2 := hosts[r.IntN(len(hosts))], hosts[r.IntN(len(hosts))]
		a1 := NewAsk()
		a2 := a1
		if r.IntN(2) == 0 || h1 == h2 {
			a2 = NewAsk()
		}
		value := signFor(t, kp, d, h1, a1)
		c := validConfig(k)
		c.Host = h2
		_, err := Verify(c, a2, AnswerKey(h2, a2, k), value, req)
		if err == nil {
			t.Fatalf("an answer for ask %s of %s verified for ask %s of %s", a1, h1, a2, h2)
		}
		c.Host = h1
		if _, err := Verify(c, a1, AnswerKey(h1, a1, k), value, req); err != nil {
			t.Fatalf("the answer for its own ask: %v", err)
		}
	}
}

// Whatever bytes an answer holds, Verify accepts only the decision the
// approver signed: a mutation either fails or leaves it unchanged (as
// re-encoding the envelope may).
func FuzzVerify(f *testing.F) {
	kp := userKey(f)
	c := validConfig(PublicKey(kp))
	req := parse(f, testRequest)
	key := AnswerKey(c.Host, testAsk, PublicKey(kp))
	signed := map[string]decision.Decision{}
	for _, a := range []form.Answer{
		{Choice: form.AllowOnce},
		{Choice: form.DenyOnce, Message: "no"},
		{Choice: form.AllowAlways, Grants: []string{"fs.create"}},
	} {
		d := decide(f, req, a)
		b := sign(f, kp, d)
		signed[string(decision.Encode(d))] = d
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		v, err := Verify(c, testAsk, key, value, req)
		if err != nil {
			return
		}
		if _, ok := signed[string(decision.Encode(v.Decision))]; !ok {
			t.Fatalf("Verify accepted a decision never signed: %s", decision.Encode(v.Decision))
		}
	})
}

// bareStatement is the RFC 8785 form of the answerStatement of decision
// canon for ask a of host h, without its domain.
func bareStatement(t testing.TB, canon []byte, h, a string) []byte {
	t.Helper()
	b, err := json.Marshal(answerStatement{Decision: canon, Host: h, Ask: a})
	if err != nil {
		t.Fatal(err)
	}
	st, err := decision.Canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// signUnder is kp's signature over domain and b, in unpadded base64url.
func signUnder(t testing.TB, kp nkeys.KeyPair, domain string, b []byte) string {
	t.Helper()
	sig, err := kp.Sign(domainSigned(domain, b))
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(sig)
}

package team

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// testRequest has an id, a session, a workdir, two grants and a dimension
// with two scopes: every check of an answer has something to bite on.
const testRequest = `{"id":"r1","action":"write","session_id":"s1","workdir":{"value":"/p"},` +
	`"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"file","match":"/p/a"},{"label":"dir","match":"/p/","kind":"prefix"}]}],` +
	`"grants":[{"name":"fs.write"},{"name":"fs.create"}]}`

func parse(t testing.TB, raw string) *decision.Request {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// decide is the decision an approver's form builds from a.
func decide(t testing.TB, req *decision.Request, a form.Answer) decision.Decision {
	t.Helper()
	f := form.New(req, form.Options{})
	full := f.Defaults()
	full.Choice, full.Message = a.Choice, a.Message
	if a.Scopes != nil {
		full.Scopes = a.Scopes
	}
	if a.Grants != nil {
		full.Grants = a.Grants
	}
	if a.Lifetime != "" {
		full.Lifetime = a.Lifetime
	}
	d, err := f.Decide(full, decision.FrontendTeam, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func sign(t testing.TB, kp nkeys.KeyPair, d decision.Decision) []byte {
	t.Helper()
	b, err := Sign(kp, d)
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
	key := AnswerKey(c.Host, req.SHA256, k)
	for _, a := range []form.Answer{
		{Choice: form.AllowOnce},
		{Choice: form.DenyOnce, Message: "not on Fridays"},
		{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Scopes: map[string]string{"path": "/p/"}, Lifetime: "900"},
		{Choice: form.DenyAlways, Message: "never"},
	} {
		d := decide(t, req, a)
		v, err := Verify(c, key, sign(t, kp, d), req)
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
	key := AnswerKey(c.Host, req.SHA256, k)
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
		{"unlisted key", AnswerKey(c.Host, req.SHA256, PublicKey(rogue)), sign(t, rogue, allow), req, "not one of this host's approvers"},
		{"bad signature", key, reenvelope(func(a *Answer) {
			sig, _ := base64.RawURLEncoding.DecodeString(a.Sig)
			sig[0] ^= 1
			a.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), req, "signature does not verify"},
		{"signed by another key", key, reenvelope(func(a *Answer) {
			sig, _ := rogue.Sign(a.Decision)
			a.Sig = base64.RawURLEncoding.EncodeToString(sig)
		}), req, "signature does not verify"},
		{"decision changed after signing", key, reenvelope(func(a *Answer) {
			a.Decision = bytes.Replace(a.Decision, []byte(`"allow"`), []byte(`"deny"`), 1)
		}), req, "signature does not verify"},
		{"sig not base64url", key, reenvelope(func(a *Answer) { a.Sig = "!!" }), req, "sig:"},
		{"no decision", key, []byte(`{"approver":"` + k + `","sig":""}`), req, "no decision"},
		{"unknown member", key, append(good[:len(good)-1:len(good)-1], []byte(`,"extra":1}`)...), req, "unknown"},
		{"duplicate member", key, append(good[:len(good)-1:len(good)-1], []byte(`,"approver":"`+k+`"}`)...), req, "duplicate"},
		{"another request's answer, under this request's key", key, sign(t, kp, decide(t, other, form.Answer{Choice: form.AllowOnce})), req, "request_sha256"},
		{"this request's key, waited on by another request", key, good, other, "not " + other.SHA256},
		{"another host's key", AnswerKey("ci-2", req.SHA256, k), good, req, `host "ci-2"`},
		{"value's approver not the key's", AnswerKey(c.Host, req.SHA256, PublicKey(rogue)), good, req, "not the key's"},
		{"malformed key", c.Host + "." + req.SHA256, good, req, "not <host>.<digest>.<approver>"},
		{"grants widened", key, sign(t, kp, widened), req, `"fs.delete" was not requested`},
		{"a scope not offered", key, sign(t, kp, badScope), req, "not a scope the request offers"},
		{"cause not a person's", key, sign(t, kp, ruled), req, `cause "rule"`},
		{"a session approval", key, sign(t, kp, session), req, "session approval"},
		{"not JSON", key, []byte("allow"), req, "answer"},
	} {
		_, err := Verify(c, tc.key, tc.value, tc.sent)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Verify(validConfig(), key, good, req); err == nil {
		t.Error("a host trusting nobody accepted an answer")
	}
}

// Whatever bytes an answer holds, Verify accepts only the decision the
// approver signed: a mutation either fails or leaves it unchanged (as
// re-encoding the envelope may).
func FuzzVerify(f *testing.F) {
	kp := userKey(f)
	c := validConfig(PublicKey(kp))
	req := parse(f, testRequest)
	key := AnswerKey(c.Host, req.SHA256, PublicKey(kp))
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
		v, err := Verify(c, key, value, req)
		if err != nil {
			return
		}
		if _, ok := signed[string(decision.Encode(v.Decision))]; !ok {
			t.Fatalf("Verify accepted a decision never signed: %s", decision.Encode(v.Decision))
		}
	})
}

package team

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/state"
)

var ruleTime = time.Unix(1_800_000_000, 0)

// signRule is the key and value of kp's team rule for answer a to raw.
func signRule(t testing.TB, kp nkeys.KeyPair, raw string, a form.Answer) (string, []byte) {
	t.Helper()
	id, value, err := SignRule(kp, []byte(raw), decide(t, parse(t, raw), a), ruleTime)
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
		key, value := signRule(t, kp, testRequest, a)
		u, err := ReadRule(key, value)
		if err != nil {
			t.Fatalf("%s: %v", a.Choice, err)
		}
		if err := u.Verify(c, ruleTime); err != nil {
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
	other := strings.Replace(testRequest, `"r1"`, `"r2"`, 1)
	always := decide(t, req, form.Answer{Choice: form.AllowAlways})
	ruled := always
	ruled.Cause = decision.CauseRule
	local := always
	local.Frontend = decision.FrontendTUI
	for _, tc := range []struct {
		name, raw string
		d         decision.Decision
		want      string
	}{
		{"once", testRequest, decide(t, req, form.Answer{Choice: form.AllowOnce}), "no always-rule"},
		{"another request's", other, always, "not " + parse(t, other).SHA256},
		{"not a person's", testRequest, ruled, `cause "rule"`},
		{"not the team's", testRequest, local, `frontend "tui"`},
		{"no request", `{"action":`, always, "the request"},
	} {
		if _, _, err := SignRule(kp, []byte(tc.raw), tc.d, ruleTime); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Every check of ReadRule and Verify, each failing alone.
func TestRuleRejects(t *testing.T) {
	kp, rogue := userKey(t), userKey(t)
	k := PublicKey(kp)
	c := validConfig(k)
	key, good := signRule(t, kp, testRequest, form.Answer{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Lifetime: "900"})
	_, id, _ := ParseRuleKey(key)
	rogueKey, rogueValue := signRule(t, rogue, testRequest, form.Answer{Choice: form.AllowAlways})
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
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("%s is not in %s", old, good)
		}
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
		{"signed over the rule without its domain, as a login nonce", key, edit(func(s *SignedRule) {
			s.Sig = signUnder(t, kp, "", s.Rule)
		}), "signature does not verify"},
		{"signed under the answer domain", key, edit(func(s *SignedRule) {
			s.Sig = signUnder(t, kp, AnswerDomain, s.Rule)
		}), "signature does not verify"},
		{"scope changed", key, widen(`"scopes":{"path":"/p/a"}`, `"scopes":{"path":"/p/"}`), "signature does not verify"},
		{"grants widened", key, widen(`"grants":["fs.write"]`, `"grants":["fs.write","fs.create"]`), "signature does not verify"},
		{"created moved", key, widen(`"created":1800000000`, `"created":1700000000`), "signature does not verify"},
		{"request changed", key, widen(`"value":"/p/a"`, `"value":"/p/b"`), "not the sent request's digest"},
		{"another approver's key", RuleKey(PublicKey(rogue), id), good, "not the key's"},
		{"another id", RuleKey(k, strings.Repeat("0", ruleIDLen)), good, "not the rule's digest"},
		{"malformed key", k, good, "not <approver>.<rule id>"},
		{"key's id not hex", k + ".xyz", good, "not a rule id"},
		{"unknown member", key, append(good[:len(good)-1:len(good)-1], []byte(`,"extra":1}`)...), "unknown"},
		{"unknown member signed", key, widen(`"created":`, `"extra":1,"created":`), "unknown"},
		{"not JSON", key, []byte("allow"), "rule"},
	} {
		u, err := ReadRule(tc.key, tc.value)
		if err == nil {
			err = u.Verify(c, ruleTime)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	u, err := ReadRule(key, good)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Verify(validConfig(PublicKey(rogue)), ruleTime); err == nil {
		t.Error("a host that does not trust the approver accepted its rule")
	}
}

// Whatever bytes a rule's value holds, a host uses only a rule its
// approver signed: a value either fails ReadRule or Verify, or holds a
// signed rule unchanged.
func FuzzReadRule(f *testing.F) {
	kp := userKey(f)
	c := validConfig(PublicKey(kp))
	signed := map[string]string{} // key → the rule's JSON
	for _, a := range []form.Answer{
		{Choice: form.AllowAlways, Grants: []string{"fs.write"}, Scopes: map[string]string{"path": "/p/"}, Lifetime: "900"},
		{Choice: form.DenyAlways},
	} {
		key, value := signRule(f, kp, testRequest, a)
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
		if err != nil || u.Verify(c, ruleTime) != nil {
			return
		}
		b, _ := json.Marshal(u.Rule)
		if want, ok := signed[key]; !ok || string(b) != want {
			t.Fatalf("a rule never signed was accepted under %q: %s", key, b)
		}
	})
}

// forge is the key and value of a team rule signed by kp whose signed
// content is content, whatever it says.
func forge(t testing.TB, kp nkeys.KeyPair, content any) RuleEntry {
	t.Helper()
	b, err := json.Marshal(content)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := decision.Canonical(b)
	if err != nil {
		t.Fatal(err)
	}
	value, err := json.Marshal(SignedRule{Rule: canon, Approver: PublicKey(kp), Sig: signUnder(t, kp, RuleDomain, canon)})
	if err != nil {
		t.Fatal(err)
	}
	return RuleEntry{Key: RuleKey(PublicKey(kp), ruleID(canon)), Value: value}
}

// edited is d's JSON object with edit applied.
func edited(t testing.TB, d decision.Decision, edit func(map[string]any)) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(decision.Encode(d), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	return m
}

// A team rule signed by a trusted approver but broader than anything the
// form offered for its request never decides: a rule that names its own
// scope kind, workdir scope or times (as rules were once signed), a
// decision whose scope, workdir scope or lifetime the request did not
// offer, a created time in the future, a decision no person gave in the
// inbox, a request that does not parse. The rule signed as the form
// answered decides (the forgery itself works).
func TestTeamRuleNoBroaderThanOffered(t *testing.T) {
	kp := userKey(t)
	k := PublicKey(kp)
	var w said
	m := Memory{Config: validConfig(k), Warn: w.warn}
	noWorkdir := strings.Replace(testRequest, `"workdir":{"value":"/p"},`, "", 1)
	now := ruleTime.Add(time.Hour)
	later := []*decision.Request{
		parse(t, testRequest),
		parse(t, strings.Replace(testRequest, `"/p/a"`, `"/etc/passwd"`, 1)),
		parse(t, strings.Replace(testRequest, `{"value":"/p"}`, `{"value":"/x"}`, 1)),
		parse(t, noWorkdir),
		parse(t, strings.Replace(noWorkdir, `"/p/a"`, `"/etc/passwd"`, 1)),
	}
	// rule is a rule as signed before: the rule itself, with its approver.
	rule := func(workdir string, kind decision.ScopeKind, match string, created, expires int64) map[string]any {
		return map[string]any{
			"decision": "allow", "action": "write", "dimensions": []map[string]any{{"name": "path", "match": match, "kind": kind}},
			"workdir_scope": workdir, "grants": []string{"fs.write", "fs.create"}, "origin": "team",
			"created": created, "expires": expires, "id": 0, "approver": k,
		}
	}
	// signed is what an approver signs now: a request, a decision, when.
	signed := func(raw string, d any, created time.Time) map[string]any {
		return map[string]any{"request": jsontext.Value(raw), "decision": d, "approver": k, "created": created.Unix()}
	}
	allowed := decide(t, parse(t, testRequest), form.Answer{Choice: form.AllowAlways, Lifetime: "900"})
	allow := edited(t, allowed, func(map[string]any) {})
	allowNoWorkdir := decide(t, parse(t, noWorkdir), form.Answer{Choice: form.AllowAlways})
	for _, tc := range []struct {
		name    string
		content any
	}{
		{"kind any, as signed before", rule(decision.WorkdirAll, decision.KindAny, "", ruleTime.Unix(), 0)},
		{"workdir all without a workdir, as signed before", rule(decision.WorkdirAll, decision.KindExact, "/p/a", ruleTime.Unix(), 0)},
		{"created a year ahead, as signed before", rule(decision.WorkdirAll, decision.KindPrefix, "/", now.AddDate(1, 0, 0).Unix(), now.AddDate(1, 0, 0).Unix()+900)},
		{"a scope not offered", signed(testRequest, edited(t, allowed, func(d map[string]any) {
			d["rule"].(map[string]any)["scopes"] = map[string]any{"path": "/"}
		}), ruleTime)},
		{"workdir all without a workdir", signed(noWorkdir, edited(t, allowNoWorkdir, func(d map[string]any) {
			d["rule"].(map[string]any)["workdir_scope"] = decision.WorkdirAll
		}), ruleTime)},
		{"a lifetime not offered", signed(testRequest, edited(t, allowed, func(d map[string]any) {
			d["rule"].(map[string]any)["lifetime"] = "31536000"
			d["rule"].(map[string]any)["expires"] = now.AddDate(1, 0, 0).Unix()
		}), ruleTime)},
		{"expires beyond the lifetime", signed(testRequest, edited(t, allowed, func(d map[string]any) {
			d["rule"].(map[string]any)["expires"] = now.AddDate(1, 0, 0).Unix()
		}), ruleTime)},
		{"created in the future", signed(testRequest, allow, now.Add(RuleSkew+time.Minute))},
		{"no person's answer", signed(testRequest, edited(t, allowed, func(d map[string]any) { d["cause"] = "rule" }), ruleTime)},
		{"not given in the inbox", signed(testRequest, edited(t, allowed, func(d map[string]any) { d["frontend"] = "tui" }), ruleTime)},
		{"allow once", signed(testRequest, edited(t, decide(t, parse(t, testRequest), form.Answer{Choice: form.AllowOnce}), func(map[string]any) {}), ruleTime)},
		{"an unknown kind", signed(strings.Replace(testRequest, `"kind":"prefix"`, `"kind":"everything"`, 1), allow, ruleTime)},
		{"another request's decision", signed(noWorkdir, allow, ruleTime)},
	} {
		e := forge(t, kp, tc.content)
		for _, req := range later {
			if got := m.match(derived([]RuleEntry{e}), req, now); got != nil {
				t.Errorf("%s: decided %+v", tc.name, got[0].Rule)
			}
		}
	}
	skewed := forge(t, kp, signed(testRequest, allow, now.Add(RuleSkew-time.Minute)))
	for _, e := range []RuleEntry{forge(t, kp, signed(testRequest, allow, now)), skewed} {
		if got := m.match(derived([]RuleEntry{e}), later[0], now); len(got) != 1 || got[0].Expires != got[0].Created+900 {
			t.Errorf("the rule as the form answered: %+v", got)
		}
	}
	if len(w) == 0 || !slices.ContainsFunc(w, func(s string) bool { return strings.Contains(s, "later than now") }) {
		t.Errorf("the rule created in the future was not said: %q", w)
	}
}

// Generated decisions, signed by a trusted approver, whatever their
// scopes, workdir scope, lifetime, expiry and created time: a rule that
// decides chose, for each dimension, a scope its request offered (match
// and kind), a workdir scope only for a request with a workdir, a
// lifetime of the form counted from a created time not in the future.
func TestTeamRuleOnlyWhatWasOffered(t *testing.T) {
	kp := userKey(t)
	k := PublicKey(kp)
	m := Memory{Config: validConfig(k), Warn: func(string) {}}
	r := rand.New(rand.NewPCG(7, 8))
	matches := []string{"/p/a", "/p/", "/", "", "/p/*", "rm", "ls"}
	decided := 0
	for range 3000 {
		raw, req := genRaw(t, r)
		d := decide(t, req, form.Answer{Choice: genChoices[r.IntN(len(genChoices))]})
		content := edited(t, d, func(m map[string]any) {
			rule := m["rule"].(map[string]any)
			for _, dim := range req.Dimensions {
				if r.IntN(2) == 0 {
					rule["scopes"] = map[string]any{dim.Name: matches[r.IntN(len(matches))]}
				}
			}
			switch r.IntN(4) {
			case 0:
				rule["workdir_scope"] = decision.WorkdirAll
			case 1:
				delete(rule, "workdir_scope")
			}
			rule["lifetime"] = []string{"indefinite", "900", "57600", "60", "31536000"}[r.IntN(5)]
			if r.IntN(2) == 0 {
				rule["expires"] = ruleTime.Unix() + int64(r.IntN(1e8))
			} else {
				delete(rule, "expires")
			}
		})
		created := ruleTime.Add(time.Duration(r.IntN(7200)-3600) * time.Second)
		e := forge(t, kp, map[string]any{"request": jsontext.Value(raw), "decision": content, "approver": k, "created": created.Unix()})
		for range 5 {
			later := genRequest(t, r)
			if r.IntN(2) == 0 {
				later = withValue(t, req, genValues[r.IntN(len(genValues))])
			}
			for _, x := range m.match(derived([]RuleEntry{e}), later, ruleTime) {
				decided++
				if x.Created > ruleTime.Add(RuleSkew).Unix() {
					t.Fatalf("created %d in the future decided", x.Created)
				}
				if life := x.Expires - x.Created; x.Expires != 0 && life != 900 && life != 57600 {
					t.Fatalf("a lifetime of %ds decided", life)
				}
				if (x.WorkdirScope != "") != (req.Workdir != nil) {
					t.Fatalf("workdir scope %q for a request with workdir %v", x.WorkdirScope, req.Workdir)
				}
				for i, dim := range x.Dimensions {
					if !slices.ContainsFunc(req.Dimensions[i].Scopes, func(s decision.Scope) bool {
						return s.Match == dim.Match && (s.Kind == dim.Kind || s.Kind == "" && dim.Kind == decision.KindExact)
					}) {
						t.Fatalf("scope %+v was not offered: %+v", dim, req.Dimensions[i].Scopes)
					}
				}
			}
		}
	}
	if decided == 0 {
		t.Fatal("nothing decided: the test tests nothing")
	}
	t.Logf("%d decided", decided)
}

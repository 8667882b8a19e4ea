package decision

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Requests the decisions of these tests answer.
var (
	// full has an id, a session, a workdir, two grants and two dimensions,
	// one of them with a sole scope.
	fullRequest = `{"id":"r1","action":"write","session_id":"s1","workdir":{"value":"/p"},` +
		`"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"file","match":"/p/a"},{"label":"dir","match":"/p/","kind":"prefix"}]},` +
		`{"name":"host","value":"h","scopes":[{"label":"host","match":"h"}]}],` +
		`"grants":[{"name":"fs.write"},{"name":"fs.create"}]}`
	bareRequest    = `{"action":"read"}`
	oneshotRequest = `{"action":"read","persistent":false}`
)

func TestParseDecisionRejects(t *testing.T) {
	// Every row is exact bytes, with $SHA standing for the request's digest.
	for _, tc := range []struct {
		name, req, in, want string
	}{
		// Framing: one object, one line, one newline.
		{"no output", bareRequest, ``, `decision: no output`},
		{"no newline", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}`, `decision: does not end in a newline`},
		{"two decisions", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n" + `{"version":1,"decision":"allow","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: more than one line`},
		{"two newlines", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n\n", `decision: more than one line`},
		{"newline inside", bareRequest, `{"version":1,"decision":"deny",` + "\n" + `"persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: more than one line`},
		{"CRLF", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\r\n", `decision: more than one line`},
		{"two objects on one line", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}{}` + "\n", `decision: trailing data`},
		{"trailing data", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"} x` + "\n", `decision: trailing data`},
		{"leading space", bareRequest, ` {"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: whitespace around the object`},
		{"trailing tab", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\t\n", `decision: whitespace around the object`},
		{"not an object", bareRequest, `["deny"]` + "\n", `decision: expected a JSON object, got array`},
		{"invalid JSON", bareRequest, `{"version":1,}` + "\n", `decision: invalid JSON at byte 12`},
		{"truncated", bareRequest, `{"version":1` + "\n", `decision: unexpected end of input`},
		// Encoding and strictness, as for requests.
		{"BOM", bareRequest, "\xef\xbb\xbf" + `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: starts with a byte order mark`},
		{"invalid UTF-8", bareRequest, `{"version":1,"decision":"deny","persist":"once","message":"a` + "\xff" + `","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: invalid UTF-8 at byte 60`},
		{"lone surrogate", bareRequest, `{"version":1,"decision":"deny","persist":"once","message":"\ud800","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: invalid JSON`},
		{"escaped NUL", bareRequest, `{"version":1,"decision":"deny","persist":"once","message":"a\u0000","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "message": contains NUL`},
		{"duplicate key", bareRequest, `{"version":1,"decision":"allow","decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: duplicate member "decision"`},
		{"duplicate key by escape", bareRequest, `{"version":1,"decision":"deny","\u0064ecision":"allow","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `duplicate member "decision"`},
		{"duplicate key in rule.scopes", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{"a":"x","a":"y"},"lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes": duplicate member "a"`},
		{"unknown field", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA","extra":1}` + "\n", `decision: field "extra": unknown field`},
		{"case variant", bareRequest, `{"version":1,"Decision":"allow","decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "Decision": unknown field (field names are case-sensitive; did you mean "decision"?)`},
		{"unknown rule field", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{},"lifetime":"indefinite","grants":[]},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.grants": unknown field`},
		{"missing version", bareRequest, `{"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "version": missing (required)`},
		{"missing cause", bareRequest, `{"version":1,"decision":"deny","persist":"once","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "cause": missing (required)`},
		{"missing request_sha256", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui"}` + "\n", `decision: field "request_sha256": missing (required)`},
		{"missing rule.lifetime", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{}},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.lifetime": missing (required)`},
		{"missing rule.scopes", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes": missing (required)`},
		{"null", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":null,"frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "cause": expected a string, got null`},
		{"null id", fullRequest, `{"version":1,"id":null,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "id": expected a string, got null`},
		{"version as string", bareRequest, `{"version":"1","decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "version": expected an integer, got string`},
		{"version 1.0", bareRequest, `{"version":1.0,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "version": expected an integer, got 1.0`},
		{"version 2", bareRequest, `{"version":2,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "version": unsupported protocol version 2`},
		{"stop as string", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","stop":"true","request_sha256":"$SHA"}` + "\n", `decision: field "stop": expected a boolean, got string`},
		{"grants not an array", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":"fs.write","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants": expected an array, got string`},
		{"grant not a string", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":["fs.write",1],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants[1]": expected a string, got number`},
		{"rule not an object", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":[],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule": expected an object, got array`},
		{"rule.scopes not an object", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":[],"lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes": expected an object, got array`},
		{"scope not a string", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":{},"host":"h"},"workdir_scope":"all","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes.path": expected a string, got object`},
		{"expires as float", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"h"},"workdir_scope":"all","lifetime":"900","expires":1.5},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.expires": expected an integer, got 1.5`},
		{"expires beyond I-JSON", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"h"},"workdir_scope":"all","lifetime":"900","expires":9007199254740992},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.expires": integer 9007199254740992 is beyond ±(2^53−1)`},
		{"long id", fullRequest, `{"version":1,"id":"` + strings.Repeat("i", MaxLineBytes+1) + `","decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "id": longer than 4096 bytes`},
		// Values.
		{"unknown decision", bareRequest, `{"version":1,"decision":"maybe","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "decision": "maybe" is not one of allow, deny`},
		{"decision case", bareRequest, `{"version":1,"decision":"Allow","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "decision": "Allow" is not one of allow, deny`},
		{"unknown persist", bareRequest, `{"version":1,"decision":"deny","persist":"forever","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "persist": "forever" is not one of once, always, session`},
		{"unknown cause", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"x","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "cause": "x" is not one of user, rule, session, timeout, cancelled, unavailable, rate-limit, error`},
		{"unknown frontend", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"gui","request_sha256":"$SHA"}` + "\n", `decision: field "frontend": "gui" is not one of tui, line, yad, zenity, answers, rules, memory, reviewer, team, none`},
		{"unknown lifetime", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{},"lifetime":"60","expires":60},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.lifetime": "60" is not one of indefinite, 900, 57600`},
		{"unknown workdir_scope", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"h"},"workdir_scope":"some","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.workdir_scope": "some" is not one of selected, all`},
		// Present fields are never their zero value.
		{"empty message", bareRequest, `{"version":1,"decision":"deny","persist":"once","message":"","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "message": must not be empty (absent means none)`},
		{"empty grants", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":[],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants": must not be empty (absent means none)`},
		{"stop false", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","stop":false,"request_sha256":"$SHA"}` + "\n", `decision: field "stop": must be true when present`},
		{"expires 0", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"h"},"workdir_scope":"all","lifetime":"900","expires":0},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.expires": must be a positive Unix time`},
		// The decision answers the request that was sent.
		{"another request's digest", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"16384135fc236bb03583cf3024b9fb573cc1ae45f908a98d0601d2ab45f8cfbf"}` + "\n", `decision: field "request_sha256": "16384135fc236bb03583cf3024b9fb573cc1ae45f908a98d0601d2ab45f8cfbf" is not the sent request's digest "16384135fc236bb03583cf3024b9fb573cc1ae45f908a98d0601d2ab45f8cfbe"`},
		{"uppercase digest", bareRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"16384135FC236BB03583CF3024B9FB573CC1AE45F908A98D0601D2AB45F8CFBE"}` + "\n", `decision: field "request_sha256": "16384135FC236BB03583CF3024B9FB573CC1AE45F908A98D0601D2AB45F8CFBE" is not the sent request's digest`},
		{"id missing", fullRequest, `{"version":1,"decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "id": missing (the request has an id)`},
		{"id of another request", fullRequest, `{"version":1,"id":"r2","decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "id": "r2" is not the request's id "r1"`},
		{"id without one in the request", bareRequest, `{"version":1,"id":"","decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "id": the request has no id`},
		{"message on an allow", bareRequest, `{"version":1,"decision":"allow","persist":"once","message":"ok","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "message": only a deny has a message`},
		{"stop on an allow", bareRequest, `{"version":1,"decision":"allow","persist":"once","cause":"user","frontend":"tui","stop":true,"request_sha256":"$SHA"}` + "\n", `decision: field "stop": only a deny stops the turn`},
		{"allow by timeout", bareRequest, `{"version":1,"decision":"allow","persist":"once","cause":"timeout","frontend":"none","request_sha256":"$SHA"}` + "\n", `decision: field "decision": allow, but cause "timeout" always denies`},
		{"allow by error", bareRequest, `{"version":1,"decision":"allow","persist":"once","cause":"error","frontend":"none","request_sha256":"$SHA"}` + "\n", `decision: field "decision": allow, but cause "error" always denies`},
		{"deny always by cancel", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{},"lifetime":"indefinite"},"cause":"cancelled","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "persist": "always", but a decision with cause "cancelled" is "once"`},
		{"always by rule", bareRequest, `{"version":1,"decision":"allow","persist":"always","rule":{"scopes":{},"lifetime":"indefinite"},"cause":"rule","frontend":"rules","request_sha256":"$SHA"}` + "\n", `decision: field "persist": "always", but a decision with cause "rule" is "once"`},
		{"always by reviewer", bareRequest, `{"version":1,"decision":"allow","persist":"always","rule":{"scopes":{},"lifetime":"indefinite"},"cause":"reviewer","frontend":"reviewer","request_sha256":"$SHA"}` + "\n", `decision: field "persist": "always", but a decision with cause "reviewer" is "once"`},
		{"once by session", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":["fs.write","fs.create"],"cause":"session","frontend":"memory","request_sha256":"$SHA"}` + "\n", `decision: field "persist": "once", but a decision with cause "session" is "session"`},
		{"deny session", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"session","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "persist": session, but a session approval is an allow`},
		{"session without session_id", bareRequest, `{"version":1,"decision":"allow","persist":"session","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "persist": session, but the request has no session_id`},
		{"always when not persistent", oneshotRequest, `{"version":1,"decision":"allow","persist":"always","rule":{"scopes":{},"lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "persist": always, but the request is not persistent`},
		{"grants on a deny", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"once","grants":["fs.write","fs.create"],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants": only an allow grants`},
		{"allow without grants", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants": missing (the request has grants)`},
		{"grant not requested", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":["fs.write","net"],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants[1]": "net" was not requested`},
		{"grant of a request without grants", bareRequest, `{"version":1,"decision":"allow","persist":"once","grants":["fs.write"],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants[0]": "fs.write" was not requested`},
		{"grant twice", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":["fs.write","fs.write"],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants[1]": "fs.write" given twice`},
		{"allow once of some grants", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"once","grants":["fs.create"],"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "grants": an allow once grants all 2 requested grants, not 1`},
		{"rule on once", bareRequest, `{"version":1,"decision":"deny","persist":"once","rule":{"scopes":{},"lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule": only an always-decision has a rule`},
		{"rule on session", fullRequest, `{"version":1,"id":"r1","decision":"allow","persist":"session","grants":["fs.write","fs.create"],"rule":{"scopes":{"path":"/p/a","host":"h"},"workdir_scope":"all","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule": only an always-decision has a rule`},
		{"always without rule", bareRequest, `{"version":1,"decision":"deny","persist":"always","cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule": missing (persist is always)`},
		{"workdir_scope missing", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"h"},"lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.workdir_scope": missing (the request has a workdir)`},
		{"workdir_scope without a workdir", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{},"workdir_scope":"selected","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.workdir_scope": the request has no workdir`},
		{"expires when indefinite", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{},"lifetime":"indefinite","expires":1796031916},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.expires": an indefinite rule does not expire`},
		{"expires missing", bareRequest, `{"version":1,"decision":"deny","persist":"always","rule":{"scopes":{},"lifetime":"57600"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.expires": missing (lifetime "57600" is finite)`},
		{"scope of a dimension missing", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a"},"workdir_scope":"all","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes": no scope for dimension "host"`},
		{"scope of no dimension", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"h","url":"x"},"workdir_scope":"all","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes.url": the request has no dimension "url"`},
		{"scope not offered", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/","host":"h"},"workdir_scope":"all","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes.path": "/" is not a scope the request offers`},
		{"the value, not a scope", fullRequest, `{"version":1,"id":"r1","decision":"deny","persist":"always","rule":{"scopes":{"path":"/p/a","host":"H"},"workdir_scope":"all","lifetime":"indefinite"},"cause":"user","frontend":"tui","request_sha256":"$SHA"}` + "\n", `decision: field "rule.scopes.host": "H" is not a scope the request offers`},
	} {
		req := mustParse(t, tc.req)
		in := strings.ReplaceAll(tc.in, "$SHA", req.SHA256)
		d, err := ParseDecision([]byte(in), req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
			continue
		}
		if e, ok := errors.AsType[*Error](err); !ok || e.Doc != "decision" {
			t.Errorf("%s: %#v is not a decision *Error", tc.name, err)
		}
		if !reflect.DeepEqual(d, Decision{}) {
			t.Errorf("%s: a decision came with the error: %+v", tc.name, d)
		}
	}
}

func TestParseDecisionNeedsTheSentDigest(t *testing.T) {
	out := Encode(Denied(&Request{SHA256: "ab"}, CauseUser, FrontendTUI))
	if _, err := ParseDecision(out, &Request{Action: "read"}); err == nil || !strings.Contains(err.Error(), "no SHA256") {
		t.Errorf("got %v", err)
	}
}

// Every decision askperm writes for valid inputs reads back equal.
func TestParseDecisionReadsEncode(t *testing.T) {
	full, bare, oneshot := mustParse(t, fullRequest), mustParse(t, bareRequest), mustParse(t, oneshotRequest)
	with := func(d Decision, change func(*Decision)) Decision {
		change(&d)
		return d
	}
	allowOnce := with(Denied(full, CauseUser, FrontendTUI), func(d *Decision) {
		d.Decision, d.Grants = Allow, full.GrantNames()
	})
	for _, tc := range []struct {
		name string
		req  *Request
		d    Decision
	}{
		{"timeout", full, Denied(full, CauseTimeout, FrontendNone)},
		{"unavailable, no id", bare, Denied(bare, CauseUnavailable, FrontendNone)},
		{"cancelled in a dialog", oneshot, Denied(oneshot, CauseCancelled, FrontendZenity)},
		{"rate limit", full, Denied(full, CauseRateLimit, FrontendNone)},
		{"error", bare, Denied(bare, CauseError, FrontendNone)},
		{"deny with a message and stop", full, with(Denied(full, CauseUser, FrontendLine), func(d *Decision) {
			d.Message, d.Stop = "not now\n\"really\" <not>", true
		})},
		{"deny by a rules file", bare, with(Denied(bare, CauseRule, FrontendRules), func(d *Decision) { d.Message = "ask a human" })},
		{"allow once with grants", full, allowOnce},
		{"allow once by a remembered rule", full, with(allowOnce, func(d *Decision) { d.Cause, d.Frontend = CauseRule, FrontendMemory })},
		{"allow once without grants", oneshot, with(Denied(oneshot, CauseUser, FrontendAnswers), func(d *Decision) { d.Decision = Allow })},
		{"allow always with rule and expires", full, with(allowOnce, func(d *Decision) {
			d.Persist, d.Grants = PersistAlways, []string{"fs.create"}
			d.Rule = &Rule{Scopes: map[string]string{"path": "/p/", "host": "h"}, WorkdirScope: WorkdirAll, Lifetime: "900", Expires: 1796031916}
		})},
		{"allow always without dimensions", bare, Decision{
			Version: Version, Decision: Allow, Persist: PersistAlways, Cause: CauseUser, Frontend: FrontendYad,
			Rule: &Rule{Scopes: map[string]string{}, Lifetime: LifetimeIndefinite}, RequestSHA256: bare.SHA256,
		}},
		{"deny always", full, with(Denied(full, CauseUser, FrontendTUI), func(d *Decision) {
			d.Persist, d.Message = PersistAlways, "never"
			d.Rule = &Rule{Scopes: map[string]string{"path": "/p/a", "host": "h"}, WorkdirScope: WorkdirSelected, Lifetime: LifetimeIndefinite}
		})},
		{"allow session", full, with(allowOnce, func(d *Decision) { d.Persist = PersistSession })},
		{"allow by a session approval", full, with(allowOnce, func(d *Decision) {
			d.Persist, d.Cause, d.Frontend = PersistSession, CauseSession, FrontendMemory
		})},
	} {
		got, err := ParseDecision(Encode(tc.d), tc.req)
		if err != nil {
			t.Errorf("%s: %v\n%s", tc.name, err, Encode(tc.d))
		} else if !reflect.DeepEqual(got, tc.d) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tc.name, got, tc.d)
		}
	}
}

// The decisions of the end-to-end tests answer their requests:
// testdata/decisions/NAME--CASE.json answers testdata/requests/NAME.json.
func TestParseDecisionTestdata(t *testing.T) {
	files, err := filepath.Glob("../testdata/decisions/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata decisions: %v", err)
	}
	for _, f := range files {
		name, _, _ := strings.Cut(filepath.Base(f), "--")
		req, err := os.ReadFile(filepath.Join("../testdata/requests", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDecision(out, mustParse(t, string(req))); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

// FuzzParseDecision: ParseDecision never panics and never returns a
// decision with an error; what it accepts encodes with Encode to bytes that
// it reads back as the same decision.
func FuzzParseDecision(f *testing.F) {
	reqs := []*Request{mustParse(f, fullRequest), mustParse(f, bareRequest), mustParse(f, oneshotRequest)}
	full := reqs[0]
	f.Add(uint8(0), []byte(`{"version":1,"id":"r1","decision":"allow","persist":"once","grants":["fs.write","fs.create"],"cause":"user","frontend":"tui","request_sha256":"`+full.SHA256+`"}`+"\n"))
	f.Add(uint8(0), []byte(`{"version":1,"id":"r1","decision":"allow","persist":"always","grants":["fs.create"],"rule":{"scopes":{"host":"h","path":"/p/"},"workdir_scope":"all","lifetime":"900","expires":1796031916},"cause":"user","frontend":"answers","request_sha256":"`+full.SHA256+`"}`+"\n"))
	f.Add(uint8(0), []byte(`{"version":1,"id":"r1","decision":"deny","persist":"always","message":"no\u2028\"x\"","rule":{"scopes":{"host":"h","path":"/p/a"},"workdir_scope":"selected","lifetime":"indefinite"},"cause":"user","frontend":"tui","stop":true,"request_sha256":"`+full.SHA256+`"}`+"\n"))
	f.Add(uint8(0), []byte(`{"version":1,"id":"r1","decision":"allow","persist":"session","grants":["fs.write","fs.create"],"cause":"session","frontend":"memory","request_sha256":"`+full.SHA256+`"}`+"\n"))
	f.Add(uint8(1), Encode(Denied(reqs[1], CauseTimeout, FrontendNone)))
	f.Add(uint8(1), []byte(`{ "version" : 1.0 , "decision":"deny","persist":"once","cause":"user","frontend":"tui","request_sha256":"`+reqs[1].SHA256+`"}`+"\n"))
	f.Add(uint8(2), []byte(`{"version":1,"decision":"allow","persist":"always","rule":{"scopes":{},"lifetime":"indefinite"},"cause":"user","frontend":"line","request_sha256":"`+reqs[2].SHA256+`"}`+"\n"))
	f.Add(uint8(2), []byte("{}\n{}\n"))
	f.Add(uint8(2), []byte("\xef\xbb\xbf{}\n"))
	f.Fuzz(func(t *testing.T, which uint8, out []byte) {
		sent := reqs[int(which)%len(reqs)]
		d, err := ParseDecision(out, sent)
		if err != nil {
			if !reflect.DeepEqual(d, Decision{}) {
				t.Fatalf("a decision came with the error %v", err)
			}
			return
		}
		again, err := ParseDecision(Encode(d), sent)
		if err != nil {
			t.Fatalf("accepted %q, but not its encoding %q: %v", out, Encode(d), err)
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("the encoding reads differently:\n%+v\n%+v", d, again)
		}
	})
}

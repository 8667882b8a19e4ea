package webinbox

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		tls  bool
		ok   bool
	}{
		{"127.0.0.1:8765", false, true},
		{"[::1]:8765", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:8765", false, false},
		{":8765", false, false},
		{"192.168.1.2:8765", false, false},
		{"example.com:443", false, false},
		{"0.0.0.0:8765", true, true},
		{"nonsense", false, false},
	} {
		if err := CheckAddr(tc.addr, tc.tls); (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q, %v) = %v", tc.addr, tc.tls, err)
		}
	}
}

func TestLoginRequired(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	stranger := e.browser(false)
	if code, _ := stranger.get("/"); code != http.StatusSeeOther {
		t.Errorf("the list without a session: %d, want a redirect to /login", code)
	}
	if code, _ := stranger.get("/events"); code != http.StatusUnauthorized {
		t.Errorf("the events without a session: %d", code)
	}
	if code, body := stranger.get("/login"); code != http.StatusOK || !strings.Contains(body, "Log in with your passkey") {
		t.Errorf("the login page: %d %s", code, body)
	}
	// No passkey yet: a login cannot begin.
	if code, body := stranger.post("/login/begin", nil); code != http.StatusConflict {
		t.Errorf("a login with no passkey: %d %s", code, body)
	}
	b := e.browser(true)
	if code, body := b.get("/"); code != http.StatusOK || !strings.Contains(body, "No request is pending") {
		t.Errorf("the list: %d %s", code, body)
	}
}

func TestPairingLink(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	b := e.browser(false)
	if code, _ := b.get("/pair/" + strings.Repeat("A", 52)); code != http.StatusForbidden {
		t.Errorf("a wrong pairing token: %d", code)
	}
	if code, body := b.get(e.pair); code != http.StatusOK || !strings.Contains(body, "Register a passkey") {
		t.Fatalf("the pairing page: %d %s", code, body)
	}
	code, body := b.post(e.pair+"/begin", nil)
	if code != http.StatusOK {
		t.Fatalf("pairing begins: %d %s", code, body)
	}
	var opts struct {
		PublicKey struct {
			Challenge string                `json:"challenge"`
			RP        struct{ ID string }   `json:"rp"`
			User      struct{ Name string } `json:"user"`
			Selection struct {
				ResidentKey      string `json:"residentKey"`
				UserVerification string `json:"userVerification"`
			} `json:"authenticatorSelection"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal([]byte(body), &opts); err != nil {
		t.Fatal(err)
	}
	pk := opts.PublicKey
	if pk.Challenge == "" || pk.RP.ID != "localhost" || pk.User.Name != e.approver ||
		pk.Selection.UserVerification != "required" || pk.Selection.ResidentKey != "required" {
		t.Errorf("registration options %s", body)
	}
	// A registration that is none: refused, counted, the link still unused.
	if code, _ := b.post(e.pair+"/finish", url.Values{"x": {"y"}}); code != http.StatusBadRequest {
		t.Errorf("a forged registration: %d", code)
	}
	if code, _ := b.get(e.pair); code != http.StatusOK {
		t.Errorf("the link after a forged registration: %d", code)
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	for _, origin := range []string{"http://localhost:8765", "https://inbox.example.org"} {
		e := newEnv(t, time.Millisecond)
		u, _ := url.Parse(origin)
		e.srv.secure = u.Scheme == "https"
		rec := httptest.NewRecorder()
		e.srv.newSession(rec)
		cs := rec.Result().Cookies()
		if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Secure != e.srv.secure {
			t.Errorf("%s: cookie %+v", origin, cs)
		}
	}
}

func TestOrigin(t *testing.T) {
	for _, o := range []string{"localhost:8765", "ftp://x", "http://", "https://x/path", "https://u@x", "https://x?q",
		"http://127.0.0.1:8765", "http://[::1]:8765", "http://inbox.example.org", "http://localhost.example.org"} {
		if _, err := parseOrigin(o); err == nil {
			t.Errorf("origin %q taken", o)
		}
	}
	for _, o := range []string{"http://localhost:8765", "http://inbox.localhost:8765", "http://LOCALHOST:8765", "https://inbox.example.org", "https://inbox.example.org:8443/"} {
		if _, err := parseOrigin(o); err != nil {
			t.Errorf("origin %q: %v", o, err)
		}
	}
}

func TestRateLimitOnFailedAuthentication(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	b := e.browser(false)
	for range maxFailures {
		if code, _ := b.get("/pair/wrong"); code != http.StatusForbidden {
			t.Fatalf("a wrong pairing token: %d", code)
		}
	}
	if code, _ := b.get(e.pair); code != http.StatusTooManyRequests {
		t.Errorf("the right link after %d failures: %d", maxFailures, code)
	}
	if code, _ := b.post("/login/begin", nil); code == http.StatusTooManyRequests {
		t.Errorf("a login refused after %d failed pairings", maxFailures)
	}
	e.srv.now = func() time.Time { return time.Now().Add(failWindow + time.Second) }
	if code, _ := b.get(e.pair); code != http.StatusOK {
		t.Errorf("the right link a minute later: %d", code)
	}
}

// A cookie no session has (another localhost server's) is no session,
// not a failure: a stranger cannot lock the approver out with it.
func TestUnknownSessionIsNotAFailure(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	forged := e.browser(false)
	u, _ := url.Parse(e.http.URL)
	forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: e.srv.cookie, Value: "forged", Path: "/"}})
	for range 2 * maxFailures {
		forged.get("/")
	}
	if code, _ := e.browser(false).get(e.pair); code != http.StatusOK {
		t.Errorf("after %d forged cookies, the pairing link: %d", 2*maxFailures, code)
	}
}

// Failures by strangers never refuse a request with a valid session.
func TestStrangersCannotLockTheApproverOut(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	approver := e.browser(true)
	stranger := e.browser(false)
	for range 2 * maxFailures {
		stranger.post("/login/finish", url.Values{"x": {"y"}})
		stranger.post("/pair/wrong/finish", nil)
	}
	if code, _ := stranger.post("/login/begin", nil); code != http.StatusTooManyRequests {
		t.Errorf("the stranger's logins are not limited: %d", code)
	}
	if code, body := approver.get("/"); code != http.StatusOK {
		t.Errorf("the approver's session after a stranger's failures: %d %s", code, body)
	}
}

func TestSessionCookieNamedForThePort(t *testing.T) {
	for origin, want := range map[string]string{"http://localhost:8765": "askperm_session_8765", "http://localhost:9000": "askperm_session_9000",
		"http://inbox.localhost": "askperm_session_80", "https://inbox.example.org": "__Host-askperm_session"} {
		u, _ := url.Parse(origin)
		if got := cookieName(u); got != want {
			t.Errorf("%s: %s, want %s", origin, got, want)
		}
	}
}

// DNS rebinding (another name for this address) and other origins'
// POSTs are refused before any handler.
func TestHostAndOriginChecked(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	for _, tc := range []struct {
		method, path, host, origin string
		code                       int
	}{
		{"GET", "/login", "evil.example:8765", "", http.StatusMisdirectedRequest},
		{"GET", "/login", "127.0.0.1" + strings.TrimPrefix(e.srv.host, "localhost"), "", http.StatusMisdirectedRequest},
		{"POST", "/login/begin", "evil.example", e.srv.origin, http.StatusMisdirectedRequest},
		{"POST", "/login/begin", e.srv.host, "", http.StatusForbidden},
		{"POST", "/login/begin", e.srv.host, "null", http.StatusForbidden},
		{"POST", "/login/begin", e.srv.host, "http://evil.example", http.StatusForbidden},
		{"POST", "/login/begin", e.srv.host, "http://localhost:1", http.StatusForbidden},
		{"GET", "/login", e.srv.host, "", http.StatusOK},
		{"GET", "/login", strings.ToUpper(e.srv.host), "", http.StatusOK},
		{"POST", "/login/begin", e.srv.host, e.srv.origin, http.StatusConflict}, // no passkey yet
	} {
		req, _ := http.NewRequest(tc.method, e.http.URL+tc.path, nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != tc.code {
			t.Errorf("%s %s Host %q Origin %q: %d, want %d", tc.method, tc.path, tc.host, tc.origin, r.StatusCode, tc.code)
		}
	}
}

// noAnswer fails when approver wrote an answer to req.
func (e *env) noAnswer(req *decision.Request) {
	e.t.Helper()
	kv := e.host.KV(e.host.Config.Names().AnswersBucket())
	if _, err := kv.Get(context.Background(), team.AnswerKey("alpha", e.host.Ask(req), e.approver)); err == nil {
		e.t.Errorf("an answer to %s was written", req.SHA256)
	}
}

func TestForgedPostsRefused(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	req, id := e.publish(request(t, "write-file.json"), "one")
	other, otherID := e.publish(request(t, "write-file.json"), "two")
	b := e.browser(true)
	b.get("/r/" + id)
	good := b.fields(id, req, "choice", "deny-once", "message", "no")

	noCSRF := b.fields(id, req, "choice", "deny-once")
	noCSRF.Del("csrf")
	wrongCSRF := b.fields(id, req, "choice", "deny-once")
	wrongCSRF.Set("csrf", "x"+b.csrf)
	otherDigest := b.fields(id, req, "choice", "deny-once")
	otherDigest.Set("digest", other.SHA256)
	otherIDField := b.fields(id, req, "choice", "deny-once")
	otherIDField.Set("id", otherID)
	for _, path := range []string{"/choice", "/rule", "/allow/begin", "/allow/finish", "/visible"} {
		for name, tc := range map[string]struct {
			path string
			form url.Values
			code int
		}{
			"no CSRF token":                       {"/r/" + id + path, noCSRF, http.StatusForbidden},
			"a wrong CSRF token":                  {"/r/" + id + path, wrongCSRF, http.StatusForbidden},
			"another request's digest":            {"/r/" + id + path, otherDigest, http.StatusConflict},
			"another request's id":                {"/r/" + id + path, otherIDField, http.StatusConflict},
			"the form of one, the URL of another": {"/r/" + otherID + path, good, http.StatusConflict},
			"no such request":                     {"/r/" + strings.Repeat("0", 32) + path, good, http.StatusGone},
		} {
			if code, body := b.post(tc.path, tc.form); code != tc.code {
				t.Errorf("%s %s: %d, want %d: %s", path, name, code, tc.code, body)
			}
		}
	}
	// A cookie no session has, with the right token and fields.
	forged := e.browser(false)
	u, _ := url.Parse(e.http.URL)
	forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: e.srv.cookie, Value: "forged", Path: "/"}})
	if code, _ := forged.post("/r/"+id+"/choice", good); code != http.StatusUnauthorized {
		t.Errorf("a forged cookie: %d", code)
	}
	// Another browser's session with this one's CSRF token.
	if code, _ := e.browser(true).post("/r/"+id+"/choice", good); code != http.StatusForbidden {
		t.Errorf("another session with this session's token: %d", code)
	}
	// An allow posted as a plain form: it needs the passkey.
	if code, body := b.post("/r/"+id+"/choice", b.fields(id, req, "choice", "allow-once")); code != http.StatusUnprocessableEntity || !strings.Contains(body, "passkey") {
		t.Errorf("a plain allow: %d %s", code, body)
	}
	e.noAnswer(req)
	e.noAnswer(other)

	if code, body := b.post("/r/"+id+"/choice", good); code != http.StatusOK || !strings.Contains(body, "Answered") {
		t.Fatalf("the genuine post: %d %s", code, body)
	}
	if d := e.host.Answer(req, e.approver); d.Decision != decision.Deny || d.Message != "no" {
		t.Errorf("answer %+v", d)
	}
	if code, _ := b.post("/r/"+id+"/choice", good); code != http.StatusConflict {
		t.Errorf("the same post replayed: %d", code)
	}
}

func TestAllowCountsOnlyAfterArmDelay(t *testing.T) {
	e := newEnv(t, 500*time.Millisecond)
	clock := time.Now()
	e.srv.now = func() time.Time { return clock }
	e.srv.keys.Credentials = []webauthn.Credential{{ID: []byte("a passkey")}}
	req, id := e.publish(request(t, "write-file.json"), "armed")
	b := e.browser(true)
	b.get("/r/" + id)
	allow := b.fields(id, req, "choice", "allow-once")
	early := func(when string) {
		t.Helper()
		if code, body := b.post("/r/"+id+"/allow/begin", allow); code != http.StatusUnprocessableEntity || !strings.Contains(body, "counts only 500ms after the question was fully visible") {
			t.Errorf("an allow %s: %d %s", when, code, body)
		}
	}
	early("before the page said it was visible")
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(499 * time.Millisecond)
	early("499ms after")
	b.post("/r/"+id+"/visible", b.fields(id, req)) // visible again: re-armed
	clock = clock.Add(499 * time.Millisecond)
	early("499ms after the page became visible again")
	b.get("/r/" + id) // served anew: disarmed
	clock = clock.Add(time.Second)
	early("after the page was served anew, no beacon")
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(500 * time.Millisecond)
	code, body := b.post("/r/"+id+"/allow/begin", allow)
	if code != http.StatusOK || !strings.Contains(body, `"userVerification":"required"`) {
		t.Fatalf("an allow 500ms after: %d %s", code, body)
	}
	// The assertion is the passkey's or nothing: a forged one is refused,
	// and the allow begun is gone with it.
	finish := b.fields(id, req, "credential", `{"id":"x","rawId":"x","type":"public-key","response":{}}`)
	if code, _ := b.post("/r/"+id+"/allow/finish", finish); code != http.StatusForbidden {
		t.Errorf("a forged assertion: %d", code)
	}
	if code, _ := b.post("/r/"+id+"/allow/finish", finish); code != http.StatusForbidden {
		t.Errorf("a finish with no allow begun: %d", code)
	}
	e.noAnswer(req)
}

func TestAllowChallengeBindsRequestAndAnswer(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	e.srv.keys.Credentials = []webauthn.Credential{{ID: []byte("a passkey")}}
	req, id := e.publish(request(t, "write-file.json"), "bound")
	b := e.browser(true)
	b.get("/r/" + id)
	b.post("/r/"+id+"/visible", b.fields(id, req))
	time.Sleep(5 * time.Millisecond) // past the 1 ms arming delay
	challenge := func(kv ...string) string {
		t.Helper()
		code, body := b.post("/r/"+id+"/allow/begin", b.fields(id, req, kv...))
		if code != http.StatusOK {
			t.Fatalf("begin %v: %d %s", kv, code, body)
		}
		var o struct {
			PublicKey struct{ Challenge string } `json:"publicKey"`
		}
		_ = json.Unmarshal([]byte(body), &o)
		e.srv.mu.Lock()
		defer e.srv.mu.Unlock()
		for _, se := range e.srv.sessions {
			if p, ok := se.allows[id]; ok && p.data.Challenge == o.PublicKey.Challenge {
				return p.data.Challenge
			}
		}
		t.Fatalf("no allow pending with challenge %s", o.PublicKey.Challenge)
		return ""
	}
	seen := map[string]bool{}
	for _, kv := range [][]string{
		{"choice", "allow-once"},
		{"choice", "allow-once"},
		{"choice", "allow-always", "stage", "rule", "q0", "fs.write", "q1", "/home/a/p/", "q2", "all", "q3", "900"},
		{"choice", "allow-always", "stage", "rule", "q0", "fs.write", "q1", "*", "q2", "all", "q3", "900"},
	} {
		c := challenge(kv...)
		if seen[c] {
			t.Errorf("challenge %s twice", c)
		}
		seen[c] = true
	}
	if code, _ := b.post("/r/"+id+"/allow/begin", b.fields(id, req, "choice", "allow-always")); code != http.StatusUnprocessableEntity {
		t.Errorf("an always-allow begun at stage choice: %d", code)
	}
	if code, _ := b.post("/r/"+id+"/allow/begin", b.fields(id, req, "choice", "deny-once")); code != http.StatusUnprocessableEntity {
		t.Errorf("a deny begun as an allow: %d", code)
	}
}

func TestDenyNeedsNoArming(t *testing.T) {
	e := newEnv(t, time.Hour)
	req, id := e.publish(request(t, "write-file.json"), "deny")
	b := e.browser(true)
	b.get("/r/" + id)
	if code, body := b.post("/r/"+id+"/choice", b.fields(id, req, "choice", "deny-once", "message", "not on Fridays")); code != http.StatusOK {
		t.Fatalf("deny: %d %s", code, body)
	}
	if d := e.host.Answer(req, e.approver); d.Decision != decision.Deny || d.Message != "not on Fridays" {
		t.Errorf("answer %+v", d)
	}
}

func TestRuleStage(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	req, id := e.publish(request(t, "write-file.json"), "always")
	b := e.browser(true)
	b.get("/r/" + id)
	code, body := b.post("/r/"+id+"/choice", b.fields(id, req, "choice", "allow-always"))
	if code != http.StatusOK || !strings.Contains(body, `action="/r/`+id+`/rule"`) || !strings.Contains(body, "files under /home/a/p/") {
		t.Fatalf("stage rule: %d %s", code, body)
	}
	if code, body := b.post("/r/"+id+"/rule", b.fields(id, req, "choice", "allow-always", "stage", "rule", "back", "1")); code != http.StatusOK || !strings.Contains(body, `/choice"`) {
		t.Errorf("Back: %d %s", code, body)
	}
	if code, _ := b.post("/r/"+id+"/rule", b.fields(id, req, "choice", "allow-always", "stage", "rule", "q0", "fs.write")); code != http.StatusUnprocessableEntity {
		t.Errorf("an allow-always saved without the passkey: %d", code)
	}
	if code, _ := b.post("/r/"+id+"/rule", b.fields(id, req, "choice", "deny-always", "stage", "rule", "q0", "/nowhere/")); code != http.StatusUnprocessableEntity {
		t.Errorf("a scope not offered: %d", code)
	}
	// deny-always asks the path's scope, the workdir, the lifetime.
	code, body = b.post("/r/"+id+"/rule", b.fields(id, req, "choice", "deny-always", "stage", "rule",
		"q0", "/home/a/p/", "q1", "all", "q2", "900"))
	if code != http.StatusOK {
		t.Fatalf("save rule: %d %s", code, body)
	}
	d := e.host.Answer(req, e.approver)
	if d.Decision != decision.Deny || d.Rule == nil || d.Rule.Scopes["path"] != "/home/a/p/" || d.Rule.WorkdirScope != "all" || d.Rule.Lifetime != "900" {
		js, _ := json.Marshal(d)
		t.Errorf("the rule: %s", js)
	}
}

// hostileText is generated request text built of markup, script, bidi,
// invisible and width-disputed pieces.
func hostileText(r *rand.Rand) string {
	pieces := []string{`<script>window.pwned=1</script>`, `<img src=x onerror="window.pwned=1">`, `"><svg onload=alert(1)>`,
		"\u202e", "\u2066", "\u200b", "\u3164", "\x1b[2J", "&amp;", "'", `"`, "</textarea>", "{{.CSRF}}", "a", " ", "\n", "界", "\U0001F600"}
	var b strings.Builder
	for range 1 + r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestHostileTextNeverMarkup(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	b := e.browser(true)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 30 {
		var m map[string]any
		_ = json.Unmarshal(request(t, "write-file.json"), &m)
		text := hostileText(r)
		m["reason"], m["tool"], m["session_id"] = text, "t"+text, text
		m["dimensions"].([]any)[0].(map[string]any)["value"] = text
		raw, _ := json.Marshal(m)
		_, id := e.publish(raw, "hostile"+string(rune('a'+i)))
		for _, path := range []string{"/", "/r/" + id} {
			_, body := b.get(path)
			for _, tag := range []string{"<script", "<img", "<svg", "<textarea"} {
				want := 0
				if tag == "<script" {
					want = 1 // the page's own
				}
				if n := strings.Count(body, tag); n != want {
					t.Fatalf("%q on %s: %d %s, want %d:\n%s", text, path, n, tag, want, body)
				}
			}
			for _, c := range []string{"\u202e", "\u2066", "\u200b", "\u3164", "\x1b"} {
				if strings.Contains(body, c) {
					t.Fatalf("%q on %s: %q reached the page unescaped", text, path, c)
				}
			}
		}
	}
}

func TestPairingLinkExpires(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	start := time.Now()
	for _, tc := range []struct {
		after time.Duration
		ok    bool
	}{{PairingLife - time.Second, true}, {PairingLife, false}, {30 * 24 * time.Hour, false}} {
		e.srv.mu.Lock()
		e.srv.now = func() time.Time { return start.Add(tc.after) }
		e.srv.failures = map[string][]time.Time{}
		e.srv.mu.Unlock()
		b := e.browser(false)
		code, _ := b.get(e.pair)
		code2, _ := b.post(e.pair+"/begin", nil)
		if (code == http.StatusOK) != tc.ok || (code2 == http.StatusOK) != tc.ok {
			t.Errorf("the pairing link %v later: page %d, begin %d", tc.after, code, code2)
		}
	}
}

func TestPairingLinkOnlyWhenAskedOnceAPasskeyExists(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	if e.pair == "" {
		t.Fatal("no pairing link without a passkey")
	}
	keys := *e.srv.keys
	keys.Credentials = []webauthn.Credential{{ID: []byte("a passkey")}}
	if err := keys.save(e.srv.keysPath); err != nil {
		t.Fatal(err)
	}
	c := e.srv.Config
	if _, pair, err := New(c); err != nil || pair != "" {
		t.Errorf("with a passkey, a link was offered unasked: %q %v", pair, err)
	}
	c.Pair = true
	if _, pair, err := New(c); err != nil || !strings.Contains(pair, "/pair/") {
		t.Errorf("with --pair, no link: %q %v", pair, err)
	}
}

// Every stage served disarms (the rule stage is new content), and a page
// hidden disarms on the server, not only in the browser.
func TestStagesAndHidingDisarm(t *testing.T) {
	e := newEnv(t, 500*time.Millisecond)
	clock := time.Now()
	e.srv.mu.Lock()
	e.srv.now = func() time.Time { return clock }
	e.srv.keys.Credentials = []webauthn.Credential{{ID: []byte("a passkey")}}
	e.srv.mu.Unlock()
	req, id := e.publish(request(t, "write-file.json"), "rule")
	b := e.browser(true)
	b.get("/r/" + id)
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(time.Second)
	if code, body := b.post("/r/"+id+"/choice", b.fields(id, req, "choice", "allow-always")); code != http.StatusOK || !strings.Contains(body, "/rule\"") {
		t.Fatalf("stage rule: %d %s", code, body)
	}
	allow := b.fields(id, req, "choice", "allow-always", "stage", "rule", "q0", "fs.write", "q1", "/home/a/p/", "q2", "all", "q3", "900")
	armed := func() bool {
		code, body := b.post("/r/"+id+"/allow/begin", allow)
		if code != http.StatusOK && !strings.Contains(body, "not yet counted") {
			t.Fatalf("allow/begin: %d %s", code, body)
		}
		return code == http.StatusOK
	}
	if armed() {
		t.Error("an allow counted at stage rule the moment it was served")
	}
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(time.Second)
	if !armed() {
		t.Fatal("stage rule visible a second: still not armed")
	}
	if code, _ := b.post("/r/"+id+"/hidden", b.fields(id, req)); code != http.StatusNoContent {
		t.Fatalf("hidden: %d", code)
	}
	clock = clock.Add(time.Minute)
	if armed() {
		t.Error("an allow counted after the page was hidden and not shown again")
	}
	// The beacon is a POST like any other: no CSRF token, no effect.
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(time.Second)
	noCSRF := b.fields(id, req)
	noCSRF.Del("csrf")
	if code, _ := b.post("/r/"+id+"/hidden", noCSRF); code != http.StatusForbidden || !armed() {
		t.Errorf("a hidden beacon without the CSRF token: %d", code)
	}
}

package webinbox

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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

func TestPairingIsOneTimeAndRequired(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	stranger := e.browser(false)
	if code, _ := stranger.get("/"); code != http.StatusUnauthorized {
		t.Errorf("the list without a session: %d", code)
	}
	b := e.browser(true)
	if code, body := b.get("/"); code != http.StatusOK || !strings.Contains(body, "No request is pending") {
		t.Errorf("the list: %d %s", code, body)
	}
	if code, _ := stranger.get(e.pair); code != http.StatusForbidden {
		t.Errorf("the pairing link used twice: %d", code)
	}
	r, err := http.Get(e.http.URL + e.pair)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("pairing again: %d", r.StatusCode)
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := c.Get(e.http.URL + e.pair)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	cs := r.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Secure {
		t.Errorf("cookie %+v", cs)
	}
	e.srv.Secure = true
	e.srv.pairing = "again"
	r, err = c.Get(e.http.URL + "/pair/again")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if cs := r.Cookies(); len(cs) != 1 || !cs[0].Secure {
		t.Errorf("behind TLS, cookie %+v", cs)
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
		t.Errorf("the right token after %d failures: %d", maxFailures, code)
	}
	e.srv.now = func() time.Time { return time.Now().Add(failWindow + time.Second) }
	if code, _ := b.get(e.pair); code != http.StatusOK {
		t.Errorf("the right token a minute later: %d", code)
	}
}

// noAnswer fails when approver wrote an answer to req.
func (e *env) noAnswer(req *decision.Request) {
	e.t.Helper()
	kv := e.host.KV(e.host.Config.Names().AnswersBucket())
	if _, err := kv.Get(context.Background(), team.AnswerKey("alpha", req.SHA256, e.approver)); err == nil {
		e.t.Errorf("an answer to %s was written", req.SHA256)
	}
}

func TestForgedPostsRefused(t *testing.T) {
	e := newEnv(t, time.Millisecond)
	req, id := e.publish(request(t, "write-file.json"), "one")
	other, otherID := e.publish(request(t, "write-file.json"), "two")
	b := e.browser(true)
	b.get("/r/" + id)
	b.post("/r/"+id+"/visible", b.fields(id, req))
	time.Sleep(5 * time.Millisecond) // past the 1 ms arming delay
	good := b.fields(id, req, "choice", "allow-once")

	noCSRF := b.fields(id, req, "choice", "allow-once")
	noCSRF.Del("csrf")
	wrongCSRF := b.fields(id, req, "choice", "allow-once")
	wrongCSRF.Set("csrf", "x"+b.csrf)
	otherDigest := b.fields(id, req, "choice", "allow-once")
	otherDigest.Set("digest", other.SHA256)
	otherIDField := b.fields(id, req, "choice", "allow-once")
	otherIDField.Set("id", otherID)
	for name, tc := range map[string]struct {
		path string
		form url.Values
		code int
	}{
		"no CSRF token":                       {"/r/" + id + "/choice", noCSRF, http.StatusForbidden},
		"a wrong CSRF token":                  {"/r/" + id + "/choice", wrongCSRF, http.StatusForbidden},
		"another request's digest":            {"/r/" + id + "/choice", otherDigest, http.StatusConflict},
		"another request's id":                {"/r/" + id + "/choice", otherIDField, http.StatusConflict},
		"the form of one, the URL of another": {"/r/" + otherID + "/choice", good, http.StatusConflict},
		"no such request":                     {"/r/" + strings.Repeat("0", 32) + "/choice", good, http.StatusGone},
	} {
		if code, body := b.post(tc.path, tc.form); code != tc.code {
			t.Errorf("%s: %d, want %d: %s", name, code, tc.code, body)
		}
	}
	// A cookie no session has, with the right token and fields.
	forged := e.browser(false)
	u, _ := url.Parse(e.http.URL)
	forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: Cookie, Value: "forged", Path: "/"}})
	if code, _ := forged.post("/r/"+id+"/choice", good); code != http.StatusUnauthorized {
		t.Errorf("a forged cookie: %d", code)
	}
	// Another browser's session with this one's CSRF token.
	second := e.browser(false)
	e.srv.mu.Lock()
	e.srv.pairing = "second"
	e.srv.mu.Unlock()
	second.get("/pair/second")
	if code, _ := second.post("/r/"+id+"/choice", good); code != http.StatusForbidden {
		t.Errorf("another session with this session's token: %d", code)
	}
	e.noAnswer(req)
	e.noAnswer(other)

	if code, body := b.post("/r/"+id+"/choice", good); code != http.StatusOK || !strings.Contains(body, "Answered") {
		t.Fatalf("the genuine post: %d %s", code, body)
	}
	if d := e.host.Answer(req, e.approver); d.Decision != decision.Allow || d.Persist != decision.PersistOnce {
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
	req, id := e.publish(request(t, "write-file.json"), "armed")
	b := e.browser(true)
	b.get("/r/" + id)
	allow := b.fields(id, req, "choice", "allow-once")
	if code, body := b.post("/r/"+id+"/choice", allow); code != http.StatusUnprocessableEntity || !strings.Contains(body, "counts only 500ms after the question was fully visible") {
		t.Errorf("an allow before the page said it was visible: %d %s", code, body)
	}
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(499 * time.Millisecond)
	if code, _ := b.post("/r/"+id+"/choice", allow); code != http.StatusUnprocessableEntity {
		t.Errorf("an allow 499ms after: %d", code)
	}
	b.post("/r/"+id+"/visible", b.fields(id, req)) // visible again: re-armed
	clock = clock.Add(499 * time.Millisecond)
	if code, _ := b.post("/r/"+id+"/choice", allow); code != http.StatusUnprocessableEntity {
		t.Errorf("an allow 499ms after the page became visible again: %d", code)
	}
	b.get("/r/" + id) // served anew: disarmed
	clock = clock.Add(time.Second)
	if code, _ := b.post("/r/"+id+"/choice", allow); code != http.StatusUnprocessableEntity {
		t.Errorf("an allow after the page was served anew, no beacon: %d", code)
	}
	e.noAnswer(req)
	b.post("/r/"+id+"/visible", b.fields(id, req))
	clock = clock.Add(500 * time.Millisecond)
	if code, body := b.post("/r/"+id+"/choice", allow); code != http.StatusOK {
		t.Fatalf("an allow 500ms after: %d %s", code, body)
	}
	if d := e.host.Answer(req, e.approver); d.Decision != decision.Allow {
		t.Errorf("answer %+v", d)
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
	b.post("/r/"+id+"/visible", b.fields(id, req))
	time.Sleep(5 * time.Millisecond)
	code, body := b.post("/r/"+id+"/choice", b.fields(id, req, "choice", "allow-always"))
	if code != http.StatusOK || !strings.Contains(body, `action="/r/`+id+`/rule"`) || !strings.Contains(body, "files under /home/a/p/") {
		t.Fatalf("stage rule: %d %s", code, body)
	}
	if code, body := b.post("/r/"+id+"/rule", b.fields(id, req, "choice", "allow-always", "back", "1")); code != http.StatusOK || !strings.Contains(body, `/choice"`) {
		t.Errorf("Back: %d %s", code, body)
	}
	// The questions: grants, the path's scope, the workdir, the lifetime.
	code, body = b.post("/r/"+id+"/rule", b.fields(id, req, "choice", "allow-always",
		"q0", "fs.write", "q1", "/home/a/p/", "q2", "all", "q3", "900"))
	if code != http.StatusOK {
		t.Fatalf("save rule: %d %s", code, body)
	}
	d := e.host.Answer(req, e.approver)
	if d.Rule == nil || d.Rule.Scopes["path"] != "/home/a/p/" || d.Rule.WorkdirScope != "all" || d.Rule.Lifetime != "900" {
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

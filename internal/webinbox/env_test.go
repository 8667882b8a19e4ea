package webinbox

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/inbox"
	"github.com/askperm/askperm/internal/inbox/inboxtest"
	"github.com/askperm/askperm/internal/team/wire"
)

// env is a team's server with host alpha publishing, and one approver's
// web inbox served over httptest.
type env struct {
	t        *testing.T
	srv      *Server
	http     *httptest.Server
	pair     string // the pairing path
	host     *inboxtest.Host
	approver string // public key
	now      time.Time

	mu         sync.Mutex
	registered [][]byte // the passkeys the server said were registered
}

func newEnv(t *testing.T, armDelay time.Duration) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ap := inboxtest.StartApprover(ctx, t)
	kp, err := wire.LoadKey(ap.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := inbox.Watch(ctx, ap.JS, ap.Config, func(err error) { t.Log(err) })
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	hs.Start()
	t.Cleanup(hs.Close)
	_, port, _ := net.SplitHostPort(hs.Listener.Addr().String())
	e := &env{t: t, http: hs, host: inboxtest.NewHost(t, ap.URL, ap.Host, ap.Public), approver: ap.Public}
	srv, pair, err := New(Config{Team: tt, Key: kp, ArmDelay: armDelay, Origin: "http://localhost:" + port,
		Passkeys: filepath.Join(t.TempDir(), PasskeyFile), Registered: func(id []byte, _ time.Time) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.registered = append(e.registered, id)
		}})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv.Handler()
	go srv.Broadcast(ctx)
	e.srv, e.pair = srv, strings.TrimPrefix(pair, srv.Origin)
	return e
}

// request is testdata/requests/name.
func request(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "requests", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// publish publishes raw with id as host alpha and waits for the inbox to
// list it; it returns the request and its page's id.
func (e *env) publish(raw []byte, id string) (*decision.Request, string) {
	e.t.Helper()
	req := e.host.Publish(raw, id, time.Now().Add(time.Hour))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if en, _ := e.srv.Team.List.Get("alpha", e.host.Ask(req)); en != nil {
			return req, ID(en)
		}
	}
	e.t.Fatalf("request %s never listed", id)
	return nil, ""
}

// browser is a client with a cookie jar, logged in unless told not to
// (a session as a passkey login starts one).
type browser struct {
	t    *testing.T
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser(pair bool) *browser {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{t: e.t, e: e, c: &http.Client{Jar: jar, Transport: asOrigin{e}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if pair {
		rec := httptest.NewRecorder()
		e.srv.mu.Lock()
		e.srv.newSession(rec)
		e.srv.mu.Unlock()
		u, _ := url.Parse(e.http.URL)
		jar.SetCookies(u, rec.Result().Cookies())
	}
	return b
}

// asOrigin sends requests as a browser on the page's origin does: Host
// is the origin's, and a POST says its Origin.
type asOrigin struct{ e *env }

func (a asOrigin) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = a.e.srv.host
	if r.Method == http.MethodPost {
		r.Header.Set("Origin", a.e.srv.origin)
	}
	return http.DefaultTransport.RoundTrip(r)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	r, err := b.c.Get(b.e.http.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer r.Body.Close()
	var sb strings.Builder
	_, _ = io.Copy(&sb, r.Body)
	if m := csrfField.FindStringSubmatch(sb.String()); m != nil {
		b.csrf = m[1]
	}
	return r.StatusCode, sb.String()
}

func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	r, err := b.c.PostForm(b.e.http.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer r.Body.Close()
	var sb strings.Builder
	_, _ = io.Copy(&sb, r.Body)
	return r.StatusCode, sb.String()
}

// fields are a form's hidden fields for request id of req, then kv.
func (b *browser) fields(id string, req *decision.Request, kv ...string) url.Values {
	v := url.Values{"csrf": {b.csrf}, "id": {id}, "digest": {req.SHA256}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

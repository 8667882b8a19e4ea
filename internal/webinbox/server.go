// Package webinbox is team mode's inbox as a web page (askperm inbox
// --web): the list of pending requests and the two-stage form, served by
// askperm itself. A browser is paired through a one-time link that
// registers a passkey for the approver; later visits log in with it, and
// each allow is confirmed by a fresh passkey assertion whose challenge
// binds the request and the answer, before the answer is signed with the
// approver's key. Request text reaches the page only through form's
// renderer and then html/template's escaping; a request is addressed by
// an opaque id, never its text; every POST carries the session's CSRF
// token, the request's id and its digest; an allow counts only the
// arming delay after the page said the request was visible.
package webinbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/internal/inbox"
	"github.com/askperm/askperm/internal/team"
)

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{"join": strings.Join}).ParseFS(assets, "assets/*.html"))

// Config is what a Server serves.
type Config struct {
	Team *inbox.Team
	// Key signs the answers.
	Key nkeys.KeyPair
	// ArmDelay is how long after the page said the request was visible
	// an allow counts (prompt.Options.Arming); read under the server's
	// lock once it serves.
	ArmDelay time.Duration
	// Origin is the page's origin as the browser sees it
	// (http://localhost:8765, https://inbox.example.org): passkeys are
	// bound to its host name, and an https origin makes the session
	// cookie Secure.
	Origin string
	// Passkeys is the file of the approver's passkeys (PasskeyFile in
	// the state directory).
	Passkeys string
	// Pair offers a pairing link even when a passkey is registered
	// already (one always is when none is).
	Pair bool
	// Registered, when set, is told of every passkey registered, so the
	// approver's terminal can say so.
	Registered func(id []byte, at time.Time)
}

// Server serves one approver's inbox.
type Server struct {
	Config
	secure   bool
	host     string // the origin's host[:port], the only Host header served
	origin   string // the origin as a browser's Origin header says it
	cookie   string // the session cookie's name
	rp       *webauthn.WebAuthn
	keysPath string

	now func() time.Time

	mu         sync.Mutex
	keys       *Passkeys
	pairing    string    // the one-time pairing token; "" once used or when none is offered
	pairingEnd time.Time // when the pairing token expires
	sessions   map[string]*session
	ceremonies map[string]ceremony    // pairings and logins begun, by challenge
	failures   map[string][]time.Time // failed authentications by operation, the last failWindow
	subs       map[chan struct{}]struct{}
}

// session is one logged-in browser.
type session struct {
	csrf    string
	visible map[string]time.Time    // request id → when the page last said it was visible
	allows  map[string]pendingAllow // request id → the allow waiting for its passkey
}

// cookieName is the session cookie's name for origin u. Cookies ignore
// the port, so on plain http the name carries it: another local server's
// cookie does not overwrite this one's. Over https, the __Host- prefix
// keeps it to this host and Secure.
func cookieName(u *url.URL) string {
	if u.Scheme == "https" {
		return "__Host-askperm_session"
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return "askperm_session_" + port
}

// Failed authentications of one operation (pairing, login, allow): past
// maxFailures in failWindow, that operation is refused until the window
// has passed; a request with a valid session is never refused for them.
const (
	maxFailures = 5
	failWindow  = time.Minute
)

// PairingLife is how long a pairing link works: a link seen over a
// shoulder or left in a terminal's scrollback is of no use later.
const PairingLife = 5 * time.Minute

// New returns the server of c, and its one-time pairing URL ("" when a
// passkey is registered and c.Pair is not set): the first browser to
// register a passkey through it within PairingLife is paired.
func New(c Config) (*Server, string, error) {
	u, err := parseOrigin(c.Origin)
	if err != nil {
		return nil, "", err
	}
	rp, err := relyingParty(c.Origin)
	if err != nil {
		return nil, "", fmt.Errorf("--origin %q: %w", c.Origin, err)
	}
	keys, err := LoadPasskeys(c.Passkeys, team.PublicKey(c.Key))
	if err != nil {
		return nil, "", err
	}
	s := &Server{Config: c, secure: u.Scheme == "https", host: u.Host, origin: u.Scheme + "://" + u.Host, cookie: cookieName(u), rp: rp, failures: map[string][]time.Time{}, keysPath: c.Passkeys, now: time.Now, keys: keys,
		sessions: map[string]*session{}, ceremonies: map[string]ceremony{}, subs: map[chan struct{}]struct{}{}}
	if len(keys.Credentials) > 0 && !c.Pair {
		return s, "", nil
	}
	s.pairing, s.pairingEnd = token(), s.now().Add(PairingLife)
	return s, c.Origin + "/pair/" + s.pairing, nil
}

// parseOrigin checks an origin: http or https, a host, nothing more.
func parseOrigin(origin string) (*url.URL, error) {
	u, err := url.Parse(origin)
	if err != nil {
		return nil, fmt.Errorf("--origin %q: %w", origin, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("--origin %q: give scheme, host and port only, e.g. https://inbox.example.org", origin)
	}
	if u.Scheme == "http" && !LocalhostName(u.Hostname()) {
		return nil, fmt.Errorf("--origin %q: plain http only for localhost (the session and the pairing link would cross the network in the clear, and an address may be taken by another program): use https", origin)
	}
	return u, nil
}

// LocalhostName reports whether host is localhost or a name under it,
// which browsers resolve to a loopback address and treat as secure.
func LocalhostName(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func constantEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func token() string { return rand.Text() + rand.Text() }

// CheckAddr refuses a listening address off the loopback interface
// unless the page is served over TLS: the session cookie and the
// pairing link would cross the network in the clear.
func CheckAddr(addr string, tls bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--web %q: %w", addr, err)
	}
	if tls {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--web %q is not a loopback address: serve it with --tls-cert and --tls-key, or listen on 127.0.0.1 and forward it (SSH, a tunnel)", addr)
}

// ID is the opaque id of e in URLs and forms: no request text.
func ID(e *inbox.Entry) string {
	h := sha256.Sum256([]byte(e.ID()))
	return hex.EncodeToString(h[:16])
}

// Handler is the server's routes.
func (s *Server) Handler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /pair/{token}", s.pairPage)
	m.HandleFunc("POST /pair/{token}/begin", s.withPairing(s.pairBegin))
	m.HandleFunc("POST /pair/{token}/finish", s.withPairing(s.pairFinish))
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login/begin", s.loginBegin)
	m.HandleFunc("POST /login/finish", s.loginFinish)
	m.Handle("GET /assets/", http.FileServerFS(assets))
	m.HandleFunc("GET /{$}", s.auth(s.list))
	m.HandleFunc("GET /events", s.auth(s.events))
	m.HandleFunc("GET /r/{id}", s.auth(s.request))
	m.HandleFunc("POST /r/{id}/visible", s.post(s.visible))
	m.HandleFunc("POST /r/{id}/hidden", s.post(s.hidden))
	m.HandleFunc("POST /r/{id}/choice", s.post(s.choice))
	m.HandleFunc("POST /r/{id}/rule", s.post(s.rule))
	m.HandleFunc("POST /r/{id}/allow/begin", s.post(s.allowBegin))
	m.HandleFunc("POST /r/{id}/allow/finish", s.post(s.allowFinish))
	return headers(s.guard(m))
}

// guard refuses a request named for another host (DNS rebinding: another
// site's name pointed at this address) and a POST whose Origin is not the
// page's (another site's form or script; browsers send Origin on POSTs).
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Host, s.host) {
			http.Error(w, "askperm inbox: this page is served only as "+s.origin, http.StatusMisdirectedRequest)
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Origin") != s.origin {
			http.Error(w, "askperm inbox: a POST from another origin, or without one", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// headers forbids framing, inline scripts and every origin but this one.
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser
		// sends Origin: null on its own POSTs, which guard refuses.
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// Operations whose failures are counted apart: a stranger's failed
// pairings or logins do not refuse the approver's allows.
const (
	opPair  = "pair"
	opLogin = "login"
	opAllow = "allow"
)

// limited reports whether authentication for op is refused for now,
// forgetting failures older than failWindow. s.mu is held.
func (s *Server) limited(op string, now time.Time) bool {
	f := s.failures[op]
	i := 0
	for i < len(f) && now.Sub(f[i]) > failWindow {
		i++
	}
	s.failures[op] = f[i:]
	return len(f)-i >= maxFailures
}

// fail counts a failed authentication for op. s.mu is held.
func (s *Server) fail(op string, now time.Time) { s.failures[op] = append(s.failures[op], now) }

var errLimited = errors.New("too many failed authentications: try again in a minute")

// sessionOf is r's session, nil when it has none. A cookie no session
// has is not counted as a failure: another server on localhost (any
// port) may have set it, and guessing a session token is hopeless.
func (s *Server) sessionOf(r *http.Request) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := r.Cookie(s.cookie)
	if err != nil {
		return nil, errNoSession
	}
	if se := s.sessions[c.Value]; se != nil {
		return se, nil
	}
	return nil, errUnknownSession
}

var (
	errNoSession      = errors.New("not logged in: log in with your passkey at /login, or pair with the link askperm inbox --web printed")
	errUnknownSession = errors.New("this session is not known (askperm inbox --web restarted?): log in again at /login")
)

type handler func(w http.ResponseWriter, r *http.Request, se *session)

// auth serves h to a paired browser only.
func (s *Server) auth(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		se, err := s.sessionOf(r)
		if err != nil {
			switch {
			case r.Method == http.MethodGet && r.URL.Path != "/events":
				http.Redirect(w, r, "/login", http.StatusSeeOther)
			default:
				http.Error(w, err.Error(), http.StatusUnauthorized)
			}
			return
		}
		h(w, r, se)
	}
}

// post serves h to a paired browser whose form carries the session's
// CSRF token, and the id and digest of a pending request (r.PathValue's).
func (s *Server) post(h func(w http.ResponseWriter, r *http.Request, se *session, e *inbox.Entry)) http.HandlerFunc {
	return s.auth(func(w http.ResponseWriter, r *http.Request, se *session) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !constantEqual(r.PostForm.Get("csrf"), se.csrf) {
			http.Error(w, "the form's CSRF token is missing or wrong: reload the page", http.StatusForbidden)
			return
		}
		e, why := s.entry(r.PathValue("id"))
		if e == nil {
			http.Error(w, "this request is not pending: "+why, http.StatusGone)
			return
		}
		if r.PostForm.Get("id") != ID(e) || r.PostForm.Get("digest") != e.Digest {
			http.Error(w, "the form is for another request: reload the page", http.StatusConflict)
			return
		}
		h(w, r, se, e)
	})
}

// entry is the pending request of id, or why there is none.
func (s *Server) entry(id string) (*inbox.Entry, string) {
	s.Team.List.Expire(s.now())
	for _, e := range s.Team.List.Pending() {
		if ID(e) == id {
			return e, ""
		}
	}
	return nil, "answered, closed or expired"
}

// Broadcast tells every open page the list changed, until ctx ends: it
// takes the list's Changed signal for itself.
func (s *Server) Broadcast(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.Team.List.Changed():
		}
		s.mu.Lock()
		for c := range s.subs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
	}
}

// events streams "change" whenever the list changes, and, for the
// request ?r=ID, "gone" once it is no longer pending.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no streaming", http.StatusInternalServerError)
		return
	}
	c := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	id := r.URL.Query().Get("r")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	fmt.Fprint(w, ": open\n\n")
	fl.Flush()
	for {
		changed := false
		select {
		case <-r.Context().Done():
			return
		case <-c:
			changed = true
			fmt.Fprint(w, "event: change\ndata: \n\n")
		case <-tick.C: // deadlines pass without a change signal
		}
		if id != "" {
			if e, why := s.entry(id); e == nil {
				fmt.Fprintf(w, "event: gone\ndata: %s\n\n", why)
				fl.Flush()
				return
			}
		}
		if changed || id == "" {
			fl.Flush()
		}
	}
}

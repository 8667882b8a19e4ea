package webinbox

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/inbox"
)

// Passkeys: pairing registers one (the one-time link), a login asserts
// one, and every allow asserts one afresh, user verification required,
// with a challenge made of the request's id and digest and the answer
// given: the server signs the answer only after that assertion.

// maxCeremonies bounds the pairing and login ceremonies begun and not
// finished: the oldest is dropped past it.
const maxCeremonies = 16

// ceremony is a registration or login begun.
type ceremony struct {
	data webauthn.SessionData
	at   time.Time
}

// pendingAllow is an allow waiting for its assertion.
type pendingAllow struct {
	answer form.Answer
	data   webauthn.SessionData
}

func relyingParty(origin string) (*webauthn.WebAuthn, error) {
	u, err := parseOrigin(origin)
	if err != nil {
		return nil, err
	}
	return webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "askperm inbox", RPOrigins: []string{origin}})
}

// begin records a ceremony begun. s.mu is held.
func (s *Server) begin(d *webauthn.SessionData) {
	if len(s.ceremonies) >= maxCeremonies {
		var oldest string
		for k, c := range s.ceremonies {
			if oldest == "" || c.at.Before(s.ceremonies[oldest].at) {
				oldest = k
			}
		}
		delete(s.ceremonies, oldest)
	}
	s.ceremonies[d.Challenge] = ceremony{data: *d, at: s.now()}
}

// finish takes the ceremony of challenge, once.
func (s *Server) finish(challenge string) (webauthn.SessionData, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.ceremonies[challenge]
	delete(s.ceremonies, challenge)
	return c.data, ok
}

// failed counts a failed authentication for op and says so.
func (s *Server) failed(w http.ResponseWriter, op string, code int, msg string) {
	s.mu.Lock()
	s.fail(op, s.now())
	s.mu.Unlock()
	writeJSON(w, code, result{Text: msg})
}

// result is a ceremony's end, for the page's script.
type result struct {
	OK   bool   `json:"ok"`
	Text string `json:"text"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// rateLimited answers a refusal when authentication for op is refused
// for now.
func (s *Server) rateLimited(w http.ResponseWriter, op string) bool {
	s.mu.Lock()
	limited := s.limited(op, s.now())
	s.mu.Unlock()
	if limited {
		writeJSON(w, http.StatusTooManyRequests, result{Text: errLimited.Error()})
	}
	return limited
}

// pairingValid reports whether token is the unused pairing token,
// counting a failure when not.
func (s *Server) pairingValid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pairing != "" && constantEqual(token, s.pairing) && s.now().Before(s.pairingEnd) {
		return true
	}
	s.fail(opPair, s.now())
	return false
}

var errPairing = "this pairing link is not valid, was used or has expired: askperm inbox --web --pair prints a new one"

func (s *Server) pairPage(w http.ResponseWriter, r *http.Request) {
	if s.rateLimitedPage(w, opPair) {
		return
	}
	if !s.pairingValid(r.PathValue("token")) {
		http.Error(w, errPairing, http.StatusForbidden)
		return
	}
	render(w, http.StatusOK, "pair.html", struct{ Token, Approver string }{r.PathValue("token"), s.keys.Approver})
}

func (s *Server) rateLimitedPage(w http.ResponseWriter, op string) bool {
	s.mu.Lock()
	limited := s.limited(op, s.now())
	s.mu.Unlock()
	if limited {
		http.Error(w, errLimited.Error(), http.StatusTooManyRequests)
	}
	return limited
}

// withPairing serves h to a page holding the unused pairing token,
// while authentication is not refused.
func (s *Server) withPairing(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.rateLimited(w, opPair) {
			return
		}
		if !s.pairingValid(r.PathValue("token")) {
			writeJSON(w, http.StatusForbidden, result{Text: errPairing})
			return
		}
		h(w, r)
	}
}

func (s *Server) pairBegin(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var exclude []protocol.CredentialDescriptor
	for _, c := range s.keys.Credentials {
		exclude = append(exclude, c.Descriptor())
	}
	opts, data, err := s.rp.BeginRegistration(s.keys,
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired}),
		webauthn.WithExclusions(exclude))
	if err == nil {
		s.begin(data)
	}
	options(w, opts, err)
}

// options sends a ceremony's options to the page, or why there are none.
func options(w http.ResponseWriter, opts any, err error) {
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, result{Text: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

func (s *Server) pairFinish(w http.ResponseWriter, r *http.Request) {
	parsed, err := protocol.ParseCredentialCreationResponseBody(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		s.failed(w, opPair, http.StatusBadRequest, "the passkey's registration: "+form.Line(err.Error()))
		return
	}
	data, ok := s.finish(parsed.Response.CollectedClientData.Challenge)
	if !ok {
		s.failed(w, opPair, http.StatusForbidden, "no such registration was begun")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cred, err := s.rp.CreateCredential(s.keys, data, parsed)
	if err != nil {
		s.fail(opPair, s.now())
		writeJSON(w, http.StatusForbidden, result{Text: "the passkey's registration: " + form.Line(err.Error())})
		return
	}
	if s.pairing == "" { // another browser paired meanwhile
		writeJSON(w, http.StatusForbidden, result{Text: errPairing})
		return
	}
	keys := *s.keys
	keys.Credentials = append(append([]webauthn.Credential(nil), keys.Credentials...), *cred)
	if err := keys.save(s.keysPath); err != nil {
		writeJSON(w, http.StatusInternalServerError, result{Text: "saving the passkey: " + err.Error()})
		return
	}
	s.keys, s.pairing = &keys, ""
	if s.Registered != nil {
		s.Registered(cred.ID, s.now())
	}
	s.newSession(w)
	writeJSON(w, http.StatusOK, result{OK: true, Text: "paired: this browser's passkey confirms your answers"})
}

// newSession starts a session and sets its cookie. s.mu is held.
func (s *Server) newSession(w http.ResponseWriter) {
	id := token()
	s.sessions[id] = &session{csrf: token(), visible: map[string]time.Time{}, allows: map[string]pendingAllow{}}
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: id, Path: "/", HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteStrictMode})
}

func (s *Server) loginPage(w http.ResponseWriter, _ *http.Request) {
	render(w, http.StatusOK, "login.html", nil)
}

func (s *Server) loginBegin(w http.ResponseWriter, _ *http.Request) {
	if s.rateLimited(w, opLogin) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys.Credentials) == 0 {
		writeJSON(w, http.StatusConflict, result{Text: "no passkey is registered: open the pairing link askperm inbox --web printed"})
		return
	}
	opts, data, err := s.rp.BeginLogin(s.keys, webauthn.WithUserVerification(protocol.VerificationRequired))
	if err == nil {
		s.begin(data)
	}
	options(w, opts, err)
}

func (s *Server) loginFinish(w http.ResponseWriter, r *http.Request) {
	if s.rateLimited(w, opLogin) {
		return
	}
	if _, err := s.assert(r.Body, s.finish); err != nil {
		s.failed(w, opLogin, http.StatusForbidden, "login refused: "+form.Line(err.Error()))
		return
	}
	s.mu.Lock()
	s.newSession(w)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, result{OK: true, Text: "logged in"})
}

// assert checks the assertion in body against the ceremony take gives
// for its challenge, user verification required, and keeps the
// credential's new sign count.
func (s *Server) assert(body io.Reader, take func(challenge string) (webauthn.SessionData, bool)) (*webauthn.Credential, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBody(io.LimitReader(body, 64<<10))
	if err != nil {
		return nil, err
	}
	data, ok := take(parsed.Response.CollectedClientData.Challenge)
	if !ok {
		return nil, errors.New("no such ceremony was begun, or it was used")
	}
	if data.UserVerification != protocol.VerificationRequired {
		return nil, errors.New("user verification was not required") // never: every ceremony requires it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cred, err := s.rp.ValidateLogin(s.keys, data, parsed)
	if err != nil {
		return nil, err
	}
	if cred.Authenticator.CloneWarning {
		return nil, errors.New("the passkey's signature counter went back: a cloned authenticator?")
	}
	keys := *s.keys
	keys.Credentials = append([]webauthn.Credential(nil), keys.Credentials...)
	for i := range keys.Credentials {
		if bytes.Equal(keys.Credentials[i].ID, cred.ID) {
			keys.Credentials[i] = *cred
		}
	}
	if err := keys.save(s.keysPath); err != nil {
		return nil, fmt.Errorf("saving the passkey's counter: %w", err)
	}
	s.keys = &keys
	return cred, nil
}

// allowBegin takes an allow's answer (stage choice, or stage rule's
// fields), checks it and its arming, and asks for a passkey assertion
// whose challenge binds the request's id and digest and the answer.
func (s *Server) allowBegin(w http.ResponseWriter, r *http.Request, se *session, e *inbox.Entry) {
	f := inbox.Form(e)
	a, complete, err := answerOf(f, r)
	if err == nil && !complete {
		err = errors.New("an always-answer is confirmed at stage rule")
	}
	if err == nil && !a.Choice.IsAllow() {
		err = errors.New("a passkey confirms an allow; a deny is sent as it is")
	}
	if err == nil {
		if why := s.armed(se, e); why != "" {
			err = errors.New(why)
		}
	}
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, result{Text: form.Line(err.Error())})
		return
	}
	ans, _ := json.Marshal(a)
	h := sha256.New()
	fmt.Fprintf(h, "askperm web allow\x00%s\x00%s\x00%s\x00", ID(e), e.Digest, rand.Text())
	h.Write(ans)
	s.mu.Lock()
	defer s.mu.Unlock()
	opts, data, err := s.rp.BeginLogin(s.keys, webauthn.WithUserVerification(protocol.VerificationRequired), webauthn.WithChallenge(h.Sum(nil)))
	if err == nil {
		se.allows[ID(e)] = pendingAllow{answer: a, data: *data}
	}
	options(w, opts, err)
}

// allowFinish checks the assertion of the allow begun on this request
// in this session, then signs and writes its answer.
func (s *Server) allowFinish(w http.ResponseWriter, r *http.Request, se *session, e *inbox.Entry) {
	if s.rateLimited(w, opAllow) {
		return
	}
	id := ID(e)
	s.mu.Lock()
	p, ok := se.allows[id]
	delete(se.allows, id) // once, whatever comes of it
	s.mu.Unlock()
	take := func(challenge string) (webauthn.SessionData, bool) {
		return p.data, ok && challenge == p.data.Challenge
	}
	if _, err := s.assert(bytes.NewReader([]byte(r.PostForm.Get("credential"))), take); err != nil {
		s.failed(w, opAllow, http.StatusForbidden, "the allow is not confirmed: "+form.Line(err.Error()))
		return
	}
	if err := s.Team.Answer(r.Context(), s.Key, e, inbox.Form(e), p.answer); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, inbox.ErrAnswered) || errors.Is(err, inbox.ErrRejected) {
			code = http.StatusConflict
		}
		writeJSON(w, code, result{Text: "Not answered: " + form.Line(err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, result{OK: true, Text: "Answered: " + form.ChoiceLabel(p.answer.Choice)})
}

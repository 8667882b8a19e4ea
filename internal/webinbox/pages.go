package webinbox

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/inbox"
)

// row is one pending request in the list, rendered as the terminal
// inbox's row (inbox.Row): form's renderer first, html/template then.
type row struct {
	ID                                 string
	Host, Session, Age, Left, Question string
}

type listPage struct {
	Rows    []row
	Warning string
}

func (s *Server) list(w http.ResponseWriter, _ *http.Request, _ *session) {
	now := s.now()
	s.Team.List.Expire(now)
	p := listPage{}
	if warning := s.Team.LastWarning(); warning != "" {
		p.Warning = form.Line(warning)
	}
	for _, e := range s.Team.List.Pending() {
		r := inbox.Row(e, now)
		p.Rows = append(p.Rows, row{ID: ID(e), Host: r[0], Session: r[2], Age: r[3], Left: r[4], Question: r[5]})
	}
	render(w, http.StatusOK, "list.html", p)
}

// requestPage is a request's form at one stage.
type requestPage struct {
	ID, Digest, CSRF string
	ArmMillis        int64
	Question         string
	Hidden           string // form.HiddenWarning when the request has such characters
	Facts            []form.Field
	AgentWords       []form.Field
	Details          []form.DetailPreview
	// Stage "choice":
	Choices []choiceButton
	// Stage "rule":
	Rule      bool
	Choice    form.Choice
	Questions []ruleQuestion
	Summary   string
	Error     string
}

type choiceButton struct {
	Value, Label string
	Allow        bool
}

type ruleQuestion struct {
	Name, Title string
	Multi       bool
	Options     []ruleOption
}

type ruleOption struct {
	Value, Label string
	Chosen       bool
}

// page is e's form for se at the choice stage, or the rule stage of a.
// Every stage rendered is new content, so it disarms: an allow counts
// only once the page says this stage is visible.
func (s *Server) page(se *session, e *inbox.Entry, f *form.Form, a *form.Answer) requestPage {
	s.disarm(se, ID(e))
	p := requestPage{ID: ID(e), Digest: e.Digest, CSRF: se.csrf, ArmMillis: s.armDelay().Milliseconds(),
		Question: f.Headline(), Facts: f.FactsUpTo(-1), AgentWords: f.AgentWords(), Details: f.Details()}
	if f.HasHidden() {
		p.Hidden = form.HiddenWarning
	}
	if a == nil {
		for _, c := range f.Choices() {
			if c == form.AllowSession { // lives in the host's memory, not the team's
				continue
			}
			p.Choices = append(p.Choices, choiceButton{Value: string(c), Label: form.ChoiceLabel(c), Allow: c.IsAllow()})
		}
		return p
	}
	p.Rule, p.Choice, p.Summary = true, a.Choice, f.RuleSummary(*a)
	for i, q := range f.RuleQuestions(*a) {
		rq := ruleQuestion{Name: "q" + strconv.Itoa(i), Title: q.Title, Multi: q.Multi}
		chosen := map[string]bool{}
		for _, v := range q.Chosen(*a) {
			chosen[v] = true
		}
		for _, o := range q.Options {
			rq.Options = append(rq.Options, ruleOption{Value: o.Value, Label: o.Label, Chosen: chosen[o.Value]})
		}
		p.Questions = append(p.Questions, rq)
	}
	return p
}

func (s *Server) request(w http.ResponseWriter, r *http.Request, se *session) {
	e, why := s.entry(r.PathValue("id"))
	if e == nil {
		http.Error(w, "this request is not pending: "+why, http.StatusGone)
		return
	}
	render(w, http.StatusOK, "request.html", s.page(se, e, inbox.Form(e), nil))
}

// disarm forgets when id was visible: a stage served anew, or a page
// hidden, arms anew.
func (s *Server) disarm(se *session, id string) {
	s.mu.Lock()
	delete(se.visible, id)
	s.mu.Unlock()
}

// visible is the page's beacon: the request is rendered and the page
// visible from now (sent again each time it becomes visible).
func (s *Server) visible(w http.ResponseWriter, _ *http.Request, se *session, e *inbox.Entry) {
	s.mu.Lock()
	se.visible[ID(e)] = s.now()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// hidden is the page's beacon that it was hidden: what it shows next is
// not known to have been seen until it says visible again.
func (s *Server) hidden(w http.ResponseWriter, _ *http.Request, se *session, e *inbox.Entry) {
	s.disarm(se, ID(e))
	w.WriteHeader(http.StatusNoContent)
}

// early says why an allow given before it counts was refused.
const early = "not yet counted: an allow counts only %s after the question was fully visible; read it, then tap again"

// armed says why an allow does not count yet, "" when it does.
func (s *Server) armed(se *session, e *inbox.Entry) string {
	s.mu.Lock()
	at, ok := se.visible[ID(e)]
	delay := s.ArmDelay
	s.mu.Unlock()
	if !ok || s.now().Sub(at) < delay {
		return fmt.Sprintf(early, delay)
	}
	return ""
}

func (s *Server) armDelay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ArmDelay
}

// answerOf is the answer r's form gives: stage "choice"'s fields, and
// with stage=rule stage "rule"'s. complete is false for an always-choice
// at stage "choice": stage "rule" comes next.
func answerOf(f *form.Form, r *http.Request) (a form.Answer, complete bool, err error) {
	a = f.Defaults()
	a.Choice, a.Message = form.Choice(r.PostForm.Get("choice")), r.PostForm.Get("message")
	if a.Choice == form.AllowSession {
		return a, false, errors.New("allow for this session is not offered in team mode: it lives in its host's memory")
	}
	if err := f.CheckChoice(a); err != nil {
		return a, false, err
	}
	if r.PostForm.Get("stage") != "rule" {
		return a, !a.Choice.IsAlways(), nil
	}
	if !a.Choice.IsAlways() {
		return a, false, errors.New("stage rule is for an always-answer")
	}
	for i, q := range f.RuleQuestions(a) {
		v := r.PostForm["q"+strconv.Itoa(i)]
		if !q.Multi && len(v) != 1 {
			return a, false, fmt.Errorf("%s: choose one", q.Title)
		}
		q.Choose(&a, v)
	}
	return a, true, f.CheckRule(a)
}

// errPasskey is an allow posted as a plain form.
const errPasskey = "an allow is confirmed with your passkey: use the page's allow button (it needs JavaScript)"

// choice takes stage "choice": a deny is given, an always-choice goes on
// to stage "rule"; an allow goes through allowBegin instead.
func (s *Server) choice(w http.ResponseWriter, r *http.Request, se *session, e *inbox.Entry) {
	f := inbox.Form(e)
	a, complete, err := answerOf(f, r)
	switch {
	case err != nil:
		s.refuse(w, se, e, f, nil, err.Error())
	case !complete:
		render(w, http.StatusOK, "request.html", s.page(se, e, f, &a))
	case a.Choice.IsAllow():
		s.refuse(w, se, e, f, nil, errPasskey)
	default:
		s.answer(w, r, e, f, a)
	}
}

// rule takes stage "rule": Back returns to stage "choice", a deny-always
// is given; an allow goes through allowBegin instead.
func (s *Server) rule(w http.ResponseWriter, r *http.Request, se *session, e *inbox.Entry) {
	f := inbox.Form(e)
	if r.PostForm.Has("back") {
		render(w, http.StatusOK, "request.html", s.page(se, e, f, nil))
		return
	}
	a, _, err := answerOf(f, r)
	switch {
	case err != nil && a.Choice.IsAlways():
		s.refuse(w, se, e, f, &a, err.Error())
	case err != nil:
		s.refuse(w, se, e, f, nil, err.Error())
	case a.Choice.IsAllow():
		s.refuse(w, se, e, f, &a, errPasskey)
	default:
		s.answer(w, r, e, f, a)
	}
}

// answer signs a deny and writes it, then says so.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, e *inbox.Entry, f *form.Form, a form.Answer) {
	if err := s.Team.Answer(r.Context(), s.Key, e, f, a); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, inbox.ErrAnswered) || errors.Is(err, inbox.ErrRejected) {
			code = http.StatusConflict
		}
		render(w, code, "done.html", done{Text: "Not answered: " + form.Line(err.Error())})
		return
	}
	render(w, http.StatusOK, "done.html", done{Text: "Answered: " + form.ChoiceLabel(a.Choice), OK: true})
}

type done struct {
	Text string
	OK   bool
}

// refuse shows the form again with why the answer was not taken.
func (s *Server) refuse(w http.ResponseWriter, se *session, e *inbox.Entry, f *form.Form, a *form.Answer, why string) {
	p := s.page(se, e, f, a)
	p.Error = form.Line(why)
	render(w, http.StatusUnprocessableEntity, "request.html", p)
}

func render(w http.ResponseWriter, code int, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "askperm: the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

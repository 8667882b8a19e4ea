package form

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
)

// Choice is the answer of stage "choice".
type Choice string

// The choices of protocol.md section 3.
const (
	AllowOnce    Choice = "allow-once"
	DenyOnce     Choice = "deny-once"
	AllowAlways  Choice = "allow-always"
	DenyAlways   Choice = "deny-always"
	AllowSession Choice = "allow-session"
)

// IsAllow reports whether c grants the request.
func (c Choice) IsAllow() bool { return c == AllowOnce || c == AllowAlways || c == AllowSession }

// IsAlways reports whether c leads to stage "rule".
func (c Choice) IsAlways() bool { return c == AllowAlways || c == DenyAlways }

// Stage names a step of the form.
type Stage string

// The two stages.
const (
	StageChoice Stage = "choice"
	StageRule   Stage = "rule"
)

// MaxMessageBytes caps the denial reason.
const MaxMessageBytes = decision.MaxLineBytes

// Options are the form's inputs that do not come from the request.
type Options struct {
	// SessionMemory offers allow-session to requests with a session_id.
	SessionMemory bool
	// RuleNote, when set, says who keeps the rule an answer would save
	// (askperm alone, or an agent too): RuleSummary ends with it.
	RuleNote func(Answer) string
	// Commands are, by dimension name, the simple commands of each
	// command line (a dimension of syntax shell) as the caller read them,
	// and what decided each: frontends list them one per line. A shell
	// dimension missing here is shown as its value alone.
	Commands map[string][]Command
	// Sent is the request's bytes as the caller sent them, whose digest
	// is the request's SHA256, when known: a frontend that asks elsewhere
	// (team) forwards these.
	Sent []byte
	// Opened, when set, is called by a frontend, with its name, when its
	// prompt opens before a person (Form.Opened): the moment a person is
	// needed, for a notification.
	Opened func(decision.Frontend)
}

// Command is one simple command of a command line, for display
// (protocol section 10).
type Command struct {
	// Text is the command as written, its assignments first.
	Text string
	// Opaque says in words what of it is not known before it runs ("runs
	// the output of `curl x`"); "" when all of it is.
	Opaque string
	// Verdict is what decided it: "allow", "deny" or "prompt" by a rule
	// or remembered rule, "" when nothing did (it is asked about).
	Verdict string
	// DecidedBy names what decided it (a rules file's rule, "remembered
	// rule 3"); "" when nothing did.
	DecidedBy string
}

// Form is the two-stage form of one request.
type Form struct {
	Req      *decision.Request
	choices  []Choice
	implied  map[string][]string // grant name → the grants it implies
	ruleNote func(Answer) string
	commands map[string][]Command // Options.Commands
	sent     []byte               // Options.Sent
	opened   func(decision.Frontend)
}

// New returns the form of req.
func New(req *decision.Request, opts Options) *Form {
	f := &Form{Req: req, implied: map[string][]string{}, ruleNote: opts.RuleNote, commands: opts.Commands, sent: opts.Sent, opened: opts.Opened}
	for i, names := range req.Implications() {
		f.implied[req.Grants[i].Name] = names
	}
	persistent := req.IsPersistent()
	if persistent && opts.SessionMemory && req.SessionID != "" {
		f.choices = append(f.choices, AllowSession)
	}
	f.choices = append(f.choices, AllowOnce)
	if persistent && allDimensionsScoped(req) {
		f.choices = append(f.choices, AllowAlways, DenyAlways)
	}
	f.choices = append(f.choices, DenyOnce)
	return f
}

func allDimensionsScoped(req *decision.Request) bool {
	for _, d := range req.Dimensions {
		if len(d.Scopes) == 0 {
			return false
		}
	}
	return true
}

// Sent is the request's bytes as sent (Options.Sent); nil when unknown.
func (f *Form) Sent() []byte { return f.sent }

// Opened says that frontend by put the form before a person: once per
// Ask of a frontend, when its prompt opens, and never by a frontend that
// could not start.
func (f *Form) Opened(by decision.Frontend) {
	if f.opened != nil {
		f.opened(by)
	}
}

// Choices lists the offered choices, allows first, deny-once last.
func (f *Form) Choices() []Choice { return slices.Clone(f.choices) }

// Offers reports whether c is one of the offered choices.
func (f *Form) Offers(c Choice) bool { return slices.Contains(f.choices, c) }

// AskedDimensions lists the indexes of the dimensions stage "rule" asks
// about: those with two or more scopes. The others keep their sole scope.
func (f *Form) AskedDimensions() []int {
	var idx []int
	for i, d := range f.Req.Dimensions {
		if len(d.Scopes) >= 2 {
			idx = append(idx, i)
		}
	}
	return idx
}

// Answer is everything a person (or a canned answer) gave in both stages.
type Answer struct {
	Choice  Choice
	Message string
	// Stage "rule":
	Grants       []string
	Scopes       map[string]string // dimension name → chosen scope's match
	WorkdirScope string
	Lifetime     string
	// Approver is the public key of the team approver whose signed
	// answer this is; "" for a person at this machine. Decide does not
	// read it; the audit log keeps it.
	Approver string
	// Ignored says, one line each, which answers from elsewhere were not
	// taken and why (a team's unverified answers), also when no answer
	// came: the audit log keeps them.
	Ignored []string
}

// Defaults returns the answer a form starts from: deny once, and for stage
// "rule" all grants, each dimension's default scope, the selected workdir,
// an indefinite lifetime.
func (f *Form) Defaults() Answer {
	a := Answer{
		Choice:   DenyOnce,
		Grants:   f.Req.GrantNames(),
		Scopes:   map[string]string{},
		Lifetime: decision.LifetimeIndefinite,
	}
	for _, d := range f.Req.Dimensions {
		if len(d.Scopes) > 0 {
			a.Scopes[d.Name] = d.Scopes[d.Default].Match
		}
	}
	if f.Req.Workdir != nil {
		a.WorkdirScope = decision.WorkdirSelected
	}
	return a
}

// CheckChoice validates the answer of stage "choice".
func (f *Form) CheckChoice(a Answer) error {
	if !f.Offers(a.Choice) {
		return fmt.Errorf("choice %q is not offered (offered: %s)", a.Choice, joinChoices(f.choices))
	}
	if len(a.Message) > MaxMessageBytes {
		return fmt.Errorf("message: longer than %d bytes", MaxMessageBytes)
	}
	if !utf8.ValidString(a.Message) {
		return errors.New("message: not valid UTF-8")
	}
	return nil
}

// CheckRule validates the answer of stage "rule"; a's choice must be an
// always-choice.
func (f *Form) CheckRule(a Answer) error {
	if !a.Choice.IsAlways() {
		return fmt.Errorf("choice %q has no rule stage", a.Choice)
	}
	if a.Choice == AllowAlways && len(f.Req.Grants) > 0 {
		if len(a.Grants) == 0 {
			return errors.New("grants: choose at least one of the requested grants")
		}
		seen := map[string]bool{}
		for _, g := range a.Grants {
			if !slices.Contains(f.Req.GrantNames(), g) {
				return fmt.Errorf("grants: %q was not requested", g)
			}
			if seen[g] {
				return fmt.Errorf("grants: %q given twice", g)
			}
			seen[g] = true
		}
	}
	for name, match := range a.Scopes {
		d := f.dimension(name)
		if d == nil {
			return fmt.Errorf("scopes: the request has no dimension %q", name)
		}
		if !slices.ContainsFunc(d.Scopes, func(s decision.Scope) bool { return s.Match == match }) {
			matches := make([]string, len(d.Scopes))
			for i, s := range d.Scopes {
				matches[i] = s.Match
			}
			return fmt.Errorf("scopes: %q is not a scope offered for dimension %q (offered: %s)", match, name, quotedList(matches, 5))
		}
	}
	for _, i := range f.AskedDimensions() {
		if _, ok := a.Scopes[f.Req.Dimensions[i].Name]; !ok {
			return fmt.Errorf("scopes: no scope chosen for dimension %q", f.Req.Dimensions[i].Name)
		}
	}
	switch {
	case f.Req.Workdir == nil && a.WorkdirScope != "":
		return errors.New("workdir_scope: the request has no workdir")
	case f.Req.Workdir != nil && a.WorkdirScope != decision.WorkdirSelected && a.WorkdirScope != decision.WorkdirAll:
		return fmt.Errorf("workdir_scope: %q is neither %q nor %q", a.WorkdirScope, decision.WorkdirSelected, decision.WorkdirAll)
	}
	if !slices.Contains(decision.Lifetimes, a.Lifetime) {
		return fmt.Errorf("lifetime: %q is not a lifetime (one of: %s)", a.Lifetime, quotedList(decision.Lifetimes, len(decision.Lifetimes)))
	}
	return nil
}

func (f *Form) dimension(name string) *decision.Dimension {
	for i := range f.Req.Dimensions {
		if f.Req.Dimensions[i].Name == name {
			return &f.Req.Dimensions[i]
		}
	}
	return nil
}

// Decide validates a complete answer and builds its decision, answered by
// frontend at time now (which dates a finite lifetime's expiry). A message
// is never attached to an allow. An allow-always grants the answer's grants
// and every grant they imply, in request order (RuleSummary says which
// were added); a one-time or session allow grants all requested grants.
func (f *Form) Decide(a Answer, frontend decision.Frontend, now time.Time) (decision.Decision, error) {
	if err := f.CheckChoice(a); err != nil {
		return decision.Decision{}, err
	}
	if a.Choice.IsAlways() {
		if err := f.CheckRule(a); err != nil {
			return decision.Decision{}, err
		}
	}
	d := decision.Denied(f.Req, decision.CauseUser, frontend)
	switch a.Choice {
	case AllowOnce, AllowSession:
		d.Decision = decision.Allow
		d.Grants = f.Req.GrantNames()
		if a.Choice == AllowSession {
			d.Persist = decision.PersistSession
		}
	case AllowAlways:
		d.Decision = decision.Allow
		d.Persist = decision.PersistAlways
		if len(f.Req.Grants) > 0 {
			// A grant kept brings those it implies, whatever the answer
			// left out: every answer becomes a decision here.
			d.Grants = f.Req.WithImplied(a.Grants)
		}
		d.Rule = f.rule(a, now)
	case DenyAlways:
		d.Persist = decision.PersistAlways
		d.Rule = f.rule(a, now)
	}
	if d.Decision == decision.Deny {
		d.Message = a.Message
	}
	return d, nil
}

func (f *Form) rule(a Answer, now time.Time) *decision.Rule {
	r := &decision.Rule{Scopes: map[string]string{}, WorkdirScope: a.WorkdirScope, Lifetime: a.Lifetime}
	for _, d := range f.Req.Dimensions {
		if m, ok := a.Scopes[d.Name]; ok {
			r.Scopes[d.Name] = m
		} else {
			r.Scopes[d.Name] = d.Scopes[d.Default].Match
		}
	}
	if secs, err := strconv.ParseInt(a.Lifetime, 10, 64); err == nil {
		r.Expires = now.Unix() + secs
	}
	return r
}

// quotedList quotes the first max items, comma-separated, and counts the
// rest: a request may offer a thousand scopes.
func quotedList(items []string, max int) string {
	var b strings.Builder
	for i, it := range items {
		if i == max {
			fmt.Fprintf(&b, ", and %d more", len(items)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", it)
	}
	return b.String()
}

func joinChoices(cs []Choice) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += string(c)
	}
	return s
}

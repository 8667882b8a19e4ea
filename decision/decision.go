package decision

// Verdicts, persistence and causes of a decision (protocol.md section 4).
const (
	Allow = "allow"
	Deny  = "deny"

	PersistOnce    = "once"
	PersistAlways  = "always"
	PersistSession = "session"
)

// Cause says why a decision was made.
type Cause string

// The causes of protocol.md section 4.
const (
	CauseUser        Cause = "user"
	CauseRule        Cause = "rule"
	CauseSession     Cause = "session"
	CauseTimeout     Cause = "timeout"
	CauseCancelled   Cause = "cancelled"
	CauseUnavailable Cause = "unavailable"
	CauseRateLimit   Cause = "rate-limit"
	CauseError       Cause = "error"
	CauseReviewer    Cause = "reviewer" // a reviewer program (protocol.md section 12)
)

// Frontend says who answered a request.
type Frontend string

// The frontends of protocol.md section 4.
const (
	FrontendTUI      Frontend = "tui"
	FrontendLine     Frontend = "line"
	FrontendYad      Frontend = "yad"
	FrontendZenity   Frontend = "zenity"
	FrontendAnswers  Frontend = "answers"  // a canned answer
	FrontendRules    Frontend = "rules"    // a rules file
	FrontendMemory   Frontend = "memory"   // a remembered always-rule or session approval
	FrontendReviewer Frontend = "reviewer" // a reviewer program, deciding once (section 12)
	FrontendTeam     Frontend = "team"     // an approver's signed answer, over NATS (section 11)
	FrontendNone     Frontend = "none"     // nobody answered: timeout, unavailable, rate limit, error
)

// Decision is the one object askperm writes on stdout.
type Decision struct {
	Version       int      `json:"version"`
	ID            *string  `json:"id,omitempty"`
	Decision      string   `json:"decision"`
	Persist       string   `json:"persist"`
	Message       string   `json:"message,omitempty"`
	Grants        []string `json:"grants,omitempty"`
	Rule          *Rule    `json:"rule,omitempty"`
	Cause         Cause    `json:"cause"`
	Frontend      Frontend `json:"frontend"`
	Stop          bool     `json:"stop,omitempty"`
	RequestSHA256 string   `json:"request_sha256"`
}

// Rule is the persistent rule of an always-decision.
type Rule struct {
	Scopes       map[string]string `json:"scopes"`
	WorkdirScope string            `json:"workdir_scope,omitempty"`
	Lifetime     string            `json:"lifetime"`
	Expires      int64             `json:"expires,omitempty"`
}

// Workdir scopes and lifetimes of a Rule (protocol.md section 3). The
// finite lifetimes are numbers of seconds: "900" and "57600".
const (
	WorkdirSelected    = "selected" // only the request's workdir
	WorkdirAll         = "all"      // every configured workdir, future ones too
	LifetimeIndefinite = "indefinite"
)

// Lifetimes lists a rule's lifetimes, the default first.
var Lifetimes = []string{LifetimeIndefinite, "900", "57600"}

// Denied is the deny-once decision for req with the given cause, answered by
// frontend (FrontendNone for a timeout before any frontend started).
func Denied(req *Request, cause Cause, frontend Frontend) Decision {
	return Decision{
		Version:       Version,
		ID:            req.ID,
		Decision:      Deny,
		Persist:       PersistOnce,
		Cause:         cause,
		Frontend:      frontend,
		RequestSHA256: req.SHA256,
	}
}

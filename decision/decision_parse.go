package decision

import (
	"bytes"
	"cmp"
	"errors"
	"maps"
	"slices"
	"strconv"
)

// ParseDecision returns the one decision in out, askperm's whole stdout,
// after checking it answers sent: the request as Parse or EncodeRequest
// returned it, whose SHA256 the decision must echo. Anything but exactly
// one valid decision for sent, on one line ending in "\n", is an error,
// and a caller must then deny (protocol.md section 1).
//
// The decision is read as strictly as Parse reads a request, and must agree
// with sent as protocol.md section 4 says: its id and digest, the grants
// and the rule's scopes it may name, and which fields go together.
func ParseDecision(out []byte, sent *Request) (Decision, error) {
	if sent.SHA256 == "" {
		return Decision{}, errors.New("ParseDecision: the sent request has no SHA256; pass the one Parse or EncodeRequest returned")
	}
	d, err := parseDecision(out, sent)
	if err != nil {
		return Decision{}, errorIn("decision", err)
	}
	return d, nil
}

func parseDecision(out []byte, sent *Request) (Decision, error) {
	body, err := oneLine(out)
	if err != nil {
		return Decision{}, err
	}
	root, err := readObject(body)
	if err != nil {
		return Decision{}, err
	}
	if body[0] != '{' || body[len(body)-1] != '}' {
		return Decision{}, fail("", "whitespace around the object")
	}
	var d Decision
	if err := mapDecision(root, &d); err != nil {
		return Decision{}, err
	}
	if err := checkDecision(&d, sent); err != nil {
		return Decision{}, err
	}
	return d, nil
}

// oneLine returns the object of askperm's output, which is one line ending
// in "\n", written at once (protocol.md section 1).
func oneLine(out []byte) ([]byte, error) {
	body, ok := bytes.CutSuffix(out, []byte("\n"))
	switch {
	case len(out) == 0:
		return nil, fail("", "no output")
	case !ok:
		return nil, fail("", "does not end in a newline")
	case bytes.ContainsAny(body, "\r\n"):
		return nil, fail("", "more than one line")
	}
	return body, nil
}

var (
	decisionFields = []string{
		"version", "id", "decision", "persist", "message", "grants", "rule", "cause", "frontend", "stop", "request_sha256",
	}
	verdicts     = []string{Allow, Deny}
	persistences = []string{PersistOnce, PersistAlways, PersistSession}
	causes       = []Cause{
		CauseUser, CauseRule, CauseSession, CauseTimeout, CauseCancelled, CauseUnavailable, CauseRateLimit, CauseError, CauseReviewer,
	}
	frontends = []Frontend{
		FrontendTUI, FrontendLine, FrontendYad, FrontendZenity, FrontendAnswers, FrontendRules, FrontendMemory, FrontendReviewer, FrontendTeam, FrontendNone,
	}
	workdirScopes = []string{WorkdirSelected, WorkdirAll}
)

// mapDecision fills d from a checked JSON tree, with exact types. A present
// field is never its zero value (an empty message or grants, stop false,
// expires 0), since Decision could not tell it from an absent one: so every
// decision accepted here encodes back to the same fields.
func mapDecision(root *node, d *Decision) error {
	f, err := object(root, "", decisionFields, false)
	if err != nil {
		return err
	}
	if err := need(f, "", "version", "decision", "persist", "cause", "frontend", "request_sha256"); err != nil {
		return err
	}
	d.Version = Version
	return cmp.Or(
		checkVersion(f["version"]),
		optOneOf(f, "", "decision", verdicts, &d.Decision),
		optOneOf(f, "", "persist", persistences, &d.Persist),
		optOneOf(f, "", "cause", causes, &d.Cause),
		optOneOf(f, "", "frontend", frontends, &d.Frontend),
		optLine(f, "", "request_sha256", &d.RequestSHA256),
		mapDecisionOptional(f, d),
	)
}

func mapDecisionOptional(f map[string]*node, d *Decision) error {
	if v := f["id"]; v != nil {
		id, err := line(v, "id")
		if err != nil {
			return err
		}
		d.ID = &id
	}
	if v := f["message"]; v != nil {
		m, err := str(v, "message", 0) // free text, as the request's reason
		if err != nil {
			return err
		}
		if m == "" {
			return fail("message", "must not be empty (absent means none)")
		}
		d.Message = m
	}
	if v := f["grants"]; v != nil {
		g, err := lines(v, "grants")
		if err != nil {
			return err
		}
		if g == nil {
			return fail("grants", "must not be empty (absent means none)")
		}
		d.Grants = g
	}
	if v := f["stop"]; v != nil {
		stop, err := boolean(v, "stop")
		if err != nil {
			return err
		}
		if !stop {
			return fail("stop", "must be true when present")
		}
		d.Stop = true
	}
	if v := f["rule"]; v != nil {
		r, err := mapRule(v)
		if err != nil {
			return err
		}
		d.Rule = r
	}
	return nil
}

func mapRule(n *node) (*Rule, error) {
	f, err := object(n, "rule", []string{"scopes", "workdir_scope", "lifetime", "expires"}, false)
	if err != nil {
		return nil, err
	}
	if err := need(f, "rule", "scopes", "lifetime"); err != nil {
		return nil, err
	}
	r := &Rule{}
	if r.Scopes, err = mapChosenScopes(f["scopes"]); err != nil {
		return nil, err
	}
	if err := cmp.Or(
		optOneOf(f, "rule", "workdir_scope", workdirScopes, &r.WorkdirScope),
		optOneOf(f, "rule", "lifetime", Lifetimes, &r.Lifetime),
	); err != nil {
		return nil, err
	}
	if v := f["expires"]; v != nil {
		t, err := integer(v, "rule.expires")
		if err != nil {
			return nil, err
		}
		if t <= 0 {
			return nil, fail("rule.expires", "must be a positive Unix time")
		}
		r.Expires = int64(t)
	}
	return r, nil
}

// mapChosenScopes reads rule.scopes, an object from dimension names to the
// chosen scopes' matches.
func mapChosenScopes(n *node) (map[string]string, error) {
	if n.kind != '{' {
		return nil, fail("rule.scopes", "expected an object, got %s", n.kindName())
	}
	scopes := make(map[string]string, len(n.members))
	for _, m := range n.members {
		name := m.name()
		match, err := line(m.val, join("rule.scopes", name))
		if err != nil {
			return nil, err
		}
		scopes[name] = match
	}
	return scopes, nil
}

// checkDecision checks that d can answer sent (protocol.md section 4) and
// returns the first problem found.
func checkDecision(d *Decision, sent *Request) error {
	return cmp.Or(checkEcho(d, sent), checkDeny(d), checkPersist(d, sent), checkGrants(d, sent), checkRule(d, sent))
}

// checkEcho: a decision for another request must never be taken for this
// one's.
func checkEcho(d *Decision, sent *Request) error {
	switch {
	case d.RequestSHA256 != sent.SHA256:
		return fail("request_sha256", "%q is not the sent request's digest %q", d.RequestSHA256, sent.SHA256)
	case d.ID == nil && sent.ID != nil:
		return fail("id", "missing (the request has an id)")
	case d.ID != nil && sent.ID == nil:
		return fail("id", "the request has no id")
	case d.ID != nil && *d.ID != *sent.ID:
		return fail("id", "%q is not the request's id %q", *d.ID, *sent.ID)
	}
	return nil
}

// failClosed are the causes that only ever deny once (protocol.md sections
// 1 and 9).
var failClosed = []Cause{CauseTimeout, CauseCancelled, CauseUnavailable, CauseRateLimit, CauseError}

func checkDeny(d *Decision) error {
	if d.Decision == Deny {
		return nil
	}
	switch {
	case d.Message != "":
		return fail("message", "only a deny has a message")
	case d.Stop:
		return fail("stop", "only a deny stops the turn")
	case slices.Contains(failClosed, d.Cause):
		return fail("decision", "allow, but cause %q always denies", d.Cause)
	}
	return nil
}

// checkPersist: always is a choice made now, in a request that offers it;
// session is an allow, of a request with a session.
func checkPersist(d *Decision, sent *Request) error {
	want := ""
	switch {
	case slices.Contains(failClosed, d.Cause), d.Cause == CauseRule, d.Cause == CauseReviewer: // rules, remembered rules and reviewers decide once
		want = PersistOnce
	case d.Cause == CauseSession:
		want = PersistSession
	}
	switch {
	case want != "" && d.Persist != want:
		return fail("persist", "%q, but a decision with cause %q is %q", d.Persist, d.Cause, want)
	case d.Persist == PersistSession && d.Decision != Allow:
		return fail("persist", "session, but a session approval is an allow")
	case d.Persist == PersistSession && sent.SessionID == "":
		return fail("persist", "session, but the request has no session_id")
	case d.Persist == PersistAlways && !sent.IsPersistent():
		return fail("persist", "always, but the request is not persistent")
	}
	return nil
}

// checkGrants: an allow names what it grants of the requested grants, all
// of them for allow once.
func checkGrants(d *Decision, sent *Request) error {
	requested := sent.GrantNames()
	switch {
	case d.Grants != nil && d.Decision != Allow:
		return fail("grants", "only an allow grants")
	case d.Grants == nil && d.Decision == Allow && len(requested) > 0:
		return fail("grants", "missing (the request has grants)")
	}
	for i, g := range d.Grants {
		path := "grants[" + strconv.Itoa(i) + "]"
		if !slices.Contains(requested, g) {
			return fail(path, "%q was not requested", g)
		}
		if slices.Contains(d.Grants[:i], g) {
			return fail(path, "%q given twice", g)
		}
	}
	if d.Decision == Allow && d.Persist == PersistOnce && len(d.Grants) != len(requested) {
		return fail("grants", "an allow once grants all %d requested grants, not %d", len(requested), len(d.Grants))
	}
	return nil
}

// checkRule: the rule of an always-decision chooses one offered scope per
// dimension, a workdir scope when the request has a workdir, and an expiry
// for a finite lifetime.
func checkRule(d *Decision, sent *Request) error {
	r := d.Rule
	switch {
	case d.Persist != PersistAlways && r != nil:
		return fail("rule", "only an always-decision has a rule")
	case d.Persist != PersistAlways:
		return nil
	case r == nil:
		return fail("rule", "missing (persist is always)")
	case sent.Workdir == nil && r.WorkdirScope != "":
		return fail("rule.workdir_scope", "the request has no workdir")
	case sent.Workdir != nil && r.WorkdirScope == "":
		return fail("rule.workdir_scope", "missing (the request has a workdir)")
	case r.Lifetime == LifetimeIndefinite && r.Expires != 0:
		return fail("rule.expires", "an indefinite rule does not expire")
	case r.Lifetime != LifetimeIndefinite && r.Expires == 0:
		return fail("rule.expires", "missing (lifetime %q is finite)", r.Lifetime)
	}
	return checkChosenScopes(r.Scopes, sent.Dimensions)
}

func checkChosenScopes(chosen map[string]string, dims []Dimension) error {
	for _, name := range slices.Sorted(maps.Keys(chosen)) {
		if !slices.ContainsFunc(dims, func(d Dimension) bool { return d.Name == name }) {
			return fail(join("rule.scopes", name), "the request has no dimension %q", name)
		}
	}
	for _, dim := range dims {
		match, ok := chosen[dim.Name]
		if !ok {
			return fail("rule.scopes", "no scope for dimension %q", dim.Name)
		}
		if !slices.ContainsFunc(dim.Scopes, func(s Scope) bool { return s.Match == match }) {
			return fail(join("rule.scopes", dim.Name), "%q is not a scope the request offers", match)
		}
	}
	return nil
}

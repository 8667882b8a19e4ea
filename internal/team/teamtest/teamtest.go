// Package teamtest holds what the tests of team mode share: a request
// with something for every check of an answer to bite on, approver keys,
// and the decision an approver's form builds. Tests only; it imports
// nothing of team mode, so that package team's own tests may use it.
package teamtest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// Request has an id, a session, a workdir, two grants and a dimension
// with two scopes: every check of an answer has something to bite on.
const Request = `{"id":"r1","action":"write","session_id":"s1","workdir":{"value":"/p"},` +
	`"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"file","match":"/p/a"},{"label":"dir","match":"/p/","kind":"prefix"}]}],` +
	`"grants":[{"name":"fs.write"},{"name":"fs.create"}]}`

// Parse parses the request raw.
func Parse(t testing.TB, raw string) *decision.Request {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// Decide is the decision an approver's form builds from a: its choice and
// message, and its rule stage's answers where given, else the defaults.
func Decide(t testing.TB, req *decision.Request, a form.Answer) decision.Decision {
	t.Helper()
	f := form.New(req, form.Options{})
	full := f.Defaults()
	full.Choice, full.Message = a.Choice, a.Message
	if a.Scopes != nil {
		full.Scopes = a.Scopes
	}
	if a.Grants != nil {
		full.Grants = a.Grants
	}
	if a.Lifetime != "" {
		full.Lifetime = a.Lifetime
	}
	d, err := f.Decide(full, decision.FrontendTeam, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// UserKey is a new approver key.
func UserKey(t testing.TB) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// Next is a frontend after the team's in a chain: it says whether it was
// asked, and denies once.
type Next struct{ Asked bool }

// Name is the line prompt's.
func (*Next) Name() decision.Frontend { return decision.FrontendLine }

// Ask denies once.
func (n *Next) Ask(context.Context, *form.Form) (form.Answer, error) {
	n.Asked = true
	return form.Answer{Choice: form.DenyOnce}, nil
}

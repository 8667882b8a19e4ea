package decision_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/reqtest"
)

// unbound are the request fields a session approval does not bind: the
// run (a session approval spans runs) and what no one is shown and
// changes nothing the call does.
var unbound = []string{"ID", "RunID", "Timeout", "Meta", "SHA256"}

func sessionApproval(t *testing.T, r *decision.Request) decision.Approval {
	t.Helper()
	a, err := decision.SessionApprovalOf(r)
	if err != nil {
		t.Fatalf("SessionApprovalOf: %v", err)
	}
	return a
}

// Every change of a field the person was shown, at any depth, breaks a
// session approval's coverage; a change of an unbound field keeps it.
func TestSessionCoversGeneratedSingleFieldChanges(t *testing.T) {
	for seed := range uint64(200) {
		r := reqtest.Random(rand.New(rand.NewPCG(seed, 19)))
		a := sessionApproval(t, r)
		if !a.SessionCovers(sessionApproval(t, reqtest.Copy(r))) {
			t.Fatalf("seed %d: an approval does not cover its own call", seed)
		}
		for _, v := range reqtest.Variants(r) {
			want := slices.Contains(unbound, reqtest.Top(v.Field))
			b, err := decision.SessionApprovalOf(v.Req)
			if got := err == nil && a.SessionCovers(b); got != want {
				t.Errorf("seed %d: %s changed: covered %v, want %v", seed, v.Field, got, want)
			}
		}
	}
}

// An approval of execute_sql on the staging server never covers the same
// SQL on the prod server, nor the same call asking for grants the person
// never saw.
func TestSessionCoversServerAndGrants(t *testing.T) {
	staging := &decision.Request{SessionID: "s", Server: "staging", Tool: "execute_sql", Arguments: []byte(`{"sql":"DROP TABLE users"}`)}
	a := sessionApproval(t, staging)
	prod := reqtest.Copy(staging)
	prod.Server = "prod"
	if a.SessionCovers(sessionApproval(t, prod)) {
		t.Error("an approval on staging covers prod")
	}
	granted := reqtest.Copy(staging)
	granted.Grants = []decision.Grant{{Name: "net.all"}, {Name: "exec.any"}}
	if a.SessionCovers(sessionApproval(t, granted)) {
		t.Error("an approval without grants covers a call asking for net.all and exec.any")
	}
	implied := &decision.Request{SessionID: "s", Tool: "t", Grants: []decision.Grant{{Name: "fs.read"}, {Name: "net.all"}}}
	widened := reqtest.Copy(implied)
	widened.Grants[0].Implies = []string{"net.all"}
	if sessionApproval(t, implied).SessionCovers(sessionApproval(t, widened)) {
		t.Error("an approval covers a grant implying more than it did")
	}
}

func TestSessionCoversNeedsSessionAndShown(t *testing.T) {
	if _, err := decision.SessionApprovalOf(&decision.Request{Tool: "t"}); err == nil {
		t.Error("a request without session is bound for session memory")
	}
	r := &decision.Request{SessionID: "s", Tool: "t"}
	a := sessionApproval(t, r)
	old := a
	old.Shown = "" // stored before the binding held what was shown
	if old.SessionCovers(a) {
		t.Error("an approval without the shown digest covers a call")
	}
	if (decision.Approval{}).SessionCovers(decision.Approval{}) {
		t.Error("an empty approval covers an empty binding")
	}
	r.Arguments = []byte(`{"a":`)
	if _, err := decision.SessionApprovalOf(r); err == nil {
		t.Error("arguments that cannot be digested are bound")
	}
}

package state

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/reqtest"
)

// An approval of execute_sql on staging never allows the same SQL on
// prod, nor the same call from another server asking for grants the
// person never approved.
func TestSessionApprovalBindsServerAndGrants(t *testing.T) {
	s := open(t, t.TempDir())
	now := time.Unix(1_700_000_000, 0)
	staging := `{"action":"execute","server":"staging","tool":"execute_sql","session_id":"s1","arguments":{"sql":"DELETE FROM users"}}`
	if err := s.ApproveSession(request(t, staging), now); err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]string{
		"prod":       strings.Replace(staging, `"staging"`, `"prod"`, 1),
		"alias":      strings.Replace(staging, `"server"`, `"alias":"db","server"`, 1),
		"role":       strings.Replace(staging, `"server"`, `"role":"admin","server"`, 1),
		"grants":     strings.Replace(staging, `"staging"`, `"other","grants":[{"name":"net.all"},{"name":"exec.any"}]`, 1),
		"details":    strings.Replace(staging, `"server"`, `"details":[{"label":"stdin","text":"x"}],"server"`, 1),
		"persistent": strings.Replace(staging, `"server"`, `"persistent":false,"server"`, 1),
	} {
		if ok, err := s.SessionApproved(request(t, raw), now, time.Hour); ok || err != nil {
			t.Errorf("%s: approved %v, %v", name, ok, err)
		}
	}
	if ok, _ := s.SessionApproved(request(t, staging), now, time.Hour); !ok {
		t.Error("the same call: not approved")
	}
}

// The store's look-up and decision.Approval.SessionCovers agree on every
// generated request and each of its single-field variants: the key finds
// an approval exactly when the rule says it covers.
func TestSessionLookupAgreesWithDecision(t *testing.T) {
	s := open(t, t.TempDir())
	now := time.Unix(1_700_000_000, 0)
	for seed := range uint64(40) {
		r := reqtest.Random(rand.New(rand.NewPCG(seed, 5)))
		if err := s.ApproveSession(r, now); err != nil {
			t.Fatal(err)
		}
		a, _ := decision.SessionApprovalOf(r)
		for _, v := range reqtest.Variants(r) {
			b, err := decision.SessionApprovalOf(v.Req)
			want := err == nil && a.SessionCovers(b)
			got, err := s.PeekSession(v.Req, now, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("seed %d, %s changed: the store says %v, decision %v", seed, v.Field, got, want)
			}
		}
	}
}

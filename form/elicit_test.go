package form

import (
	"reflect"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
)

// Declined or cancelled is deny once; an accepted flat form gives the
// decision it says, validated as any answer; a wrong one is an error.
func TestElicitationAnswer(t *testing.T) {
	f := New(writeReq(), Options{})
	now := time.Unix(1_700_000_000, 0)
	for _, action := range []string{"decline", "cancel"} {
		a, err := f.ElicitationAnswer(action, map[string]any{"choice": "allow-once"})
		if d, derr := f.Decide(a, decision.FrontendAnswers, now); err != nil || derr != nil || d.Decision != decision.Deny {
			t.Errorf("%s: %+v, %v, %v", action, d, err, derr)
		}
	}
	a, err := f.ElicitationAnswer("accept", map[string]any{"choice": "allow-always", "grants": "fs.write", "scope_path": "/p/",
		"workdir_scope": "all", "lifetime": "900"})
	d, derr := f.Decide(a, decision.FrontendAnswers, now)
	if err != nil || derr != nil || d.Persist != decision.PersistAlways || !reflect.DeepEqual(d.Grants, []string{"fs.write"}) ||
		d.Rule.Scopes["path"] != "/p/" || d.Rule.WorkdirScope != "all" || d.Rule.Expires != now.Unix()+900 {
		t.Errorf("accept: %+v, %v, %v", d, err, derr)
	}
	a, _ = f.ElicitationAnswer("accept", map[string]any{"choice": "deny-once", "message": "no"})
	if d, _ := f.Decide(a, decision.FrontendAnswers, now); d.Message != "no" || d.Decision != decision.Deny {
		t.Errorf("deny with a reason: %+v", d)
	}
	for _, bad := range []map[string]any{{}, {"choice": 1}, {"choice": "allow-once", "colour": "red"}, {"choice": "allow-once", "grants": true}} {
		if _, err := f.ElicitationAnswer("accept", bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
	if _, err := f.ElicitationAnswer("shrug", nil); err == nil {
		t.Error("an unknown action was accepted")
	}
	// A choice the form does not offer is Decide's to refuse.
	a, _ = f.ElicitationAnswer("accept", map[string]any{"choice": "allow-session"})
	if _, err := f.Decide(a, decision.FrontendAnswers, now); err == nil {
		t.Error("allow-session without session memory was decided")
	}
}

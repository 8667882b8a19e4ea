package state

import (
	"testing"

	"github.com/askperm/askperm/decision"
)

// TestByPerson: a person decided only what a person's frontend ended
// with cause user; a person was asked whenever such a frontend ended it.
func TestByPerson(t *testing.T) {
	frontends := []decision.Frontend{"tui", "line", "yad", "zenity", "team", "answers", "rules", "memory", "none", "reviewer", ""}
	causes := []decision.Cause{"user", "rule", "session", "timeout", "cancelled", "unavailable", "rate-limit", "error", "reviewer"}
	for _, f := range frontends {
		for _, c := range causes {
			e := AuditEntry{Frontend: f, Cause: c}
			person := f == "tui" || f == "line" || f == "yad" || f == "zenity" || f == "team"
			if e.Asked() != person || e.ByPerson() != (person && c == "user") {
				t.Errorf("frontend %q cause %q: asked %v, by person %v", f, c, e.Asked(), e.ByPerson())
			}
		}
	}
}

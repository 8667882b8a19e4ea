package inbox

import (
	"fmt"
	"time"

	"github.com/askperm/askperm/form"
)

// Row is e's row at now: host, id (what inbox answer takes), session, age, time left and the
// question, request text rendered by form (the question already is).
func Row(e *Entry, now time.Time) []string {
	session := "-"
	if e.Request.SessionID != "" {
		session = form.Line(e.Request.SessionID)
	}
	return []string{form.Line(e.Host), form.Line(e.ID()), session, Duration(now.Sub(e.Published)), Duration(e.Deadline.Sub(now)), e.Question}
}

// Duration is d in whole seconds, at most two units: 45s, 3m05s, 2h10m.
// A negative d is 0s.
func Duration(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

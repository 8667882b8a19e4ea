package form

import "github.com/askperm/askperm/decision"

// verb is how the headline says an action: the phrase before the value,
// and the phrase when the request has no value to name.
type verb struct{ object, alone string }

// verbs are the actions askperm's describers produce and the ones the
// protocol names, as English: `wants to read /etc/hosts`, never `wants to
// destructive /tmp/x`.
var verbs = map[string]verb{
	"read":        {"read", "read something"},
	"write":       {"write", "write something"},
	"destructive": {"change or delete", "make a change that may not be undone"},
	"network":     {"reach", "reach the network"},
	"exec":        {"run", "run a command"},
	"execute":     {"run", "run a command"},
	"delete":      {"delete", "delete something"},
}

// run is the verb of a command line, whatever the action.
var run = verb{"run", "run a command"}

// actionPhrase is what the headline says the request wants to do, up to
// its value (object): a known action by its verb, a command line as run,
// another action as written when it reads as a verb (one lower-case word:
// `wants to deploy`), else named as an action (`wants to do the action “net ops” on …`).
func actionPhrase(r *decision.Request, object bool) string {
	v, ok := verbs[r.Action]
	if len(r.Dimensions) > 0 && r.Dimensions[0].IsShell() {
		v, ok = run, true
	}
	switch {
	case ok && object:
		return v.object
	case ok:
		return v.alone
	case isWord(r.Action):
		return r.Action
	}
	s := "do the action “" + headlineCut(r.Action, HeadlineNameRunes, "") + "”"
	if object {
		s += " on"
	}
	return s
}

// isWord reports whether s is one lower-case ASCII word, as a verb reads.
func isWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

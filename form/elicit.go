package form

import (
	"fmt"
	"strings"
)

// The native MCP elicitation form is flat (protocol section 3): a server
// that asks for permission through an elicitation gets "choice",
// "message", "grants" (comma-separated), "scope_NAME" per dimension,
// "workdir_scope" and "lifetime" back.

// ElicitationAnswer is the answer an elicitation's result gives: for
// action "accept", its flat content read onto the form's defaults; for
// "decline" or "cancel", deny once. The answer still goes through Decide,
// which validates it as any other.
func (f *Form) ElicitationAnswer(action string, content map[string]any) (Answer, error) {
	a := f.Defaults()
	switch action {
	case "decline", "cancel":
		return a, nil
	case "accept":
	default:
		return Answer{}, fmt.Errorf("elicitation: unknown action %q", action)
	}
	str := func(key string) (string, bool, error) {
		v, ok := content[key]
		if !ok {
			return "", false, nil
		}
		s, isString := v.(string)
		if !isString {
			return "", false, fmt.Errorf("elicitation: %s: not a string", key)
		}
		return s, true, nil
	}
	choice, ok, err := str("choice")
	switch {
	case err != nil:
		return Answer{}, err
	case !ok:
		return Answer{}, fmt.Errorf("elicitation: choice: missing")
	}
	a.Choice = Choice(choice)
	for key := range content {
		var err error
		switch {
		case key == "choice":
		case key == "message":
			a.Message, _, err = str(key)
		case key == "grants":
			var g string
			if g, _, err = str(key); err == nil {
				a.Grants = strings.Split(g, ",")
			}
		case key == "workdir_scope":
			a.WorkdirScope, _, err = str(key)
		case key == "lifetime":
			a.Lifetime, _, err = str(key)
		case strings.HasPrefix(key, "scope_"):
			var m string
			if m, _, err = str(key); err == nil {
				a.Scopes[strings.TrimPrefix(key, "scope_")] = m
			}
		default:
			err = fmt.Errorf("elicitation: unknown field %q", key)
		}
		if err != nil {
			return Answer{}, err
		}
	}
	return a, nil
}

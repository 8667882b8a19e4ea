package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/askperm/askperm/decision"
)

// verbs is the verb policy (protocol section 8).
type verbs struct {
	alwaysRequire, require, auto []string
	bulkLimit                    int
	allowlist                    []string
	roles                        map[string][]string
}

// Defaults of the verb policy's lists left out of [verbs].
var (
	defaultAlwaysRequire = []string{"delete", "cancel"}
	defaultRequire       = []string{"create", "update", "submit"}
	defaultAuto          = []string{"read", "search", "list"}
)

const defaultBulkLimit = 5

func compileVerbs(vt verbsTOML) (*verbs, error) {
	if vt.BulkLimit < 0 {
		return nil, fmt.Errorf("bulk_limit: %d is negative", vt.BulkLimit)
	}
	or := func(list, def []string) []string {
		if list == nil {
			list = def
		}
		out := make([]string, len(list))
		for i, v := range list {
			out[i] = strings.ToLower(v)
		}
		return out
	}
	v := &verbs{
		alwaysRequire: or(vt.AlwaysRequire, defaultAlwaysRequire),
		require:       or(vt.Require, defaultRequire),
		auto:          or(vt.Auto, defaultAuto),
		bulkLimit:     vt.BulkLimit,
		allowlist:     slices.Clone(vt.Allowlist),
		roles:         map[string][]string{},
	}
	if v.bulkLimit == 0 {
		v.bulkLimit = defaultBulkLimit
	}
	for role, list := range vt.Roles {
		v.roles[role] = or(list, []string{})
	}
	return v, nil
}

// Words are the words of a call's name, lowercase, "get" read as
// "read": of the tool's name and, for an execute_action* tool, of
// arguments.action (that exact key, read strictly) after it; without a
// tool, of the request's action. A name splits at '_', '-', '.', spaces
// and a lowercase letter followed by an uppercase one (deleteRecords,
// delete-records, DeleteRecords: delete, records). Arguments that name a
// key in two spellings are the policy's to refuse (Policy.Opinions),
// whatever the words.
func Words(req *decision.Request) (tool, action []string) {
	if req.Tool == "" {
		return words(req.Action), nil
	}
	if strings.HasPrefix(req.Tool, "execute_action") {
		var args struct {
			Action string `json:"action"`
		}
		// json v2 matches names exactly and refuses duplicates: the verb
		// is the one a strict server reads.
		if jsonv2.Unmarshal(req.Arguments, &args) == nil {
			action = words(args.Action)
		}
	}
	return words(req.Tool), action
}

// words splits name into its words (see Words): at every rune that is
// neither a letter nor a digit, where a lowercase letter or a digit meets
// an uppercase one, where letters meet digits, and before the last
// capital of a run followed by a lowercase letter (HTTPDelete: http,
// delete).
func words(name string) []string {
	rs := []rune(name)
	var out []string
	start := 0
	cut := func(end int) {
		if end > start {
			word := strings.ToLower(string(rs[start:end]))
			if word == "get" {
				word = "read"
			}
			out = append(out, word)
		}
		start = end
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			cut(i)
			start = i + 1
			continue
		}
		if i == start {
			continue
		}
		p := rs[i-1]
		switch {
		case unicode.IsLower(r) && unicode.IsUpper(p) && i-1 > start && unicode.IsUpper(rs[i-2]):
			cut(i - 1)
		case unicode.IsUpper(r) && unicode.IsLower(p), unicode.IsDigit(r) != unicode.IsDigit(p):
			cut(i)
		}
	}
	cut(len(rs))
	return out
}

// opinion is the verb policy's opinion of req: its first matching branch.
// It errs wide for asking, narrow for allowing: a call asks when any word
// of its name (its tool's or its action's) is on a list that asks, and is
// allowed by auto only for its verb, the first word of its action (else
// of its tool), when no word asks.
func (v *verbs) opinion(req *decision.Request) (Verdict, string) {
	if len(v.allowlist) > 0 && !slices.Contains(v.allowlist, req.Tool) {
		return Deny, "allowlist"
	}
	tool, action := Words(req)
	all := append(slices.Clone(tool), action...)
	verb := ""
	switch {
	case len(action) > 0:
		verb = action[0]
	case len(tool) > 0:
		verb = tool[0]
	}
	// Words compare to the lists asking under Unicode simple folding, as
	// a server that folds an action's case reads them ("ſubmit").
	any := func(list []string) bool {
		return slices.ContainsFunc(all, func(w string) bool {
			return slices.ContainsFunc(list, func(l string) bool { return strings.EqualFold(w, l) })
		})
	}
	deletes := slices.ContainsFunc(all, func(w string) bool {
		r := []rune(w)
		return len(r) >= len("delete") && strings.EqualFold(string(r[:len("delete")]), "delete")
	})
	switch {
	case strings.HasPrefix(req.Tool, "execute_action") && strayAction(req.Arguments):
		return Deny, "action"
	case any(v.alwaysRequire) || deletes:
		return Prompt, "always_require"
	case largestArray(req.Arguments) > v.bulkLimit:
		return Prompt, "bulk_limit"
	case v.roleRequires(req.Role, any):
		return Prompt, "roles." + req.Role
	case any(v.require):
		return Prompt, "require"
	case slices.Contains(v.auto, verb):
		return Allow, "auto"
	}
	return Abstain, ""
}

// strayAction reports whether arguments give the action's key in a
// spelling other than "action" ("Action", "ACTION"): the policy reads the
// exact key, and a server that folds case would read the other.
func strayAction(arguments []byte) bool {
	var args map[string]jsontext.Value
	if jsonv2.Unmarshal(arguments, &args) != nil {
		return false
	}
	for k := range args {
		if k != "action" && strings.EqualFold(k, "action") {
			return true
		}
	}
	return false
}

// roleRequires reports whether role asks for a call: a role with an
// empty list asks for every one, else when any of its words is listed.
func (v *verbs) roleRequires(role string, any func([]string) bool) bool {
	list, ok := v.roles[role]
	return ok && role != "" && (len(list) == 0 || any(list))
}

// largestArray is the length of the largest array anywhere in the
// arguments: how many targets a bulk call names.
func largestArray(raw []byte) int {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	var walk func(any) int
	walk = func(v any) int {
		n := 0
		switch v := v.(type) {
		case []any:
			n = len(v)
			for _, e := range v {
				n = max(n, walk(e))
			}
		case map[string]any:
			for _, e := range v {
				n = max(n, walk(e))
			}
		}
		return n
	}
	return walk(v)
}

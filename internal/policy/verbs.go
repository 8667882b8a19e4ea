package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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

// Verb is a call's semantic verb: the name an execute_action_* tool
// gives in arguments.action (that exact key, read strictly), else the
// tool's name; of either, the lowercase prefix before the first "_", with
// "get" read as "read" (delete_records: delete). Without a tool, the
// request's action. Arguments that name a key in two spellings are the
// policy's to refuse (Policy.Opinions), whatever the verb.
func Verb(req *decision.Request) string {
	if req.Tool == "" {
		return strings.ToLower(req.Action)
	}
	name := req.Tool
	if strings.HasPrefix(req.Tool, "execute_action") {
		var args struct {
			Action string `json:"action"`
		}
		// json v2 matches names exactly and refuses duplicates: the verb
		// is the one a strict server reads.
		if jsonv2.Unmarshal(req.Arguments, &args) == nil && args.Action != "" {
			name = args.Action
		}
	}
	verb, _, _ := strings.Cut(strings.ToLower(name), "_")
	if verb == "get" {
		return "read"
	}
	return verb
}

// opinion is the verb policy's opinion of req: its first matching branch.
func (v *verbs) opinion(req *decision.Request) (Verdict, string) {
	if len(v.allowlist) > 0 && !slices.Contains(v.allowlist, req.Tool) {
		return Deny, "allowlist"
	}
	verb := Verb(req)
	switch {
	case strings.HasPrefix(req.Tool, "execute_action") && strayAction(req.Arguments):
		return Deny, "action"
	case slices.Contains(v.alwaysRequire, verb) || strings.HasPrefix(req.Tool, "delete_"):
		return Prompt, "always_require"
	case largestArray(req.Arguments) > v.bulkLimit:
		return Prompt, "bulk_limit"
	case v.roleRequires(req.Role, verb):
		return Prompt, "roles." + req.Role
	case slices.Contains(v.require, verb):
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

func (v *verbs) roleRequires(role, verb string) bool {
	list, ok := v.roles[role]
	return ok && role != "" && (len(list) == 0 || slices.Contains(list, verb))
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

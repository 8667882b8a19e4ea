package policy

import (
	"reflect"
	"testing"

	"github.com/askperm/askperm/decision"
)

func opinion(v Verdict, by decision.Frontend, cause decision.Cause, name string) Opinion {
	return Opinion{Verdict: v, By: by, Cause: cause, Name: name}
}

var (
	ruleAllow   = opinion(Allow, decision.FrontendRules, decision.CauseRule, "allow-reads")
	rulePrompt  = opinion(Prompt, decision.FrontendRules, decision.CauseRule, "ask-writes")
	ruleDeny    = opinion(Deny, decision.FrontendRules, decision.CauseRule, "no-push")
	ruleDeny2   = opinion(Deny, decision.FrontendRules, decision.CauseRule, "no-force")
	memoryAllow = opinion(Allow, decision.FrontendMemory, decision.CauseRule, "r1")
	session     = opinion(Allow, decision.FrontendMemory, decision.CauseSession, "s1")
)

func TestCombineStrictestWins(t *testing.T) {
	for _, tc := range []struct {
		ops     []Opinion
		verdict Verdict
		winners []string
	}{
		{nil, Prompt, nil},
		{[]Opinion{ruleAllow}, Allow, []string{"allow-reads"}},
		{[]Opinion{ruleAllow, ruleDeny}, Deny, []string{"no-push"}},
		{[]Opinion{rulePrompt, ruleAllow}, Prompt, []string{"ask-writes"}},
		{[]Opinion{ruleDeny, rulePrompt, ruleAllow, ruleDeny2}, Deny, []string{"no-push", "no-force"}},
		{[]Opinion{memoryAllow, session}, Allow, []string{"r1", "s1"}},
	} {
		v, winners := Combine(tc.ops)
		var names []string
		for _, w := range winners {
			names = append(names, w.Name)
		}
		if v != tc.verdict || !reflect.DeepEqual(names, tc.winners) {
			t.Errorf("%v: got %v %v", tc.ops, v, names)
		}
	}
}

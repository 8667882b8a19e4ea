package form

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
)

// The rule stage as data: what it asks, in which order, with which options
// and words. Every frontend renders these questions; none words them
// itself.

// Question is one question of stage "rule".
type Question struct {
	// Name is a short name of askperm's own, never request text: "Grants",
	// "Scope" (numbered when several are asked), "Workdir", "Lifetime". Dialogs use it where request text
	// must not go (argv).
	Name string
	// Title says what is asked; request text in it is rendered safe.
	Title string
	// Options are the answers offered, in order.
	Options []Option
	// Multi means any subset of the options may be chosen (the grants);
	// otherwise exactly one.
	Multi bool
	// Item is what one option of a Multi question is called: "Grant".
	Item string

	get func(Answer) []string
	set func(*Answer, []string)
}

// Option is one answer to a question.
type Option struct {
	Label string // what choosing it means, rendered safe
	Value string // the answer's value
}

// Chosen lists the values of the options a has chosen.
func (q Question) Chosen(a Answer) []string { return q.get(a) }

// Choose sets a's answer to q to the given values, which must be values of
// q's options (one for a question that is not Multi). a's scopes are
// copied first, never written through: an Answer is a value.
func (q Question) Choose(a *Answer, values []string) { q.set(a, values) }

// Index is the index of the option with value v, -1 if none.
func (q Question) Index(v string) int {
	return slices.IndexFunc(q.Options, func(o Option) bool { return o.Value == v })
}

// Wording of the rule stage's actions.
const (
	SaveLabel = "Save rule"
	BackLabel = "« Back"
)

// RuleQuestions are the questions of stage "rule" for a's choice, in
// order: the grants (allow-always with grants), a scope for each dimension
// with two or more scopes, the workdir scope (with a workdir), the
// lifetime.
func (f *Form) RuleQuestions(a Answer) []Question {
	var qs []Question
	if a.Choice == AllowAlways && len(f.Req.Grants) > 0 {
		qs = append(qs, f.grantsQuestion())
	}
	asked := f.AskedDimensions()
	for n, i := range asked {
		name := "Scope"
		if len(asked) > 1 {
			name = fmt.Sprintf("Scope %d", n+1)
		}
		qs = append(qs, scopeQuestion(name, f.Req.Dimensions[i]))
	}
	if f.Req.Workdir != nil {
		qs = append(qs, Question{
			Name:  "Workdir",
			Title: "Workdir",
			Options: []Option{
				{f.WorkdirScopeText(decision.WorkdirSelected), decision.WorkdirSelected},
				{f.WorkdirScopeText(decision.WorkdirAll) + " (every configured workdir, including future ones)", decision.WorkdirAll},
			},
			get: func(a Answer) []string { return []string{a.WorkdirScope} },
			set: func(a *Answer, v []string) { a.WorkdirScope = v[0] },
		})
	}
	life := Question{
		Name:  "Lifetime",
		Title: "Lifetime",
		get:   func(a Answer) []string { return []string{a.Lifetime} },
		set:   func(a *Answer, v []string) { a.Lifetime = v[0] },
	}
	for _, l := range decision.Lifetimes {
		life.Options = append(life.Options, Option{LifetimeText(l), l})
	}
	return append(qs, life)
}

func (f *Form) grantsQuestion() Question {
	q := Question{
		Name:  "Grants",
		Title: "Grants the rule gives",
		Multi: true,
		Item:  "Grant",
		get:   func(a Answer) []string { return slices.Clone(a.Grants) },
		set: func(a *Answer, v []string) {
			// In request order, whatever order they were chosen in.
			chosen := make(map[string]bool, len(v))
			for _, name := range v {
				chosen[name] = true
			}
			a.Grants = nil
			for _, g := range f.Req.Grants {
				if chosen[g.Name] {
					a.Grants = append(a.Grants, g.Name)
				}
			}
		},
	}
	for _, g := range f.Req.Grants {
		q.Options = append(q.Options, Option{f.GrantText(g), g.Name})
	}
	return q
}

func scopeQuestion(name string, d decision.Dimension) Question {
	q := Question{
		Name:  name,
		Title: "Which " + DimensionLabel(d) + " the rule covers",
		get:   func(a Answer) []string { return []string{a.Scopes[d.Name]} },
		set: func(a *Answer, v []string) {
			a.Scopes = maps.Clone(a.Scopes)
			if a.Scopes == nil {
				a.Scopes = map[string]string{}
			}
			a.Scopes[d.Name] = v[0]
		},
	}
	for _, s := range d.Scopes {
		q.Options = append(q.Options, Option{ScopeOption(s), s.Match})
	}
	return q
}

// GrantText is a grant as a person reads it: its name, its description
// and the grants it implies, directly or through others, e.g.
// `fs.create — create new files (implies fs.write)`.
func (f *Form) GrantText(g decision.Grant) string {
	s := Line(g.Name)
	if g.Description != "" {
		s += " — " + Line(g.Description)
	}
	return s + f.impliesNote(g.Name)
}

// GrantName is a grant's name and the grants it implies, directly or
// through others, e.g. `fs.create (implies fs.write)`: for frontends that
// show a description apart.
func (f *Form) GrantName(g decision.Grant) string {
	return Line(g.Name) + f.impliesNote(g.Name)
}

// impliesNote is ` (implies a, b)` for a grant that implies a and b, empty
// for one that implies none.
func (f *Form) impliesNote(name string) string {
	implied := f.implied[name]
	if len(implied) == 0 {
		return ""
	}
	return " (implies " + lineList(implied) + ")"
}

// lineList renders names and joins them with commas.
func lineList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Line(n)
	}
	return strings.Join(out, ", ")
}

// FixedScopes states the scope of each dimension that offers only one,
// which stage "rule" does not ask.
func (f *Form) FixedScopes() []string {
	var ls []string
	for _, d := range f.Req.Dimensions {
		if len(d.Scopes) == 1 {
			ls = append(ls, DimensionLabel(d)+": "+ScopeOption(d.Scopes[0])+" (the only scope offered)")
		}
	}
	return ls
}

package tui

import (
	"errors"

	"github.com/charmbracelet/huh"

	"github.com/askperm/askperm/form"
)

// tuiStage is what one stage of the form puts in the frame: its huh form, the
// gate its validators consult, and askperm's own lines to show above it.
type tuiStage struct {
	form *huh.Form
	gate *armGate
	note func() []string // nil: nothing above the form
}

// armGate refuses an allow until the stage has been open for the arming
// delay, so keys typed before the person saw the prompt never approve.
type armGate struct{ armed bool }

var errNotArmed = errors.New("wait… allowing is possible in a moment")

func (g *armGate) check(allow bool) error {
	if allow && !g.armed {
		return errNotArmed
	}
	return nil
}

func newHuhForm(groups ...*huh.Group) *huh.Form {
	// askperm draws the help and the errors itself, in its status line.
	return huh.NewForm(groups...).
		WithAccessible(false).
		WithShowHelp(false).
		WithShowErrors(false)
}

// tuiChoice asks stage "choice": the offered choices with a's choice
// focused (deny once unless Back brought another), then, for a deny, the
// optional reason, prefilled with what was typed before a Back.
func tuiChoice(f *form.Form, a *form.Answer) tuiStage {
	g := &armGate{}
	var opts []huh.Option[form.Choice]
	for _, c := range f.Choices() {
		opts = append(opts, huh.NewOption(form.ChoiceLabel(c), c))
	}
	choice := huh.NewSelect[form.Choice]().
		Title("Your decision").
		Options(opts...).
		Value(&a.Choice).
		Validate(func(c form.Choice) error { return g.check(c.IsAllow()) })
	reason := huh.NewInput().
		Title("Denial reason (optional)").
		Description("Enter to go on, Shift+Tab to change the decision.").
		Value(&a.Message).
		Validate(func(m string) error { return f.CheckChoice(form.Answer{Choice: a.Choice, Message: m}) })
	return tuiStage{
		form: newHuhForm(
			huh.NewGroup(choice),
			huh.NewGroup(reason).WithHideFunc(func() bool { return a.Choice.IsAllow() }),
		),
		gate: g,
	}
}

// The values of the last select of stage "rule".
const (
	tuiSave = "save"
	tuiBack = "back"
)

// tuiRule asks stage "rule" in one group: the form's rule questions, each
// a select (a multi-select for the grants), then Save or Back. The exact
// rule is shown above the form as it changes.
type tuiRule struct {
	tuiStage
	f      *form.Form
	a      *form.Answer
	qs     []form.Question
	values [][]string // each question's chosen values, bound to its field
	action string
}

func newTUIRule(f *form.Form, a *form.Answer) *tuiRule {
	r := &tuiRule{f: f, a: a, qs: f.RuleQuestions(*a), action: tuiSave}
	r.gate = &armGate{}
	r.note = r.lines
	r.values = make([][]string, len(r.qs))
	var fields []huh.Field
	for i, q := range r.qs {
		r.values[i] = q.Chosen(*a)
		var opts []huh.Option[string]
		for _, o := range q.Options {
			opts = append(opts, huh.NewOption(o.Label, o.Value))
		}
		if q.Multi {
			fields = append(fields, huh.NewMultiSelect[string]().
				Title(q.Title+" (space toggles)").
				Options(opts...).
				Value(&r.values[i]).
				Validate(func([]string) error { return f.CheckRule(r.answer()) }))
			continue
		}
		fields = append(fields, huh.NewSelect[string]().
			Title(q.Title).
			Options(opts...).
			Value(&r.values[i][0]))
	}
	fields = append(fields, huh.NewSelect[string]().
		Title(form.ChoiceLabel(a.Choice)+" with the rule above?").
		Options(huh.NewOption(form.SaveLabel, tuiSave), huh.NewOption(form.BackLabel, tuiBack)).
		Value(&r.action).
		Validate(func(act string) error {
			if act == tuiBack {
				return nil
			}
			if err := r.gate.check(a.Choice.IsAllow()); err != nil {
				return err
			}
			return f.CheckRule(r.answer())
		}))
	r.form = newHuhForm(huh.NewGroup(fields...))
	return r
}

// answer is the answer as the form stands now.
func (r *tuiRule) answer() form.Answer {
	b := *r.a
	for i, q := range r.qs {
		q.Choose(&b, r.values[i])
	}
	return b
}

// store keeps what was chosen in the answer, for the decision or for the
// next pass after a Back.
func (r *tuiRule) store() { *r.a = r.answer() }

func (r *tuiRule) back() bool { return r.action == tuiBack }

// lines states the rule the current answer saves, and the dimensions whose
// sole scope is not asked.
func (r *tuiRule) lines() []string {
	return append([]string{"Rule to save: " + r.f.RuleSummary(r.answer())}, r.f.FixedScopes()...)
}

package prompt

import (
	"errors"
	"maps"

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
		WithTheme(huh.ThemeBase16()).
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

// tuiRule asks stage "rule" in one group: the grants (allow-always only),
// a scope per asked dimension, the workdir scope, the lifetime, and finally
// Save or Back. The exact rule is shown above the form as it changes.
type tuiRule struct {
	tuiStage
	f      *form.Form
	a      *form.Answer
	asked  []int    // indexes of the asked dimensions
	scopes []string // their chosen matches, bound to the selects
	action string
}

func newTUIRule(f *form.Form, a *form.Answer) *tuiRule {
	r := &tuiRule{f: f, a: a, asked: f.AskedDimensions(), action: tuiSave}
	r.gate = &armGate{}
	r.note = r.lines
	var fields []huh.Field
	if a.Choice == form.AllowAlways && len(f.Req.Grants) > 0 {
		var opts []huh.Option[string]
		for _, g := range f.Req.Grants {
			label := form.Line(g.Name)
			if g.Description != "" {
				label += " — " + form.Line(g.Description)
			}
			opts = append(opts, huh.NewOption(label, g.Name))
		}
		fields = append(fields, huh.NewMultiSelect[string]().
			Title("Grants the rule gives (space toggles)").
			Options(opts...).
			Value(&a.Grants).
			Validate(func(gs []string) error {
				b := r.answer()
				b.Grants = gs
				return f.CheckRule(b)
			}))
	}
	r.scopes = make([]string, len(r.asked))
	for i, di := range r.asked {
		d := f.Req.Dimensions[di]
		r.scopes[i] = a.Scopes[d.Name]
		var opts []huh.Option[string]
		for _, s := range d.Scopes {
			opts = append(opts, huh.NewOption(form.ScopeOption(s), s.Match))
		}
		fields = append(fields, huh.NewSelect[string]().
			Title("Which "+form.DimensionLabel(d)+" the rule covers").
			Options(opts...).
			Value(&r.scopes[i]))
	}
	if f.Req.Workdir != nil {
		fields = append(fields, huh.NewSelect[string]().
			Title("Workdir").
			Options(
				huh.NewOption(f.WorkdirScopeText(form.WorkdirSelected), form.WorkdirSelected),
				huh.NewOption(f.WorkdirScopeText(form.WorkdirAll)+" (every configured workdir, future ones too)", form.WorkdirAll),
			).
			Value(&a.WorkdirScope))
	}
	var lifetimes []huh.Option[string]
	for _, l := range form.Lifetimes {
		lifetimes = append(lifetimes, huh.NewOption(form.LifetimeText(l), l))
	}
	fields = append(fields,
		huh.NewSelect[string]().Title("Lifetime").Options(lifetimes...).Value(&a.Lifetime),
		huh.NewSelect[string]().
			Title(form.ChoiceLabel(a.Choice)+" with the rule above?").
			Options(huh.NewOption("Save rule", tuiSave), huh.NewOption("« Back", tuiBack)).
			Value(&r.action).
			Validate(func(act string) error {
				if act == tuiBack {
					return nil
				}
				if err := r.gate.check(a.Choice.IsAllow()); err != nil {
					return err
				}
				return f.CheckRule(r.answer())
			}),
	)
	r.form = newHuhForm(huh.NewGroup(fields...))
	return r
}

// answer is the answer as the form stands now.
func (r *tuiRule) answer() form.Answer {
	b := *r.a
	b.Scopes = maps.Clone(r.a.Scopes)
	for i, di := range r.asked {
		b.Scopes[r.f.Req.Dimensions[di].Name] = r.scopes[i]
	}
	return b
}

// store keeps the chosen scopes in the answer, for the decision or for
// the next pass after a Back.
func (r *tuiRule) store() { r.a.Scopes = r.answer().Scopes }

func (r *tuiRule) back() bool { return r.action == tuiBack }

// lines states the rule the current answer saves, and the dimensions whose
// sole scope is not asked.
func (r *tuiRule) lines() []string {
	ls := []string{"Rule to save: " + r.f.RuleSummary(r.answer())}
	for _, d := range r.f.Req.Dimensions {
		if len(d.Scopes) == 1 {
			ls = append(ls, form.DimensionLabel(d)+": "+form.ScopeOption(d.Scopes[0])+" (the only scope offered)")
		}
	}
	return ls
}

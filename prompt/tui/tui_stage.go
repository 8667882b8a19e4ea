package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/askperm/askperm/form"
)

// stage is one stage of the form inside askperm's frame: its questions and
// the keys that answer them. The screen passes it only the keys askperm
// documents for answering: the arrows, Enter, Tab, Shift+Tab, Space,
// Backspace and text, none with Alt. Each stage acts on fewer: text only
// in the denial reason, Space only in the grants list.
type stage interface {
	// key handles a key and reports whether the stage is answered.
	key(k tea.KeyMsg) bool
	// note is askperm's lines above the questions at width.
	note(width int) []string
	// view draws the focused question in at most rows lines at width.
	view(width, rows int) []string
	// minRows is the fewest lines view needs at width.
	minRows(width int) int
	// problem is why the last answer was refused; "" when none was.
	problem() string
	// legend names the keys that act now.
	legend() string
}

// arrow is the move Up or Down makes.
func arrow(k tea.KeyMsg) int {
	if k.Type == tea.KeyUp {
		return -1
	}
	return 1
}

// ruleStage asks stage "rule": the form's rule questions one at a time,
// each a list (a multi-select for the grants), then Save or Back. The exact
// rule is stated above the question as it changes. Its lists are askperm's
// optionList, not huh's Select or MultiSelect: those wrap and draw every
// option on every key, and the protocol allows a thousand scopes or grants
// of 4 KiB labels, where huh's Select took 547 ms per key (optionList
// draws only the options around the cursor).
type ruleStage struct {
	st    tuiStyles
	f     *form.Form
	a     *form.Answer
	qs    []form.Question
	lists []*optionList // one per question, then Save or Back
	cur   form.Answer   // the answer as the lists stand
	focus int
	err   string

	noteWidth int // width noteLines was wrapped for; 0: stale
	noteLines []string
}

func newRuleStage(st tuiStyles, f *form.Form, a *form.Answer) *ruleStage {
	r := &ruleStage{st: st, f: f, a: a, qs: f.RuleQuestions(*a), cur: *a}
	for _, q := range r.qs {
		r.lists = append(r.lists, questionList(st, q, *a))
	}
	r.lists = append(r.lists, &optionList{
		st:     st,
		title:  form.ChoiceLabel(a.Choice) + " with the rule above?",
		labels: []string{form.SaveLabel, form.BackLabel},
		whole:  true,
	})
	return r
}

// questionList is q as a list, a's answer chosen.
func questionList(st tuiStyles, q form.Question, a form.Answer) *optionList {
	l := &optionList{st: st, title: q.Title, multi: q.Multi, labels: make([]string, len(q.Options))}
	for i, o := range q.Options {
		l.labels[i] = o.Label
	}
	chosen := q.Chosen(a)
	if !q.Multi {
		l.cursor = max(0, q.Index(chosen[0]))
		return l
	}
	l.title += " (space toggles)"
	l.on = make([]bool, len(q.Options))
	for _, v := range chosen {
		if i := q.Index(v); i >= 0 {
			l.on[i] = true
		}
	}
	return l
}

func (r *ruleStage) key(k tea.KeyMsg) bool {
	r.err = ""
	l := r.lists[r.focus]
	switch {
	case k.Type == tea.KeyUp || k.Type == tea.KeyDown:
		l.move(arrow(k))
		if !l.multi {
			r.choose()
		}
	case k.Type == tea.KeySpace && l.multi:
		l.toggle()
		r.choose()
	case k.Type == tea.KeyEnter:
		return r.next(true)
	case k.Type == tea.KeyTab:
		r.next(false)
	case k.Type == tea.KeyShiftTab:
		r.focus = max(0, r.focus-1)
	}
	return false
}

// choose applies the focused question's list to the answer.
func (r *ruleStage) choose() {
	if r.focus == len(r.qs) {
		return // Save or Back
	}
	q, l := r.qs[r.focus], r.lists[r.focus]
	var values []string
	for i, o := range q.Options {
		if l.multi && l.on[i] || !l.multi && i == l.cursor {
			values = append(values, o.Value)
		}
	}
	q.Choose(&r.cur, values)
	r.noteWidth = 0
}

// next leaves the focused question, which the grants allow only with a
// grant chosen. On the last question only Enter acts: it saves the rule
// or goes back, keeping what was chosen either way.
func (r *ruleStage) next(enter bool) bool {
	last := r.focus == len(r.qs)
	switch {
	case last && !enter:
		return false
	case r.lists[r.focus].multi || last && !r.back():
		if err := r.f.CheckRule(r.cur); err != nil {
			r.err = err.Error()
			return false
		}
	}
	if !last {
		r.focus++
		return false
	}
	*r.a = r.cur
	return true
}

// back reports whether Back is chosen.
func (r *ruleStage) back() bool { return r.lists[len(r.qs)].cursor == 1 }

// note states the rule the answer saves, and the dimensions whose sole
// scope is not asked.
func (r *ruleStage) note(width int) []string {
	if r.noteWidth != width {
		r.noteLines = labelled(r.st, "Rule to save", r.f.RuleSummary(r.cur), width)
		for _, l := range r.f.FixedScopes() {
			r.noteLines = append(r.noteLines, labelled(r.st, "Not asked", l, width)...)
		}
		r.noteWidth = width
	}
	return r.noteLines
}

func (r *ruleStage) view(width, rows int) []string {
	return r.lists[r.focus].view(width, rows)
}

func (r *ruleStage) minRows(width int) int { return r.lists[r.focus].minRows(width) }

func (r *ruleStage) problem() string { return r.err }

func (r *ruleStage) legend() string {
	keys := []string{"up/down: choose"}
	if r.lists[r.focus].multi {
		keys = append(keys, "space: toggle")
	}
	if r.focus == len(r.qs) {
		keys = append(keys, "enter: confirm")
	} else {
		keys = append(keys, "enter: next")
	}
	if r.focus > 0 {
		keys = append(keys, "shift+tab: back")
	}
	return strings.Join(append(keys, "esc: cancel"), " · ")
}

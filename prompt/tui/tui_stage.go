package tui

import (
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

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

// choiceStage asks stage "choice": the offered choices with a's choice
// focused (deny once unless Back brought another), then, for a deny, the
// optional reason, prefilled with what was typed before a Back.
type choiceStage struct {
	st      tuiStyles
	f       *form.Form
	a       *form.Answer
	choices []form.Choice
	list    *optionList
	reason  string
	typing  bool // the reason has the focus
	err     string
}

func newChoiceStage(st tuiStyles, f *form.Form, a *form.Answer) *choiceStage {
	c := &choiceStage{st: st, f: f, a: a, choices: f.Choices(), reason: a.Message}
	labels := make([]string, len(c.choices))
	for i, ch := range c.choices {
		labels[i] = form.ChoiceLabel(ch)
	}
	cursor := slices.Index(c.choices, a.Choice)
	if cursor < 0 {
		cursor = slices.Index(c.choices, form.DenyOnce)
	}
	c.list = &optionList{st: st, title: "Your decision", labels: labels, whole: true, cursor: cursor}
	return c
}

func (c *choiceStage) chosen() form.Choice { return c.choices[c.list.cursor] }

func (c *choiceStage) key(k tea.KeyMsg) bool {
	c.err = ""
	if c.typing {
		return c.typeKey(k)
	}
	switch k.Type {
	case tea.KeyUp, tea.KeyDown:
		c.list.move(arrow(k))
	case tea.KeyEnter:
		if c.chosen().IsAllow() {
			return c.answer(c.a.Message)
		}
		c.typing = true
	case tea.KeyTab: // on to the reason; never confirms an allow
		c.typing = !c.chosen().IsAllow()
	}
	return false
}

// arrow is the move Up or Down makes.
func arrow(k tea.KeyMsg) int {
	if k.Type == tea.KeyUp {
		return -1
	}
	return 1
}

func (c *choiceStage) typeKey(k tea.KeyMsg) bool {
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		c.reason += string(k.Runes)
	case tea.KeyBackspace:
		if r := []rune(c.reason); len(r) > 0 {
			c.reason = string(r[:len(r)-1])
		}
	case tea.KeyShiftTab:
		c.typing = false
	case tea.KeyEnter:
		return c.answer(c.reason)
	}
	return false
}

// answer validates the chosen choice with message and keeps it in a.
func (c *choiceStage) answer(message string) bool {
	ans := *c.a
	ans.Choice, ans.Message = c.chosen(), message
	if err := c.f.CheckChoice(ans); err != nil {
		c.err = err.Error()
		return false
	}
	*c.a = ans
	return true
}

func (c *choiceStage) note(int) []string { return nil }

func (c *choiceStage) view(width, rows int) []string {
	if !c.typing {
		return c.list.view(width, rows)
	}
	st := c.st
	lines := hanging("  Chosen: "+form.ChoiceLabel(c.chosen()), width)
	for _, t := range wrapLines("Denial reason (optional)", width-listIndent) {
		lines = append(lines, st.border+st.bold.Render(t))
	}
	for _, t := range wrapLines("Enter to go on, Shift+Tab to change the decision.", width-listIndent) {
		lines = append(lines, st.border+st.faint.Render(t))
	}
	return append(lines, st.border+st.pointer+c.field(width-listIndent-len(cursorMark)))
}

// field is the reason as typed, its end within width with the cursor.
func (c *choiceStage) field(width int) string {
	text := form.Line(c.reason)
	if w, room := ansi.StringWidth(text), width-1; w > room {
		text = ansi.TruncateLeft(text, w-room+len(elided), elided)
	}
	return text + c.st.caret.Render(" ")
}

// elided stands for the start of a reason too long to show whole.
const elided = "..."

func (c *choiceStage) minRows(width int) int {
	if !c.typing {
		return c.list.minRows(width)
	}
	return len(c.view(width, 0))
}

func (c *choiceStage) problem() string { return c.err }

func (c *choiceStage) legend() string {
	if c.typing {
		return "type a reason · enter: confirm · shift+tab: back · esc: cancel"
	}
	return "up/down: choose · enter: confirm · esc: cancel"
}

// ruleStage asks stage "rule": the form's rule questions one at a time,
// each a list (a multi-select for the grants), then Save or Back. The exact
// rule is stated above the question as it changes.
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

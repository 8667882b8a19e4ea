package tui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/askperm/askperm/form"
)

// stage is one stage of the form inside askperm's frame: its questions and
// the keys that answer them. The screen passes it only the keys askperm
// documents for answering: the arrows, Home, End, PgUp, PgDn, Enter, Tab,
// Shift+Tab, Space, Backspace and text, none with Alt, none that came
// while typing went on, and none of a burst but Enter and text typed
// into the denial reason. Each stage acts on fewer: text only in the
// denial reason, Space only in the grants list, letters only as the
// stage's own keys; any other printable key is typing, which puts the
// stage back on its safe answer, and so is a jump onto an allow.
type stage interface {
	// key handles a key.
	key(p press) verdict
	// typed puts the stage back on its safe answer and says why: typing
	// went on.
	typed(why string)
	// typing reports whether text typed is the stage's (the denial
	// reason has the focus).
	typing() bool
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

	onSave    bool      // Save rule of an allow has the focus
	saveSince time.Time // since when

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

// Letters of stage rule: Save rule and « Back.
const (
	saveKey = 's'
	backKey = 'b'
)

func (r *ruleStage) key(p press) verdict {
	r.err = ""
	l := r.lists[r.focus]
	last, before := len(r.qs), l.cursor
	switch k := p.KeyMsg; {
	case k.Type == tea.KeyUp || k.Type == tea.KeyDown:
		l.move(arrow(k))
	case k.Type == tea.KeyHome:
		l.move(-len(l.labels))
	case k.Type == tea.KeyEnd:
		l.move(len(l.labels))
	case k.Type == tea.KeyPgUp:
		l.move(-l.page())
	case k.Type == tea.KeyPgDown:
		l.move(l.page())
	case k.Type == tea.KeySpace && l.multi:
		l.toggle()
		r.choose()
	case k.Type == tea.KeyEnter:
		if r.focus == last && r.savesAllow() && p.soon(r.saveSince) {
			r.err = "Enter ignored: wait a moment after choosing Save rule"
			return keyIgnored
		}
		if r.next(true) {
			return keyDone
		}
	case k.Type == tea.KeyTab:
		r.next(false)
	case k.Type == tea.KeyShiftTab:
		r.focus = max(0, r.focus-1)
	case letter(k) == saveKey, letter(k) == backKey: // calm: the screen saw to it
		r.focus = last
		r.lists[last].cursor = 0
		if letter(k) == backKey {
			r.lists[last].cursor = 1
		}
	case printable(k):
		r.typed(typingIgnored)
		return keyIgnored
	}
	if l == r.lists[r.focus] && !l.multi && l.cursor != before {
		r.choose()
	}
	return r.watchSave(p)
}

// savesAllow reports whether Save rule is under the cursor of an allow's
// rule.
func (r *ruleStage) savesAllow() bool { return r.a.Choice.IsAllow() && !r.back() }

// watchSave notes when a key put Save rule of an allow under the focus.
// Only a single calm move may: a jump there (Home, PgUp) or an Enter of
// a burst is typing, which chooses « Back.
func (r *ruleStage) watchSave(p press) verdict {
	on := r.focus == len(r.qs) && r.savesAllow()
	switch {
	case on && jump(p.KeyMsg):
		r.typed(jumpIgnored)
		return keyIgnored
	case on && !r.onSave && !p.calm:
		r.typed(burstIgnored)
		return keyIgnored
	case on && !r.onSave:
		r.saveSince = p.at
	}
	r.onSave = on
	return keyActed
}

// typed chooses « Back, saying why: typing went on.
func (r *ruleStage) typed(why string) {
	r.lists[len(r.qs)].cursor = 1
	r.onSave = false
	r.err = why + "; « Back is chosen"
}

func (r *ruleStage) typing() bool { return false }

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
	keys := []string{"up/down home/end pgup/pgdn, one key at a time: choose"}
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
	return strings.Join(append(keys, "s: Save rule", "b: « Back", "v: words in full", "esc: cancel"), " · ")
}

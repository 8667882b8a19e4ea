package dialog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// yad shows the request in a --text-info viewer with a button per choice,
// the denial reason in an --entry, and stage "rule" in one --form: the
// rule in a read-only text field, then a checkbox or a combo per question.
type yad struct{ d *walk }

// Button ids askperm gives yad. Only a deny has id 0, which is also what
// Enter and Ctrl+Enter give; every allow has its own. yad prints a form's
// values only for even ids, which Back and Save rule need.
const (
	yadAllowOnce    = 10
	yadAllowSession = 12
	yadAllowAlways  = 14
	yadDenyAlways   = 16
	yadBack         = 20
	yadSave         = 22
	yadUpdate       = 24
)

// yadUpdateLabel is the rule form's button that shows the rule its
// fields now make, saving nothing.
const yadUpdateLabel = "Show rule"

var yadChoiceIDs = map[form.Choice]int{
	form.DenyOnce:     0,
	form.DenyAlways:   yadDenyAlways,
	form.AllowAlways:  yadAllowAlways,
	form.AllowOnce:    yadAllowOnce,
	form.AllowSession: yadAllowSession,
}

// yad's own exit statuses that mean the person dismissed it.
const (
	yadExitCancel = 1   // its Cancel button; askperm offers none, so the window went away
	yadExitEscape = 252 // Escape, or the window closed
)

// yadSep separates a form's output values and a combo's items: a control
// character, which rendered text never holds.
const yadSep = "\x1f"

// args are the options of a yad dialog: kind, the fixed ones, more, and
// the timeout at askperm's deadline with its indicator.
func (y yad) args(ctx context.Context, kind string, more ...string) []string {
	args := dialogArgs(kind, append([]string{"--center"}, more...)...)
	return append(args, y.d.timeoutArgs(ctx)...)
}

func yadButtonArg(label string, id int) string { return fmt.Sprintf("--button=%s:%d", label, id) }

// yadLine is s as one line of a form's values: yad applies g_strcompress
// to text fields and combo items, so a backslash is doubled and a newline
// written as the escape that makes it one again.
func yadLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "\n", `\n`)
}

// yadButton returns the id of the button that closed a yad dialog: 0 or
// one of ids.
func yadButton(e dialogExit, ids ...int) (int, error) {
	switch {
	case e.code == 0 || slices.Contains(ids, e.code):
		return e.code, nil
	case e.code == yadExitEscape, e.code == yadExitCancel:
		return 0, fmt.Errorf("yad closed without an answer (status %d): %w", e.code, prompt.ErrCancelled)
	default: // 70 (its own --timeout) is handled by run
		return 0, e.unexpected("yad")
	}
}

func (y yad) view(ctx context.Context, text string, choices []form.Choice) (form.Choice, dialogExit, error) {
	args := y.args(ctx, "--text-info", dialogDoc, dialogHeight, "--text=Read the request below, then choose.")
	ids := make([]int, len(choices))
	for i, c := range choices {
		ids[i] = yadChoiceIDs[c]
		args = append(args, yadButtonArg(form.ChoiceLabel(c), ids[i]))
	}
	e, err := y.d.run(ctx, input{text: text}, args...)
	if err != nil {
		return "", e, err
	}
	id, err := yadButton(e, ids...)
	if err != nil {
		return "", e, err
	}
	return choices[slices.Index(ids, id)], e, nil
}

func (y yad) reason(ctx context.Context, c form.Choice, before string) (string, error) {
	e, err := y.d.run(ctx, input{}, y.args(ctx, "--entry",
		"--text="+dialogReasonText, "--entry-label=Reason", "--entry-text="+before,
		yadButtonArg(form.ChoiceLabel(c), 0))...)
	if err != nil {
		return "", err
	}
	if _, err := yadButton(e); err != nil {
		return "", err
	}
	return dialogLine("yad", e.stdout)
}

// AskRule shows the rule form until Save rule is chosen on the very rule
// its text states: Show rule shows the form again with the rule its
// fields make; Save rule of a rule the form refuses (no grant) shows it
// again saying why; Save rule of a rule that its fields changed shows it
// again with the new rule, so the person saves only what they read.
func (y yad) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	note := ""
	for {
		b, id, e, err := y.ruleForm(ctx, f, *a, note)
		switch {
		case err != nil:
			return false, err
		case id == 0:
			a.Choice = form.DenyOnce
			return false, nil
		case id == yadBack:
			*a = b
			return true, nil
		}
		changed := !dialogSameRule(*a, b)
		*a = b
		switch err := f.CheckRule(b); {
		case id == yadUpdate:
			note = ""
		case err != nil:
			note = "Not saved: " + form.Line(err.Error()) + "."
		case changed:
			note = "Not saved: the rule changed. Check it, then choose Save rule again."
		default:
			if note = y.d.saveNote(e, f, b); note == "" {
				return false, nil
			}
		}
	}
}

// yadRuleMore follows the rule in the form's text field: every option of
// every question in full, by the labels of askperm's own that the fields
// carry ("Grant 1", "Scope option 2"), each at the margin.
func yadRuleMore(qs []form.Question) string {
	var text strings.Builder
	for _, q := range qs {
		item := q.Item
		if !q.Multi {
			fmt.Fprintf(&text, "%s: %s\n", q.Name, q.Title)
			item = q.Name + " option"
		}
		for i, o := range q.Options {
			fmt.Fprintf(&text, "%s %d: %s\n", item, i+1, o.Label)
		}
	}
	return text.String()
}

// yadFieldLabel is the label of the field of question q (of option i of
// a question that takes several answers), in askperm's words: what the
// field sets, and the name the rule text lists its options by.
func yadFieldLabel(q form.Question, i int) string {
	switch {
	case q.Multi:
		return fmt.Sprintf("Give %s %d (%s)", strings.ToLower(q.Item), i+1, q.Name)
	case strings.HasPrefix(q.Name, "Scope"):
		return q.Name + ": what the rule covers"
	case q.Name == "Workdir":
		return "Workdir: where the rule holds"
	case q.Name == "Lifetime":
		return "Lifetime: how long the rule holds"
	}
	return q.Name
}

// ruleForm shows the rule form for a and returns the answer it holds when
// closed by Back or Save rule, the button's id, and how it ended. The
// first field shows the rule and every option in full (yadRuleText); then
// a question that takes several answers is a checkbox per option, any
// other a combo whose items are cut to one line: a combo item of many
// lines made the window taller than the screen, and a thousand of them
// kept yad busy for half a minute. Every value goes on stdin, one line per
// field, and one more that cycles to the rule (--cycle-read) and disables
// it: it can be read, not edited. Each checkbox follows a read-only field
// that names its option, which Tab passes over. The focus starts on the
// first checkbox (field 3) when there is one; yad cannot give it to a
// combo, so then it starts on the rule (field 2 is the first combo, a Tab
// further).
func (y yad) ruleForm(ctx context.Context, f *form.Form, a form.Answer, note string) (form.Answer, int, dialogExit, error) {
	qs := f.RuleQuestions(a)
	fields := []string{"--field=Rule:TXT"}
	values := []string{yadLine(dialogWrap(dialogRuleText(ctx, f, a, note, yadRuleMore(qs))))}
	for _, q := range qs {
		if q.Multi {
			// Each checkbox follows a read-only field naming its option
			// (a grant): request text goes in values, never in a label.
			chosen := q.Chosen(a)
			for i, o := range q.Options {
				fields = append(fields, fmt.Sprintf("--field=%s %d:RO", q.Item, i+1), "--field="+yadFieldLabel(q, i)+":CHK")
				values = append(values, yadLine(ansi.Truncate(o.Label, dialogCells, "…")),
					strings.ToUpper(strconv.FormatBool(slices.Contains(chosen, o.Value))))
			}
			continue
		}
		fields = append(fields, "--field="+yadFieldLabel(q, 0)+":CB")
		items := make([]string, len(q.Options))
		for i, o := range q.Options {
			items[i] = yadLine(ansi.Truncate(dialogItem(i, o.Label), dialogCells, "…"))
			if i == dialogCurrent(q, a) {
				items[i] = "^" + items[i] // the preselected item
			}
		}
		values = append(values, strings.Join(items, yadSep))
	}
	values = append(values, "@disabled@")
	text := "--text=Check the rule, choose its parts below, then choose Show rule to read the rule they make, or Save rule."
	if note != "" {
		text = "--text=Not saved: the rule's first lines say why."
	}
	focus := "--focus-field=2"
	if len(qs) > 0 && qs[0].Multi {
		focus = "--focus-field=3" // the first checkbox, past the field naming it
	}
	args := y.args(ctx, "--form", dialogHeight, "--separator="+yadSep, "--item-separator="+yadSep, "--num-output",
		"--cycle-read", focus, text, yadButtonArg(form.BackLabel, yadBack), yadButtonArg(yadUpdateLabel, yadUpdate),
		yadButtonArg(form.SaveLabel, yadSave), yadButtonArg(form.ChoiceLabel(form.DenyOnce), 0))
	e, err := y.d.run(ctx, input{text: strings.Join(values, "\n") + "\n", stdin: true}, append(args, fields...)...)
	if err != nil {
		return a, 0, e, err
	}
	id, err := yadButton(e, yadBack, yadSave, yadUpdate)
	if err != nil || id == 0 {
		return a, id, e, err
	}
	b, err := yadParseRule(e.stdout, qs, a)
	return b, id, e, err
}

// yadParseRule reads the rule form's output into a copy of a: one value
// per field (the rule's text, then TRUE or FALSE per checkbox, each
// combo's 1-based index), each followed by yadSep, then a newline.
func yadParseRule(out string, qs []form.Question, a form.Answer) (form.Answer, error) {
	bad := fmt.Errorf("yad printed an unexpected rule form: %s", lastLine(out))
	vals := strings.Split(out, yadSep)
	n := 1
	for _, q := range qs {
		if q.Multi {
			n += 2 * len(q.Options) // a read-only field and a checkbox each
		} else {
			n++
		}
	}
	if len(vals) != n+1 || vals[n] != "\n" {
		return a, bad
	}
	vals = vals[1:] // the rule's text
	for _, q := range qs {
		if q.Multi {
			var chosen []string
			for i, o := range q.Options {
				switch vals[2*i+1] {
				case "TRUE":
					chosen = append(chosen, o.Value)
				case "FALSE":
				default:
					return a, bad
				}
			}
			q.Choose(&a, chosen)
			vals = vals[2*len(q.Options):]
			continue
		}
		k, err := strconv.Atoi(vals[0])
		if err != nil || k < 1 || k > len(q.Options) {
			return a, bad
		}
		q.Choose(&a, []string{q.Options[k-1].Value})
		vals = vals[1:]
	}
	return a, nil
}

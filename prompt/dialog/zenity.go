package dialog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// zenity shows the request in a --text-info viewer whose OK button is Deny
// once and whose extra buttons are the other choices, and the denial
// reason in an --entry. Stage "rule" is a viewer of the rule to save (Deny
// once, Back, Change…, Save rule); Change… asks each part of the rule in a
// --list, its rows read from stdin, then the rule is shown again. zenity's
// --forms cannot preselect a combo, and its text neither wraps nor honours
// --no-markup.
type zenity struct{ d *walk }

// zenityExitCancel is zenity's status for Cancel, Escape, the window
// closed, and an extra button (named on stdout).
const zenityExitCancel = 1

// zenityButton returns the extra button that closed a zenity dialog, one
// of extras, or "" for OK.
func zenityButton(e dialogExit, extras ...string) (string, error) {
	switch e.code {
	case 0:
		return "", nil
	case zenityExitCancel:
		if e.stdout == "" {
			return "", fmt.Errorf("zenity closed without an answer: %w", prompt.ErrCancelled)
		}
		label, err := dialogLine("zenity", e.stdout)
		if err != nil || !slices.Contains(extras, label) {
			return "", fmt.Errorf("zenity printed an unknown button: %s", form.Line(e.stdout))
		}
		return label, nil
	default: // 5: its own --timeout, which askperm never sets; 255: it failed
		return "", e.unexpected("zenity")
	}
}

// show shows text in a viewer whose OK button (and Enter) is Deny once,
// with extra buttons; it returns the extra chosen, or "" for Deny once,
// and how the viewer ended.
func (z zenity) show(ctx context.Context, text string, extras ...string) (string, dialogExit, error) {
	args := dialogArgs("--text-info", dialogDoc, dialogHeight, "--font=Monospace 10",
		"--ok-label="+form.ChoiceLabel(form.DenyOnce))
	for _, l := range extras {
		args = append(args, "--extra-button="+l)
	}
	e, err := z.d.run(ctx, input{text: text}, args...)
	if err != nil {
		return "", e, err
	}
	b, err := zenityButton(e, extras...)
	return b, e, err
}

func (z zenity) view(ctx context.Context, text string, choices []form.Choice) (form.Choice, dialogExit, error) {
	var others []form.Choice
	var labels []string
	for _, c := range choices {
		if c != form.DenyOnce {
			others = append(others, c)
			labels = append(labels, form.ChoiceLabel(c))
		}
	}
	b, e, err := z.show(ctx, text, labels...)
	switch {
	case err != nil:
		return "", e, err
	case b == "":
		return form.DenyOnce, e, nil
	}
	return others[slices.Index(labels, b)], e, nil
}

func (z zenity) reason(ctx context.Context, c form.Choice, before string) (string, error) {
	e, err := z.d.run(ctx, input{}, dialogArgs("--entry",
		"--text="+dialogReasonText, "--entry-text="+before, "--ok-label="+form.ChoiceLabel(c))...)
	if err != nil {
		return "", err
	}
	if _, err := zenityButton(e); err != nil {
		return "", err
	}
	return dialogLine("zenity", e.stdout)
}

func (z zenity) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	note := ""
	for {
		b, e, err := z.show(ctx, dialogWrap(note+zenityRuleText(f, *a)), form.BackLabel, dialogChange, form.SaveLabel)
		switch {
		case err != nil:
			return false, err
		case b == "":
			a.Choice = form.DenyOnce
			return false, nil
		case b == form.BackLabel:
			return true, nil
		case b == dialogChange:
			if err := z.change(ctx, f, a); err != nil {
				return false, err
			}
			note = ""
		default:
			if note = z.d.saveNote(e, f, *a); note == "" {
				return false, nil
			}
			note += "\n\n"
		}
	}
}

// zenityRuleText is the rule viewer's text: the rule, and the questions
// Change… asks, by the names its lists give them.
func zenityRuleText(f *form.Form, a form.Answer) string {
	var text strings.Builder
	text.WriteString(f.Message(form.StageRule, a))
	text.WriteString("\nChoose Change… to change the rule, Save rule to save it. Change… asks in turn:\n")
	for _, q := range f.RuleQuestions(a) {
		fmt.Fprintf(&text, "%s: %s\n", q.Name, q.Title)
	}
	return text.String()
}

// change asks each question of the rule in turn: a checklist for one
// that takes several answers, a list for the others. The rows, which hold
// request text, go on stdin, one cell per line.
func (z zenity) change(ctx context.Context, f *form.Form, a *form.Answer) error {
	for _, q := range f.RuleQuestions(*a) {
		var args, cells []string
		if q.Multi {
			args = dialogArgs("--list", "--checklist", dialogHeight,
				"--text="+q.Name+": check what the rule gives. Uncheck those to refuse.",
				"--column=Give", "--column=ID", "--column="+q.Item, "--hide-column=2", "--print-column=2")
			chosen := q.Chosen(*a)
			for i, o := range q.Options {
				cells = append(cells, strings.ToUpper(strconv.FormatBool(slices.Contains(chosen, o.Value))),
					strconv.Itoa(i+1), dialogItem(i, o.Label))
			}
		} else {
			args = dialogArgs("--list", dialogHeight,
				"--text="+q.Name+": choose what the rule covers. Choosing nothing keeps the current choice.",
				"--column=ID", "--column=Now", "--column="+q.Name, "--hide-column=1", "--print-column=1")
			cur := dialogCurrent(q, *a)
			for i, o := range q.Options {
				mark := ""
				if i == cur {
					mark = "✓"
				}
				cells = append(cells, strconv.Itoa(i+1), mark, dialogItem(i, o.Label))
			}
		}
		picked, err := z.list(ctx, args, cells, len(q.Options))
		if err != nil {
			return err
		}
		if q.Multi || len(picked) == 1 {
			values := make([]string, len(picked))
			for i, k := range picked {
				values[i] = q.Options[k].Value
			}
			q.Choose(a, values)
		}
	}
	return nil
}

// list shows a list of n rows, its cells read from stdin, whose printed
// column holds the row numbers 1 to n, and returns the 0-based indexes
// printed (separated by "|").
func (z zenity) list(ctx context.Context, args, cells []string, n int) ([]int, error) {
	e, err := z.d.run(ctx, input{text: strings.Join(cells, "\n") + "\n", stdin: true}, args...)
	if err != nil {
		return nil, err
	}
	if _, err := zenityButton(e); err != nil {
		return nil, err
	}
	if e.stdout == "" || e.stdout == "\n" { // nothing chosen
		return nil, nil
	}
	line, err := dialogLine("zenity", e.stdout)
	if err != nil {
		return nil, err
	}
	var picked []int
	for _, w := range strings.Split(line, "|") {
		k, err := strconv.Atoi(w)
		if err != nil || k < 1 || k > n {
			return nil, fmt.Errorf("zenity printed an unexpected list answer: %s", form.Line(line))
		}
		picked = append(picked, k-1)
	}
	return picked, nil
}

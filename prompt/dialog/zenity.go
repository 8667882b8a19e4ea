package dialog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/askperm/askperm/form"
)

// zenity shows the request in a --text-info viewer and the denial reason
// in an --entry. Stage "rule" is a viewer of the rule to save (Deny once,
// « Back, Change…, Save rule); Change… asks each part of the rule in a
// --list, its rows read from stdin, then the rule is shown again.
// zenity's --forms cannot preselect a combo, and its text neither wraps
// nor honours --no-markup.
//
// A viewer has a Cancel button that no option removes (an empty label
// leaves an empty button): it is named Deny once, and is Deny once, as are
// Escape and closing the window. Return and keypad Enter press its OK
// anywhere in the window but on an extra button, on Cancel too, and
// Ctrl+Return everywhere (zenity 3.44, measured): so OK decides nothing.
// It is Read again in the request viewer (the request is shown again) and
// « Back in the rule viewer; every choice but Deny once is an extra
// button, in the order of the choices: Deny once, Read again, Deny
// always…, the allows. A Change… list's OK (Return on a row) only picks
// rows for the rule shown next; Return on its Cancel is Cancel (« Rule).
type zenity struct{ d *walk }

// zenityExitCancel is zenity's status for Cancel, Escape, the window
// closed, and an extra button (named on stdout).
const zenityExitCancel = 1

// What zenityButton returns for OK and for Cancel (Escape, the window
// closed): no label holds a NUL.
const (
	zenityOK     = "\x00ok"
	zenityCancel = "\x00cancel"
)

// Labels of zenity's buttons, askperm's own words.
const (
	// zenityReadAgain is OK in the request viewer: shows it again.
	zenityReadAgain = "Read again"
	// zenityNoReason is Cancel in the reason entry: deny without a reason.
	zenityNoReason = "No reason"
	// zenityToRule is Cancel in a Change… list: back to the rule, unchanged.
	zenityToRule = "« Rule"
)

// zenityButton returns the extra button that closed a zenity dialog, one
// of extras, or zenityOK or zenityCancel.
func zenityButton(e dialogExit, extras ...string) (string, error) {
	switch e.code {
	case 0:
		return zenityOK, nil
	case zenityExitCancel:
		if e.stdout == "" {
			return zenityCancel, nil
		}
		label, err := dialogLine("zenity", e.stdout)
		if err != nil || !slices.Contains(extras, label) {
			return "", fmt.Errorf("zenity printed an unknown button: %s", form.Line(e.stdout))
		}
		return label, nil
	default: // 255: it failed
		return "", e.unexpected("zenity")
	}
}

// Sizes of zenity's viewers, in pixels: a cell of the monospace font and
// a line of it (measured under Xvfb: "Monospace 10" lines are 23 px apart
// in the text view, not the font's 17 px, which hid a rule's last lines),
// what a window adds around its text, and the bounds a rule viewer is
// sized within.
const (
	zenityCellPx, zenityLinePx = 8, 23
	zenityFrameW, zenityFrameH = 60, 110
	zenityMinW, zenityMinH     = 480, 240
	zenityMaxW, zenityMaxH     = 1024, 720
)

// zenitySize is the --width and --height of a viewer of text: its widest
// line and its lines, within zenityMin* and zenityMax* (a window fits a
// 1280×800 screen with its title and a panel).
func zenitySize(text string) (string, string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	cells := 0
	for _, l := range lines {
		cells = max(cells, ansi.StringWidth(l))
	}
	w := min(max(cells*zenityCellPx+zenityFrameW, zenityMinW), zenityMaxW)
	h := min(max(len(lines)*zenityLinePx+zenityFrameH, zenityMinH), zenityMaxH)
	return fmt.Sprintf("--width=%d", w), fmt.Sprintf("--height=%d", h)
}

// show shows text in a viewer of the given size whose Cancel is Deny
// once, with OK named ok and extra buttons; it returns the extra chosen,
// zenityOK or zenityCancel, and how the viewer ended.
func (z zenity) show(ctx context.Context, text, width, height, ok string, extras ...string) (string, dialogExit, error) {
	args := []string{"--text-info", dialogTitle, "--no-markup", width, height, dialogDoc, "--font=Monospace 10",
		"--cancel-label=" + form.ChoiceLabel(form.DenyOnce), "--ok-label=" + ok}
	for _, l := range extras {
		args = append(args, "--extra-button="+l)
	}
	e, err := z.d.run(ctx, input{text: text}, append(args, z.d.timeoutArgs(ctx)...)...)
	if err != nil {
		return "", e, err
	}
	b, err := zenityButton(e, extras...)
	return b, e, err
}

// view shows the request: Cancel is Deny once, OK (Return) Read again,
// and every other choice, Deny always… among them, an extra button.
func (z zenity) view(ctx context.Context, text string, choices []form.Choice) (form.Choice, dialogExit, error) {
	var others []form.Choice
	var labels []string
	for _, c := range choices {
		if c != form.DenyOnce {
			others = append(others, c)
			labels = append(labels, form.ChoiceLabel(c))
		}
	}
	b, e, err := z.show(ctx, text, dialogWidth, dialogHeight, zenityReadAgain, labels...)
	switch {
	case err != nil:
		return "", e, err
	case b == zenityCancel:
		return form.DenyOnce, e, nil
	case b == zenityOK:
		return "", e, nil
	}
	return others[slices.Index(labels, b)], e, nil
}

func (z zenity) reason(ctx context.Context, c form.Choice, before string) (string, error) {
	text := dialogReasonText
	if dl := deadlineLine(ctx, time.Now()); dl != "" {
		text += "\n" + dl
	}
	args := dialogArgs("--entry", "--text="+text, "--entry-text="+before,
		"--ok-label="+form.ChoiceLabel(c), "--cancel-label="+zenityNoReason)
	e, err := z.d.run(ctx, input{}, append(args, z.d.timeoutArgs(ctx)...)...)
	if err != nil {
		return "", err
	}
	switch b, err := zenityButton(e); {
	case err != nil:
		return "", err
	case b == zenityCancel:
		return "", nil
	}
	return dialogLine("zenity", e.stdout)
}

// AskRule shows the rule, sized to its text, until it is saved, left by
// « Back (OK, also Return) or given up by Deny once (also Escape).
func (z zenity) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	note := ""
	for {
		text := dialogWrap(dialogRuleText(ctx, f, *a, note, zenityRuleMore(f, *a)))
		width, height := zenitySize(text)
		b, e, err := z.show(ctx, text, width, height, form.BackLabel, dialogChange, form.SaveLabel)
		switch {
		case err != nil:
			return false, err
		case b == zenityCancel:
			a.Choice = form.DenyOnce
			return false, nil
		case b == zenityOK:
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
		}
	}
}

// zenityRuleMore follows the rule in the rule viewer: the questions
// Change… asks, by the names its lists give them.
func zenityRuleMore(f *form.Form, a form.Answer) string {
	var text strings.Builder
	text.WriteString("\nChoose Change… to change the rule, Save rule to save it. Change… asks in turn:\n")
	for _, q := range f.RuleQuestions(a) {
		fmt.Fprintf(&text, "%s: %s\n", q.Name, q.Title)
	}
	return text.String()
}

// change asks each question of the rule in turn: a checklist for one
// that takes several answers, a list for the others. The rows, which hold
// request text, go on stdin, one cell per line. Cancel (named « Rule),
// Escape or closing a list ends the round with the rule as it was before
// Change….
func (z zenity) change(ctx context.Context, f *form.Form, a *form.Answer) error {
	before := *a // Choose never writes through: a's old values stay intact
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
		picked, back, err := z.list(ctx, args, cells, len(q.Options))
		if err != nil {
			return err
		}
		if back {
			*a = before
			return nil
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
// printed (separated by "|"), or back when it was left by its Cancel
// (« Rule), Escape or closing it. Its text ends with the deadline.
func (z zenity) list(ctx context.Context, args, cells []string, n int) (picked []int, back bool, err error) {
	if dl := deadlineLine(ctx, time.Now()); dl != "" {
		for i, a := range args {
			if strings.HasPrefix(a, "--text=") {
				args[i] = a + "\n" + dl
			}
		}
	}
	args = append(args, "--cancel-label="+zenityToRule)
	e, err := z.d.run(ctx, input{text: strings.Join(cells, "\n") + "\n", stdin: true}, append(args, z.d.timeoutArgs(ctx)...)...)
	if err != nil {
		return nil, false, err
	}
	switch b, err := zenityButton(e); {
	case err != nil:
		return nil, false, err
	case b == zenityCancel:
		return nil, true, nil
	}
	if e.stdout == "" || e.stdout == "\n" { // nothing chosen
		return nil, false, nil
	}
	line, err := dialogLine("zenity", e.stdout)
	if err != nil {
		return nil, false, err
	}

	for _, w := range strings.Split(line, "|") {
		k, err := strconv.Atoi(w)
		if err != nil || k < 1 || k > n {
			return nil, false, fmt.Errorf("zenity printed an unexpected list answer: %s", form.Line(line))
		}
		picked = append(picked, k-1)
	}
	return picked, false, nil
}

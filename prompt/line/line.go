// Package line is the line prompt: plain lines of text, no escape
// sequences, no redraws, so that it works with TERM=dumb and a screen reader reads each
// line once. It never changes the terminal's modes: the terminal stays in
// canonical mode (the kernel edits the line), so even SIGKILL leaves
// nothing to restore. The one control character it writes but newline is
// the bell (BEL) when configured, as the prompt opens.
//
// Keys never change meaning between questions:
//
//	y  allow once               n  deny once (also Enter alone)
//	s  allow for this session   d  deny always…
//	a  allow always…            m  edit the denial reason
//	?  show the request again   b  back (rule stage)
//	v  view the details in full (offered when one was cut)
//
// Only the offered choices are listed and accepted, and only a line that is
// exactly one key, or the word "yes" for y and "no" for n: "yes please" or
// "git status" is no answer. Stage "rule" asks numbered questions (Enter
// alone keeps the marked answer) and saves the rule only when "save" is
// typed; n (or "no") there denies once.
//
// The prompt lays out every line at the terminal's width (line_layout.go),
// opens with the question in one line (form's Headline), marks each text
// the agent says of its request as the agent's words, and shows the facts
// again right above every "Answer" (line_view.go). Every question says how
// long it has left before the deadline. A line counts only when it arrived
// once the question was ready: fully written, then the arming delay, with
// no line discarded within the delay before it (line_input.go). When the
// prompt ends, one line says how (prompt.ClosingLine).
package line

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/tty"
	"github.com/askperm/askperm/prompt"
)

// maxInvalid is how many invalid answers in a row a question takes: then
// the choice is deny once, and a rule question goes back to the choice.
const maxInvalid = 3

// choiceKeys are the fixed keys of the choices.
var choiceKeys = map[form.Choice]string{
	form.AllowOnce:    "y",
	form.AllowSession: "s",
	form.AllowAlways:  "a",
	form.DenyOnce:     "n",
	form.DenyAlways:   "d",
}

// Frontend is the line prompt.
type Frontend struct{ o prompt.Options }

// New returns the line prompt on the terminal o names.
func New(o prompt.Options) Frontend { return Frontend{o} }

// Name is "line".
func (Frontend) Name() decision.Frontend { return decision.FrontendLine }

// Ask walks the form in plain lines on the terminal.
func (l Frontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	term, err := tty.Open(l.o.TTY)
	if err != nil {
		return form.Answer{}, fmt.Errorf("%w: %w", err, prompt.ErrUnavailable)
	}
	term, err = pollable(term)
	if err != nil {
		return form.Answer{}, fmt.Errorf("terminal: %w: %w", err, prompt.ErrUnavailable)
	}
	defer term.Close() // also ends a read still waiting
	// Ctrl-Z must not suspend an open prompt, and a read or write from the
	// background must fail (and cancel) rather than stop the process.
	defer tty.HoldJobControl()()
	if n := columns(term); n < minColumns {
		return form.Answer{}, fmt.Errorf("%w: %w", errNarrow(n), prompt.ErrUnavailable)
	}
	p := newLinePrompt(term, term, l.o.Arming())
	p.bell = l.o.Bell
	p.cols = func() int { return columns(term) }
	p.flush = func() error { return tty.Flush(term) }
	p.in.pending = func() bool { return linesWaiting(term) }
	return p.run(ctx, f)
}

// pollable returns a duplicate of tty that the runtime poller serves, so
// that closing it ends a pending read. O_NONBLOCK lands on the open file
// description tty.Open created, which nobody else holds. os.NewFile keeps a
// descriptor it got non-blocking so even through Fd, which tty.Flush calls.
func pollable(tty *os.File) (*os.File, error) {
	defer tty.Close()
	fd, err := unix.FcntlInt(tty.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), tty.Name()), nil
}

// linesWaiting reports whether complete lines wait in tty's input queue
// (in canonical mode TIOCINQ counts only those). An error counts as
// waiting, which discards the line just read.
func linesWaiting(tty *os.File) bool {
	rc, err := tty.SyscallConn()
	if err != nil {
		return true
	}
	n, ioErr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		return true
	}
	return ioErr != nil || n > 0
}

// linePrompt is the line prompt's dialogue over any reader and writer; it
// implements form.Stager.
type linePrompt struct {
	in    *lineInput
	out   io.Writer
	err   error // the first write or layout error: the prompt cannot go on
	gone  bool  // a write failed: the terminal is gone
	arm   time.Duration
	bell  bool         // ring the bell as the prompt opens
	cols  func() int   // the terminal's width now
	flush func() error // discards typeahead; nil when there is none
}

func newLinePrompt(r io.Reader, w io.Writer, arm time.Duration) *linePrompt {
	return &linePrompt{in: &lineInput{r: r}, out: w, arm: arm, cols: func() int { return defaultColumns }}
}

// question writes a question and what goes right above it; left is
// " (4m52s left)" before the deadline, or "" without one, and goes right
// before the question's closing ": ".
type question func(pg *page, left string)

// plain is a question of askperm's words alone; q lacks the closing ": ".
func plain(q string) question { return func(pg *page, left string) { pg.own(q + left + ": ") } }

// run walks the form and ends with one line saying how it ended
// (prompt.ClosingLine), whatever ended it.
func (p *linePrompt) run(ctx context.Context, f *form.Form) (form.Answer, error) {
	if p.bell {
		p.ring()
	}
	f.Opened(decision.FrontendLine)
	a, err := form.Walk(ctx, f, p)
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		// The cursor may stand after a question: start a line of its own.
		p.closing("\n" + prompt.ClosingLine(f, form.Answer{}, err))
		return form.Answer{}, err
	}
	p.closing(prompt.ClosingLine(f, a, nil))
	return a, nil
}

// ring writes the bell, the one control character but newline the line
// prompt writes.
func (p *linePrompt) ring() {
	if _, err := io.WriteString(p.out, "\a"); err != nil && p.err == nil {
		p.err, p.gone = err, true
	}
}

// closing writes the closing line: also after a layout error, at the
// terminal's width however narrow (no other line follows it), unless the
// terminal is gone or too narrow for a hanging indent.
func (p *linePrompt) closing(s string) {
	n := p.cols()
	if p.gone || n <= 2*hangIndent {
		return
	}
	pg := &page{width: n}
	pg.own(s)
	if _, err := io.WriteString(p.out, pg.String()); err != nil {
		p.gone = true
	}
}

// AskChoice shows the request and the key legend and reads a key. The
// facts stand right above every showing of the question, however long the
// agent's words above them are.
func (p *linePrompt) AskChoice(ctx context.Context, f *form.Form, a *form.Answer) error {
	cut := cutDetails(f)
	full := fullWhat(f, cut) // what v shows; "" for nothing
	p.showRequest(f, a, full)
	var keys []string
	for _, c := range f.Choices() {
		keys = append(keys, choiceKeys[c])
	}
	more := "m/"
	if full != "" {
		more += "v/"
	}
	q := func(pg *page, left string) {
		pg.own("\n" + factsHeading + "\n")
		pg.facts(f)
		pg.own("Answer [" + strings.Join(keys, "/") + "/" + more + "?]" + left + ": ")
	}
	// Each showing of other text first (the reason's question, the
	// request, the details) asks the question anew: armed anew.
	ask := p.ask(q)
	for invalid := 0; ; {
		line, err := p.readLine(ctx, ask)
		if err != nil {
			return err
		}
		line = keyWord(line)
		if i := slices.Index(keys, line); i >= 0 {
			a.Choice = f.Choices()[i]
			return nil
		}
		switch {
		case line == "":
			a.Choice = form.DenyOnce
			return nil
		case line == "m":
			if err := p.editReason(ctx, f, a); err != nil {
				return err
			}
			ask = p.ask(q)
		case line == "?":
			p.showRequest(f, a, full)
			ask = p.ask(q)
		case line == "v" && full != "":
			p.showFull(f, cut)
			ask = p.ask(q)
		default:
			if invalid++; invalid == maxInvalid {
				p.say("askperm: no valid answer; denying once.\n")
				a.Choice = form.DenyOnce
				return nil
			}
			p.say("Type one of the keys listed, then Enter; Enter alone denies once.\n")
		}
	}
}

// keyWord is the key a line stands for: the line itself, lower case, or y
// for "yes" and n for "no".
func keyWord(line string) string {
	switch k := strings.ToLower(line); k {
	case "yes":
		return choiceKeys[form.AllowOnce]
	case "no":
		return choiceKeys[form.DenyOnce]
	default:
		return k
	}
}

// showRequest writes the request and the keys; full names what the
// request view left out, which v shows ("" for nothing: v is not
// offered).
func (p *linePrompt) showRequest(f *form.Form, a *form.Answer, full string) {
	pg := p.page()
	pg.own("\n")
	pg.request(f)
	pg.own("Keys (type one, then Enter):\n")
	for _, c := range f.Choices() {
		pg.own("  " + choiceKeys[c] + "  " + form.ChoiceLabel(c) + "\n")
	}
	pg.own("  m  Edit the denial reason\n")
	if full != "" {
		pg.own("  v  View " + full + " in full\n")
	}
	pg.own("  ?  Show the request again\nEnter alone: Deny once. The words yes and no count as y and n.\n")
	pg.field("Denial reason", form.Line(a.Message))
	p.write(pg)
}

// editReason reads the denial reason; the form's own check keeps it within
// the protocol's limits.
func (p *linePrompt) editReason(ctx context.Context, f *form.Form, a *form.Answer) error {
	line, err := p.readLine(ctx, p.ask(plain("Denial reason (Enter alone clears it)")))
	if err != nil {
		return err
	}
	if err := f.CheckChoice(form.Answer{Choice: form.DenyOnce, Message: line}); err != nil {
		p.say("Not kept: " + err.Error() + ".\n")
		return nil
	}
	a.Message = line
	pg := p.page()
	if line == "" {
		pg.own("Denial reason cleared.\n")
	}
	pg.field("Denial reason", form.Line(line))
	p.write(pg)
	return nil
}

// AskRule asks the rule's questions, then whether to save the rule.
func (p *linePrompt) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	p.say("\n" + form.ChoiceLabel(a.Choice) + ": the rule to save. Enter alone keeps the [x] answer; b goes back.\n")
	for _, q := range f.RuleQuestions(*a) {
		if back, err := p.askQuestion(ctx, q, a); back || err != nil {
			return back, err
		}
	}
	pg := p.page()
	pg.own("\n")
	pg.field("Rule", f.RuleSummary(*a))
	for _, l := range f.FixedScopes() {
		pg.field("Fixed", l)
	}
	p.write(pg)
	empty, deny := false, false
	back, err := p.question(ctx, plain("Save this rule? Type save, n to deny once, or b to go back (Enter alone: back)"), func(line string) string {
		switch {
		case line == "":
			empty = true
		case keyWord(line) == choiceKeys[form.DenyOnce]:
			deny = true
		case !strings.EqualFold(line, "save"):
			return "Type save to save the rule, n to deny once, or b to go back."
		}
		return ""
	})
	if deny && !back && err == nil {
		a.Choice = form.DenyOnce // form.Walk ends the form here
	}
	return back || empty, err
}

// askQuestion asks one rule question by number: several numbers for a
// question that takes several answers, one for the others.
func (p *linePrompt) askQuestion(ctx context.Context, q form.Question, a *form.Answer) (bool, error) {
	pg := p.page()
	title := q.Title
	if q.Multi {
		title += " (numbers separated by spaces)"
	}
	pg.own(title + ":\n")
	chosen := q.Chosen(*a)
	for i, o := range q.Options {
		mark := "[ ]"
		if slices.Contains(chosen, o.Value) {
			mark = "[x]"
		}
		pg.item(fmt.Sprintf("  %d. %s ", i+1, mark), o.Label)
	}
	p.write(pg)
	n := len(q.Options)
	return p.question(ctx, plain(fmt.Sprintf("%s [1-%d]", q.Name, n)), func(line string) string {
		if line == "" {
			return ""
		}
		words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' })
		var values []string
		for _, w := range words {
			k, err := strconv.Atoi(w)
			if err != nil || k < 1 || k > n || !q.Multi && len(words) > 1 {
				if q.Multi {
					return fmt.Sprintf("Type numbers from 1 to %d separated by spaces, Enter alone for the [x] ones, or b to go back.", n)
				}
				return fmt.Sprintf("Type one number from 1 to %d, Enter alone for the [x] one, or b to go back.", n)
			}
			values = append(values, q.Options[k-1].Value)
		}
		q.Choose(a, values)
		return ""
	})
}

// question asks q until accept takes the line (returns no problem), "b"
// goes back, or maxInvalid problems in a row go back too. Asked again
// after a problem, q stays the same question: it is not armed anew.
func (p *linePrompt) question(ctx context.Context, q question, accept func(line string) (problem string)) (back bool, err error) {
	ask := p.ask(q)
	for invalid := 0; ; {
		line, err := p.readLine(ctx, ask)
		if err != nil {
			return false, err
		}
		if strings.EqualFold(line, "b") {
			return true, nil
		}
		problem := accept(line)
		if problem == "" {
			return false, nil
		}
		if invalid++; invalid == maxInvalid {
			p.say("askperm: no valid answer; back to the choice.\n")
			return true, nil
		}
		p.say(problem + "\n")
	}
}

// page starts text laid out for the terminal's width now. A terminal
// narrowed below minColumns ends the prompt: no line could be laid out
// without the terminal wrapping it.
func (p *linePrompt) page() *page {
	n := p.cols()
	if n < minColumns && p.err == nil {
		p.err = errNarrow(n)
	}
	return &page{width: max(n, minColumns)}
}

// write sends a page to the terminal: nothing but newlines reaches it as a
// control character.
func (p *linePrompt) write(pg *page) {
	if p.err == nil {
		if _, err := io.WriteString(p.out, pg.String()); err != nil {
			p.err, p.gone = err, true
		}
	}
}

// say writes askperm's words.
func (p *linePrompt) say(s string) {
	pg := p.page()
	pg.own(s)
	p.write(pg)
}

// showFull writes every command of the command lines the facts cut
// short, then the details the request view cut short, whole.
func (p *linePrompt) showFull(f *form.Form, cut []cutDetail) {
	pg := p.page()
	pg.own("\n")
	if f.MostCommands() > form.MaxFactCommands {
		pg.commands(f)
	}
	pg.details(cut)
	p.write(pg)
}

// fullWhat names what the request view leaves out of f, which v shows:
// commands past form.MaxFactCommands, the details cut.
func fullWhat(f *form.Form, cut []cutDetail) string {
	switch commands := f.MostCommands() > form.MaxFactCommands; {
	case commands && len(cut) > 0:
		return "every command and the details"
	case commands:
		return "every command"
	case len(cut) > 0:
		return "the details"
	}
	return ""
}

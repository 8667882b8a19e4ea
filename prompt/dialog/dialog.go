// Package dialog is askperm's desktop dialogs: yad and zenity. Both walk
// the same stages; yad.go and zenity.go only say how each program shows
// them. Behaviour verified with yad 0.40.0 and zenity 3.44.0 (GTK 3.24)
// under Xvfb:
//
//   - No request text in argv: every local user reads argv (ps), and a
//     long argument fails to start the program (E2BIG). Request text, and
//     askperm's notes about it, travel through a pipe: a viewer
//     (--text-info) reads its text from descriptor 3 (dialogDoc), yad's
//     rule form its field values and zenity's lists their rows from stdin,
//     one per line. argv holds askperm's own words and numbers only:
//     options, button, field and column labels ("Grant 1", "Scope").
//   - Request text is shown without markup and without escapes: a viewer
//     shows its file as it is, zenity shows list rows read from stdin as
//     plain text, yad shows form values without markup and applies
//     g_strcompress, which yadLine undoes. yad's rule form shows the rule,
//     and every option in full, in a text field made read-only (a second
//     value, cycled to it, disables it), so that no edit there can pass
//     for a change of the rule; its combos show each option on one line,
//     cut with "…" where it does not fit.
//   - What a viewer or a form's text field shows is wrapped by dialogWrap
//     first, continued lines indented, so that the dialog does not wrap it
//     again and no wrapped tail of a value starts a line as if it were one
//     of askperm's labels. zenity's list rows are not wrapped: a list
//     scrolls sideways.
//   - Every option is one argv element ("--text=..."): GTK strips
//     "--display=..." and "--gtk-module=..." elements wherever they stand.
//     No positional value is passed.
//   - Enter never approves: 0 is what Enter and Ctrl+Enter give, and it
//     allows nothing: yad's Deny once, zenity's OK, which in its request
//     viewer decides nothing either (Read again); every other answer has
//     its own code or label. No label has an underscore, so no Alt key
//     presses a button.
//   - An allow counts only once the person could have read it: an allow
//     choice, or Save rule of an allow rule, that comes back sooner than
//     prompt.Options.ArmDelay after the window appeared is refused, and
//     the dialog shown again saying why (neither program can disable a
//     button for a while). When the window appeared cannot be seen from
//     here: the process starts 100-400 ms before it (measured), so that
//     is no measure. askperm counts from the moment the dialog had read
//     all of its input (the pipe drained), which a viewer does right
//     before it shows its window and a form or a list in its main loop
//     right after; the window was mapped within 50 ms of that (measured),
//     and dialogAppear (100 ms) is added to cover it. An answer from a
//     dialog that never read all of its input came too soon.
//   - The deadline is shown: every dialog gets --timeout, the time left
//     when it opens rounded up (yad also --timeout-indicator), and the
//     viewers, zenity's lists and reason entry state it in askperm's words
//     ("Answer by 14:02:31 (4 min 52 s left)"), right below the request's
//     question, which is always the first line of a viewer and of a rule.
//   - Dialogs run in "/": zenity 3.44 loads ./zenity.ui before its own.
//   - Under a locale that is not UTF-8 (LANG=C, or none) both programs
//     refuse non-ASCII argv ("…", "«") and exit at once; a dialog runs
//     with LC_ALL=C.UTF-8 then (dialogEnvironment).
//
// How a dialog ended, for every exit status (run handles the endings of
// "any" program, yadButton and zenityButton the rest):
//
//	program  ending                        meaning
//	any      askperm's ctx ended           ctx's error, after the whole process group is killed
//	any      killed by a signal            prompt.ErrCancelled: the dialog went away unanswered
//	any      1 and "cannot open display"   prompt.ErrUnavailable: no usable display, the chain moves on; after
//	                                       a first dialog of the walk opened, prompt.ErrCancelled: the display went away
//	any      could not be started, or      prompt.ErrUnavailable while no dialog of the walk has opened: it
//	         exited without reading all    showed no window (e.g. an option it does not know); later, as
//	         of its input                  its exit status says
//	yad      0                             Enter, Ctrl+Enter or askperm's button id 0: a deny (deny once,
//	                                       or in the reason entry the deny already chosen)
//	yad      askperm's button ids          that button
//	yad      1                             prompt.ErrCancelled: no Cancel button is offered, so the window went away
//	yad      252                           prompt.ErrCancelled: Escape, or the window closed
//	yad      70                            its own --timeout, set to askperm's deadline: once askperm's ctx
//	                                       ended (waited for, at most dialogLate), ctx's error; else error
//	zenity   0                             OK, also Return in a viewer, even on its Cancel: Read again in the
//	                                       choice viewer, « Back in the rule viewer, the deny in the
//	                                       reason entry, OK in a list
//	zenity   1 and one of our labels       that extra button
//	zenity   1 and nothing on stdout       Cancel, Escape, or the window closed: Deny once in the viewers
//	                                       (Cancel is named Deny once), no reason in the reason entry,
//	                                       back to the rule viewer from a Change… list
//	zenity   5                             its own --timeout, as yad's 70
//	zenity   255                           error: zenity failed (e.g. an unknown option)
//	any      anything else                 error
//
// Every error is a deny: the chain's caller turns cancellation into cause
// "cancelled" and other errors into cause "error".
package dialog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

const (
	dialogTitle = "--title=askperm: permission request"
	dialogWidth = "--width=720"
	// dialogHeight is the height of the viewers, lists and yad's rule form.
	dialogHeight = "--height=560"
	// dialogDoc is where a viewer reads its text: the pipe handed over as
	// descriptor 3.
	dialogDoc = "--filename=/dev/fd/3"
	// dialogCells is the width text is wrapped to: it fits dialogWidth in
	// the viewers' monospace font.
	dialogCells = 80
	// dialogMaxOutput caps what is kept of a dialog's stderr, and of its
	// stdout beyond twice its input (yad's form prints its text back).
	dialogMaxOutput = 64 << 10
	// dialogGrace is how long a dialog may take to exit after SIGTERM
	// before its process group is killed.
	dialogGrace = 500 * time.Millisecond
	// dialogPoll is how often askperm looks whether a dialog has read all
	// of its input; looking late only makes the arming stricter.
	dialogPoll = 5 * time.Millisecond
	// dialogAppear is how long after reading all of its input a dialog is
	// taken to show its window: within 50 ms under Xvfb (measured).
	dialogAppear = 100 * time.Millisecond
)

// dialogLate is how long after a dialog's own timeout askperm waits for
// its own deadline, which the dialog's timeout (rounded up to a second)
// never precedes by more than clock skew.
const dialogLate = 2 * time.Second

// dialogReasonText asks for the optional denial reason.
const dialogReasonText = "Why do you deny this? Optional: the agent sees your reason."

// dialogChange is the label of zenity's button that changes the rule.
const dialogChange = "Change…"

// dialogArgs starts the arguments of every dialog: its kind, then the
// fixed title and width, and no markup.
func dialogArgs(kind string, more ...string) []string {
	return append([]string{kind, dialogTitle, "--no-markup", dialogWidth}, more...)
}

// dialogDirs are where a dialog program is looked up when none is
// configured. Never the caller's PATH: a fake "zenity" there could simply
// exit 0.
var dialogDirs = []string{"/usr/bin", "/usr/local/bin"}

// dialogEnv is all a dialog inherits of the caller's environment. The rest
// is dropped: ZENITY_* and DIALOG_* remap zenity's exit codes (DIALOG_ESC=0
// makes Escape exit 0), YAD_OPTIONS adds options (--escape-ok),
// GTK_*/GDK_*/GIO_*/G_* load modules and settings, LD_* load code.
var dialogEnv = []string{
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR",
	"DBUS_SESSION_BUS_ADDRESS", "HOME", "LANG", "LC_ALL", "LC_CTYPE",
}

// dialogPath is the PATH a dialog runs with.
const dialogPath = "PATH=/usr/bin:/bin"

// dialogLocale is the locale a dialog runs with when the caller's is not
// UTF-8: it exists wherever glibc 2.35 or Debian's libc does.
const dialogLocale = "LC_ALL=C.UTF-8"

// dialog is the yad or zenity frontend. It does not change once built.
type dialog struct {
	name decision.Frontend
	path string        // the program, absolute
	env  []string      // the program's whole environment
	arm  time.Duration // prompt.Options.Arming
	err  error         // why the dialog cannot start; found once, by New
}

// New returns the frontend named "yad" or "zenity". Whether it can start
// is decided here, once: a display must be named and the program found.
func New(name decision.Frontend, o prompt.Options) prompt.Frontend {
	d := &dialog{name: name, arm: o.Arming()}
	getenv := o.Env
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		d.err = fmt.Errorf("no display: neither DISPLAY nor WAYLAND_DISPLAY is set: %w", prompt.ErrUnavailable)
		return d
	}
	if d.path, d.err = dialogProgram(string(name), o.DialogPaths[string(name)]); d.err != nil {
		return d
	}
	d.env = dialogEnvironment(getenv)
	return d
}

// dialogEnvironment is a dialog's whole environment: the variables of
// dialogEnv the caller set, a fixed PATH, and dialogLocale in place of the
// caller's LC_ALL when the caller's locale is not UTF-8.
func dialogEnvironment(getenv func(string) string) []string {
	utf8 := dialogUTF8(getenv)
	var env []string
	for _, k := range dialogEnv {
		if v := getenv(k); v != "" && (utf8 || k != "LC_ALL") {
			env = append(env, k+"="+v)
		}
	}
	if !utf8 {
		env = append(env, dialogLocale)
	}
	return append(env, dialogPath)
}

// dialogUTF8 reports whether the caller's locale encodes text as UTF-8:
// the first of LC_ALL, LC_CTYPE and LANG that is set decides, as for
// setlocale.
func dialogUTF8(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := strings.ToLower(getenv(k)); v != "" {
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// Program is the dialog program askperm would run for name ("yad" or
// "zenity"): the configured path, checked, or the one found where askperm
// looks; an error wrapping prompt.ErrUnavailable says why there is none.
func Program(name, configured string) (string, error) { return dialogProgram(name, configured) }

// dialogProgram returns the program to run: the configured path, which
// must be absolute, or the first of dialogDirs holding it.
func dialogProgram(name, configured string) (string, error) {
	if configured != "" {
		if !filepath.IsAbs(configured) {
			return "", fmt.Errorf("configured %s path %q is not absolute: %w", name, configured, prompt.ErrUnavailable)
		}
		if err := dialogExecutable(configured); err != nil {
			return "", fmt.Errorf("configured %s: %w: %w", name, err, prompt.ErrUnavailable)
		}
		return configured, nil
	}
	for _, dir := range dialogDirs {
		if p := filepath.Join(dir, name); dialogExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s: %w", name, strings.Join(dialogDirs, ", "), prompt.ErrUnavailable)
}

// dialogExecutable checks that path (links followed) is an executable
// regular file.
func dialogExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

func (d *dialog) Name() decision.Frontend { return d.name }

func (d *dialog) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	if d.err != nil {
		return form.Answer{}, d.err
	}
	w := &walk{dialog: d, opened: func() { f.Opened(d.name) }}
	var s dialogStager = yad{w}
	if d.name == decision.FrontendZenity {
		s = zenity{w}
	}
	return form.Walk(ctx, f, dialogStages{s, w})
}

// dialogStager is how yad and zenity show the stages.
type dialogStager interface {
	// view shows the request with a button per choice, deny once first
	// and the default, and returns the choice made and how the dialog
	// ended; no choice ("") means show the request again.
	view(ctx context.Context, text string, choices []form.Choice) (form.Choice, dialogExit, error)
	// reason asks the optional reason for the deny choice c, starting from
	// the reason given before.
	reason(ctx context.Context, c form.Choice, before string) (string, error)
	// AskRule is form.Stager's. Deny once in a rule dialog (also yad's
	// Ctrl+Enter, zenity's Escape) sets a.Choice to form.DenyOnce;
	// dialogStages then asks the reason.
	AskRule(ctx context.Context, f *form.Form, a *form.Answer) (back bool, err error)
}

// dialogStages walks stage "choice" the same way for both programs, and
// asks the denial reason after Deny once in stage "rule".
type dialogStages struct {
	dialogStager
	w *walk
}

// AskChoice shows the request until a choice counts: an allow that came
// too soon shows it again, saying so first.
func (s dialogStages) AskChoice(ctx context.Context, f *form.Form, a *form.Answer) error {
	choices := f.Choices()
	slices.Reverse(choices) // deny once first, as the default; allows last
	note := ""
	for {
		text := dialogCompose(f.Message(form.StageChoice, *a), deadlineLine(ctx, time.Now()), note)
		c, e, err := s.view(ctx, dialogWrap(text), choices)
		switch {
		case err != nil:
			return err
		case c == "":
			note = ""
			continue
		case c.IsAllow():
			if note = s.w.tooSoon(e, form.ChoiceLabel(c)); note != "" {
				continue
			}
		}
		a.Choice = c
		if !c.IsAllow() {
			a.Message, err = s.reason(ctx, c, a.Message)
		}
		return err
	}
}

// AskRule asks stage "rule"; Deny once there asks the denial reason, as
// Deny once in stage "choice" does, starting from any reason given for
// Deny always….
func (s dialogStages) AskRule(ctx context.Context, f *form.Form, a *form.Answer) (bool, error) {
	back, err := s.dialogStager.AskRule(ctx, f, a)
	if err != nil || back || a.Choice != form.DenyOnce {
		return back, err
	}
	a.Message, err = s.reason(ctx, form.DenyOnce, a.Message)
	return false, err
}

// dialogRuleText is the text of a rule dialog: the request's question,
// the deadline, the note, then the rule and what follows (more).
func dialogRuleText(ctx context.Context, f *form.Form, a form.Answer, note, more string) string {
	return dialogCompose(f.Headline()+"\n"+f.Message(form.StageRule, a)+more, deadlineLine(ctx, time.Now()), note)
}

// dialogSameRule reports whether a and b save the same rule.
func dialogSameRule(a, b form.Answer) bool {
	return slices.Equal(a.Grants, b.Grants) && maps.Equal(a.Scopes, b.Scopes) &&
		a.WorkdirScope == b.WorkdirScope && a.Lifetime == b.Lifetime
}

// dialogLine returns the one line a dialog printed, without its newline.
func dialogLine(name, stdout string) (string, error) {
	line, ok := strings.CutSuffix(stdout, "\n")
	if !ok {
		return "", fmt.Errorf("%s printed an unexpected answer: %s", name, form.Line(stdout))
	}
	return line, nil
}

// dialogExit is how one dialog ended.
type dialogExit struct {
	code           int
	stdout, stderr string
	// read is when the dialog had read all of its input (zero: never, or
	// it had none), ended when it exited.
	read, ended time.Time
}

// unexpected is the error of an exit status nobody can explain.
func (e dialogExit) unexpected(name string) error {
	msg := fmt.Sprintf("%s exited with unexpected status %d", name, e.code)
	if line := lastLine(e.stderr); line != "" {
		msg += ": " + line
	}
	return errors.New(msg)
}

// lastLine is the last non-empty line of a dialog's stderr, rendered safe
// for askperm's own stderr and cut to a diagnostic's length.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := form.Line(strings.TrimSpace(lines[len(lines)-1]))
	if len(line) > 200 {
		line = ansi.Truncate(line, 200, "…")
	}
	return line
}

// walk is one walk of the form through a dialog program.
type walk struct {
	*dialog
	// shown is set once a dialog of the walk opened: the display was
	// usable, so losing it later is no reason to try another frontend.
	shown bool
	// opened tells the form that the walk's first dialog started; nil
	// tells nobody.
	opened func()
}

// tooSoon returns why an allow (labelled allow) given by closing e does
// not count, or "" when it counts: it must end ArmDelay after the window
// appeared, taken to be dialogAppear after the dialog read all of its
// input.
func (d *walk) tooSoon(e dialogExit, allow string) string {
	if d.arm <= 0 || !e.read.IsZero() && e.ended.Sub(e.read) >= dialogAppear+d.arm {
		return ""
	}
	return fmt.Sprintf("Not accepted: %s was chosen sooner than %v after this window appeared. Read it, then choose again.", allow, d.arm)
}

// saveNote returns why Save rule, chosen by closing e with rule a, saves
// nothing (too soon for an allow rule, or a rule the form refuses), or ""
// when it saves.
func (d *walk) saveNote(e dialogExit, f *form.Form, a form.Answer) string {
	if a.Choice.IsAllow() {
		if note := d.tooSoon(e, form.SaveLabel); note != "" {
			return note
		}
	}
	if err := f.CheckRule(a); err != nil {
		return "Not saved: " + form.Line(err.Error())
	}
	return ""
}

// input is what a dialog reads through a pipe: a viewer's text on
// descriptor 3 (dialogDoc), or a form's values or a list's rows on stdin.
// A dialog without input has /dev/null as stdin.
type input struct {
	text  string
	stdin bool
}

// run shows one dialog: args follow the program name, in is fed to it. It
// returns the exit status and output, or an error for the endings every
// dialog shares (see the table above): ctx ended, killed by a signal, no
// display, not started, more output than it may print.
func (d *walk) run(ctx context.Context, in input, args ...string) (dialogExit, error) {
	cmd := exec.CommandContext(ctx, d.path, args...)
	cmd.Env = d.env
	// Not askperm's working directory, which may be the agent's: zenity
	// 3.44 loads its whole user interface from ./zenity.ui when there is
	// one, before /usr/share/zenity/zenity.ui.
	cmd.Dir = "/"
	stdout, stderr := dialogCapped{max: dialogMaxOutput + 2*len(in.text)}, dialogCapped{max: dialogMaxOutput}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, so that nothing it starts outlives it; killed
	// if askperm dies first, so that no prompt is left on the screen.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = dialogGrace
	r, w, err := dialogPipe(in)
	if err != nil {
		return dialogExit{}, fmt.Errorf("pipe for %s: %w", d.name, err)
	}
	switch {
	case r == nil:
	case in.stdin:
		cmd.Stdin = r
	default:
		cmd.ExtraFiles = []*os.File{r}
	}
	err = cmd.Start()
	if r != nil {
		r.Close() // the dialog has its own copy
	}
	if err != nil {
		if w != nil {
			w.Close()
		}
		if ctx.Err() != nil {
			return dialogExit{}, ctx.Err()
		}
		return dialogExit{}, d.notStarted(fmt.Errorf("starting %s: %w", d.name, err))
	}
	if !d.shown && d.opened != nil {
		d.opened()
	}
	read := dialogFeed(w, in.text)
	err = cmd.Wait()
	e := dialogExit{ended: time.Now(), read: read()}
	if ctx.Err() != nil {
		// The deadline or a signal decides, whatever the dialog said. The
		// group got SIGTERM, and its leader SIGKILL after the grace; the
		// rest of the group goes now.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return dialogExit{}, ctx.Err()
	}
	e.stdout, e.stderr = stdout.String(), stderr.String()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return e, fmt.Errorf("%s was killed by %v: %w", d.name, ws.Signal(), prompt.ErrCancelled)
		}
		e.code = exit.ExitCode()
	case err != nil:
		return e, fmt.Errorf("%s: %w", d.name, err)
	}
	if e.code == 1 && strings.Contains(e.stderr, "cannot open display") {
		if d.shown {
			return e, fmt.Errorf("%s: the display went away: %s: %w", d.name, lastLine(e.stderr), prompt.ErrCancelled)
		}
		return e, fmt.Errorf("%s: %s: %w", d.name, lastLine(e.stderr), prompt.ErrUnavailable)
	}
	if _, ok := ctx.Deadline(); ok && e.code == dialogTimeoutExit[d.name] {
		return e, d.timedOut(ctx)
	}
	if in.text != "" && e.read.IsZero() && !d.shown {
		return e, d.notStarted(fmt.Errorf("%s exited with status %d before reading its input: %s", d.name, e.code, lastLine(e.stderr)))
	}
	d.shown = true
	if stdout.over {
		return e, fmt.Errorf("%s printed more than %d bytes", d.name, stdout.max)
	}
	return e, nil
}

// dialogTimeoutExit is each program's exit status for its own --timeout.
var dialogTimeoutExit = map[decision.Frontend]int{decision.FrontendYad: 70, decision.FrontendZenity: 5}

// timedOut is the error of a dialog that ended by its own --timeout, set to
// askperm's deadline rounded up: ctx's error once ctx ends, as it should
// at once; if it does not within dialogLate, an error of its own. Either
// is a deny.
func (d *walk) timedOut(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(dialogLate):
		return fmt.Errorf("%s timed out before askperm's deadline", d.name)
	}
}

// dialogSeconds is the --timeout of a dialog shown with left before
// askperm's deadline: left rounded up to whole seconds, so that the dialog
// never gives up before askperm does.
func dialogSeconds(left time.Duration) int {
	return max(1, int((left+time.Second-1)/time.Second))
}

// timeoutArgs are the options that make a dialog end at ctx's deadline
// by itself, showing it: --timeout, and for yad its indicator. None when
// ctx has no deadline.
func (d *walk) timeoutArgs(ctx context.Context) []string {
	dl, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	args := []string{fmt.Sprintf("--timeout=%d", dialogSeconds(time.Until(dl)))}
	if d.name == decision.FrontendYad {
		args = append(args, "--timeout-indicator=bottom")
	}
	return args
}

// deadlineLine states ctx's deadline in askperm's words, "" when ctx has
// none: `Answer by 14:02:31 (4 min 52 s left); unanswered, this request
// is denied.`
func deadlineLine(ctx context.Context, now time.Time) string {
	dl, ok := ctx.Deadline()
	if !ok {
		return ""
	}
	return fmt.Sprintf("Answer by %s (%s left); unanswered, this request is denied.", dl.Format("15:04:05"), dialogLeft(dl.Sub(now)))
}

// dialogLeft words a time left: "1 h 3 min", "4 min 52 s", "9 s".
func dialogLeft(left time.Duration) string {
	s := dialogSeconds(left)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	return fmt.Sprintf("%d s", s)
}

// dialogCompose is the text of a viewer or of yad's rule field: msg's
// first line (the request's question, form.Headline) stays first, then
// the deadline line and the note, each of askperm's own, then the rest
// of msg.
func dialogCompose(msg, deadline, note string) string {
	head, rest, _ := strings.Cut(msg, "\n")
	var b strings.Builder
	b.WriteString(head + "\n")
	if deadline != "" {
		b.WriteString(deadline + "\n")
	}
	if note != "" {
		b.WriteString("\n" + note + "\n\n")
	}
	b.WriteString(rest)
	return b.String()
}

// notStarted is the error of a dialog that showed no window: while no
// dialog of the walk has opened, it wraps prompt.ErrUnavailable, so that
// the chain moves on.
func (d *walk) notStarted(err error) error {
	if d.shown {
		return err
	}
	return fmt.Errorf("%w: %w", err, prompt.ErrUnavailable)
}

// dialogPipe is the pipe in travels through, none (nil files) when in
// is empty.
func dialogPipe(in input) (r, w *os.File, err error) {
	if in.text == "" {
		return nil, nil, nil
	}
	return os.Pipe()
}

// dialogFeed writes text into w, the pipe a dialog reads its input from,
// and closes w once the pipe is drained: the dialog reads to its end. The
// function it returns stops feeding and reports when the dialog had read
// all, or the zero time if it never did. Without a pipe it reports zero.
func dialogFeed(w *os.File, text string) func() time.Time {
	if w == nil {
		return func() time.Time { return time.Time{} }
	}
	stop := make(chan struct{})
	done := make(chan time.Time, 1)
	go func() {
		var read time.Time
		defer func() { w.Close(); done <- read }()
		if _, err := w.WriteString(text); err != nil {
			return
		}
		tick := time.NewTicker(dialogPoll)
		defer tick.Stop()
		for {
			if n, err := dialogQueued(w); err != nil || n == 0 {
				if err == nil {
					read = time.Now()
				}
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() time.Time {
		close(stop)
		w.Close() // ends a write blocked on a pipe nobody reads
		return <-done
	}
}

// dialogQueued is how many bytes wait in the pipe w (TIOCINQ is FIONREAD;
// either end of a pipe answers it). Not w.Fd(): it would make w blocking,
// and Close could no longer end a blocked write.
func dialogQueued(w *os.File) (int, error) {
	rc, err := w.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		return 0, err
	}
	return n, ierr
}

// dialogCapped keeps the first max bytes written to it and drops the
// rest, never failing: a dialog blocked on a full pipe would hang until
// the deadline. (Not an embedded bytes.Buffer: io.Copy would use its
// ReadFrom and bypass the cap.)
type dialogCapped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *dialogCapped) Write(p []byte) (int, error) {
	keep := min(len(p), c.max-c.buf.Len())
	c.over = c.over || keep < len(p)
	c.buf.Write(p[:keep])
	return len(p), nil
}

func (c *dialogCapped) String() string { return c.buf.String() }

// dialogWrap breaks each line of s that is wider than dialogCells display
// cells (tabs expanded) at its last space, or mid-word when that space is
// too far back, so that the dialog never wraps it by itself. A continued
// line starts with four spaces, after the gutter "│ " when the line had
// one or is an item of a list (form.ItemIndent): it can never pass for a
// line of askperm's own, which starts at the margin or, for an item, at
// form.ItemIndent, as untrusted text holds no newline (the renderer
// escapes it).
func dialogWrap(s string) string {
	lines := strings.Split(form.ExpandTabs(s), "\n")
	for i, line := range lines {
		indent := "    "
		if strings.HasPrefix(line, "│ ") || strings.HasPrefix(line, form.ItemIndent) {
			indent = "│     "
		}
		var b strings.Builder
		for cut := dialogCut(line); cut < len(line); cut = dialogCut(line) {
			b.WriteString(line[:cut] + "\n")
			line = indent + line[cut:]
		}
		lines[i] = b.String() + line
	}
	return strings.Join(lines, "\n")
}

// dialogCut returns where a line ends within dialogCells cells: its length
// if it fits, else after its last space when that lies in the second
// half, else before the first rune that does not fit.
func dialogCut(line string) int {
	col := 0
	for i, r := range line {
		if col += ansi.StringWidth(string(r)); col > dialogCells {
			if sp := strings.LastIndexByte(line[:i], ' '); sp >= i/2 {
				return sp + 1
			}
			return i
		}
	}
	return len(line)
}

// dialogCurrent is the index of a's option in a question that takes one
// (0 if none matches).
func dialogCurrent(q form.Question, a form.Answer) int {
	return max(0, q.Index(q.Chosen(a)[0]))
}

// dialogItem is option i as a dialog lists it: numbered, so that it never
// starts with "-" (an option to GTK) or "^" (yad's default mark).
func dialogItem(i int, text string) string {
	return fmt.Sprintf("%d. %s", i+1, text)
}

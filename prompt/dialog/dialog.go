// Package dialog is askperm's desktop dialogs: yad and zenity. Both walk
// the same stages; yad.go and zenity.go only say how each program shows
// them. Behaviour verified with yad 0.40.0 and zenity 3.44.0 (GTK 3.24)
// under Xvfb:
//
//   - Untrusted text stays out of labels where it can: zenity ignores
//     --no-markup in --list, --forms and --entry, both programs apply
//     g_strcompress (`\n` becomes a newline) to most texts, and a long word
//     in a label widens the window past the screen. So the request, and in
//     zenity the rule too, is shown by --text-info from an anonymous file
//     on descriptor 3: read-only, scrolled, no markup, no escapes, not in
//     argv. Buttons and field labels are askperm's own words. yad's rule
//     form puts the rule in its --text and the scope texts in its combo
//     items (yad shows both without markup), protected from g_strcompress;
//     zenity's lists show option texts as rows (plain text, verified).
//   - What a viewer or yad's form shows is wrapped by dialogWrap first,
//     continued lines indented, so that the dialog does not wrap it again
//     and no wrapped tail of a value starts a line as if it were one of
//     askperm's labels.
//   - No argv element starting with "-" holds untrusted text except after
//     "--text=", "--column=" or "--entry-text=", one element each: GTK
//     strips "--display=..." and "--gtk-module=..." elements wherever they
//     stand. Positional values start with a digit, "^", TRUE or FALSE, or
//     are askperm's own.
//   - Enter never approves: 0 is what Enter and Ctrl+Enter give, and it
//     means deny; every other answer has its own code or label. No label
//     has an underscore, so no Alt key presses a button.
//
// How a dialog ended, for every exit status (run handles the endings of
// "any" program, yadButton and zenityButton the rest):
//
//	program  ending                        meaning
//	any      askperm's ctx ended           ctx's error, after the whole process group is killed
//	any      killed by a signal            prompt.ErrCancelled: the dialog went away unanswered
//	any      1 and "cannot open display"   prompt.ErrUnavailable: no usable display, the chain moves on; after
//	                                       a first dialog of the walk opened, prompt.ErrCancelled: the display went away
//	yad      0                             Enter, Ctrl+Enter or askperm's button id 0: a deny (deny once,
//	                                       or in the reason entry the deny already chosen)
//	yad      askperm's button ids          that button
//	yad      1                             prompt.ErrCancelled: no Cancel button is offered, so the window went away
//	yad      252                           prompt.ErrCancelled: Escape, or the window closed
//	yad      70                            error: its own --timeout, which askperm never sets
//	zenity   0                             OK (named Deny once in the viewers): its answer on stdout
//	zenity   1 and one of our labels       that extra button
//	zenity   1 and nothing on stdout       prompt.ErrCancelled: Cancel, Escape, or the window closed
//	zenity   5                             error: its own --timeout, which askperm never sets
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
	// dialogHeight is the height of the text viewers and lists.
	dialogHeight = "--height=560"
	// dialogDoc is where a viewer reads its text: the anonymous file handed
	// over as descriptor 3.
	dialogDoc = "--filename=/dev/fd/3"
	// dialogCells is the width text is wrapped to: it fits dialogWidth in
	// the viewers' monospace font.
	dialogCells = 80
	// dialogMaxOutput caps what is kept of a dialog's stdout and stderr.
	dialogMaxOutput = 64 << 10
	// dialogGrace is how long a dialog may take to exit after SIGTERM
	// before its process group is killed.
	dialogGrace = 500 * time.Millisecond
)

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

// dialog is the yad or zenity frontend. It does not change once built.
type dialog struct {
	name decision.Frontend
	path string   // the program, absolute
	env  []string // the program's whole environment
	err  error    // why the dialog cannot start; found once, by New
}

// New returns the frontend named "yad" or "zenity". Whether it can start
// is decided here, once: a display must be named and the program found.
func New(name decision.Frontend, o prompt.Options) prompt.Frontend {
	d := &dialog{name: name}
	getenv := o.Env
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		d.err = fmt.Errorf("no display: neither DISPLAY nor WAYLAND_DISPLAY is set: %w", prompt.ErrUnavailable)
		return d
	}
	if d.path, d.err = dialogProgram(string(name), o.DialogPaths[string(name)]); d.err != nil {
		return d
	}
	for _, k := range dialogEnv {
		if v := getenv(k); v != "" {
			d.env = append(d.env, k+"="+v)
		}
	}
	d.env = append(d.env, dialogPath)
	return d
}

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
	w := &walk{dialog: d}
	var s dialogStager = yad{w}
	if d.name == decision.FrontendZenity {
		s = zenity{w}
	}
	return form.Walk(ctx, f, dialogStages{s})
}

// dialogStager is how yad and zenity show the stages.
type dialogStager interface {
	// view shows the request with a button per choice, deny once first
	// and the default, and returns the choice made.
	view(ctx context.Context, text string, choices []form.Choice) (form.Choice, error)
	// reason asks the optional reason for the deny choice c, starting from
	// the reason given before.
	reason(ctx context.Context, c form.Choice, before string) (string, error)
	// AskRule is form.Stager's. Deny once in a rule dialog (also yad's
	// Ctrl+Enter, zenity's Enter) sets a.Choice to form.DenyOnce.
	AskRule(ctx context.Context, f *form.Form, a *form.Answer) (back bool, err error)
}

// dialogStages walks stage "choice" the same way for both programs.
type dialogStages struct{ dialogStager }

func (s dialogStages) AskChoice(ctx context.Context, f *form.Form, a *form.Answer) error {
	choices := f.Choices()
	slices.Reverse(choices) // deny once first, as the default; allows last
	c, err := s.view(ctx, dialogWrap(f.Message(form.StageChoice, *a)), choices)
	if err != nil {
		return err
	}
	a.Choice = c
	if !c.IsAllow() {
		a.Message, err = s.reason(ctx, c, a.Message)
	}
	return err
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
}

// run shows one dialog: args follow the program name; doc, when not
// empty, is readable at /dev/fd/3 (dialogDoc). Stdin is /dev/null. It
// returns the exit status and output, or an error for the endings every
// dialog shares (see the table above): ctx ended, killed by a signal, no
// display, more output than dialogMaxOutput.
func (d *walk) run(ctx context.Context, doc string, args ...string) (dialogExit, error) {
	cmd := exec.CommandContext(ctx, d.path, args...)
	cmd.Env = d.env
	var stdout, stderr dialogCapped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if doc != "" {
		f, err := dialogFile(doc)
		if err != nil {
			return dialogExit{}, err
		}
		defer f.Close()
		cmd.ExtraFiles = []*os.File{f}
	}
	// Its own process group, so that nothing it starts outlives it; killed
	// if askperm dies first, so that no prompt is left on the screen.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = dialogGrace
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return dialogExit{}, ctx.Err()
		}
		return dialogExit{}, fmt.Errorf("starting %s: %w", d.name, err)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		// The deadline or a signal decides, whatever the dialog said. The
		// group got SIGTERM, and its leader SIGKILL after the grace; the
		// rest of the group goes now.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return dialogExit{}, ctx.Err()
	}
	e := dialogExit{stdout: stdout.String(), stderr: stderr.String()}
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
	d.shown = true
	if stdout.over {
		return e, fmt.Errorf("%s printed more than %d bytes", d.name, dialogMaxOutput)
	}
	return e, nil
}

// dialogFile returns an anonymous file holding doc, for a viewer to read
// through /dev/fd/3: the text never touches argv or the disk.
func dialogFile(doc string) (*os.File, error) {
	fd, err := unix.MemfdCreate("askperm-request", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("anonymous file for the dialog: %w", err)
	}
	f := os.NewFile(uintptr(fd), "askperm-request")
	if _, err := f.WriteString(doc); err != nil {
		f.Close()
		return nil, fmt.Errorf("anonymous file for the dialog: %w", err)
	}
	return f, nil
}

// dialogCapped keeps the first dialogMaxOutput bytes written to it and
// drops the rest, never failing: a dialog blocked on a full pipe would
// hang until the deadline. (Not an embedded bytes.Buffer: io.Copy would
// use its ReadFrom and bypass the cap.)
type dialogCapped struct {
	buf  bytes.Buffer
	over bool
}

func (c *dialogCapped) Write(p []byte) (int, error) {
	keep := min(len(p), dialogMaxOutput-c.buf.Len())
	c.over = c.over || keep < len(p)
	c.buf.Write(p[:keep])
	return len(p), nil
}

func (c *dialogCapped) String() string { return c.buf.String() }

// dialogWrap breaks each line of s that is wider than dialogCells display
// cells (tabs expanded) at its last space, or mid-word when that space is
// too far back, so that the dialog never wraps it by itself. A continued
// line starts with four spaces, after the gutter "│ " when the line had
// one: it can never pass for a line of askperm's own, which starts at the
// margin, as untrusted text holds no newline (the renderer escapes it).
func dialogWrap(s string) string {
	lines := strings.Split(form.ExpandTabs(s), "\n")
	for i, line := range lines {
		indent := "    "
		if strings.HasPrefix(line, "│ ") {
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

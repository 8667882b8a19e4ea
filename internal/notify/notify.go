// Package notify tells a person that a question waits for them: it runs
// the program of config.toml's [notify] (by default notify-send, where a
// desktop is) when a frontend opens a question, with the question's one
// line, the host and the deadline in its environment and nothing else of
// the request. A notification never delays, changes or blocks a
// decision: it is started and not waited for, it lives at most Bound and
// never past the request, and every failure of it is a warning.
package notify

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/userfile"
)

// Bound is how long a notification program may run.
const Bound = 5 * time.Second

// bound is Bound, shortened by tests.
var bound = Bound

// MaxQuestion caps the runes of ASKPERM_QUESTION; a longer question is
// cut, and ends with "…".
const MaxQuestion = 300

// maxStderr caps what is kept of the program's stderr, to say why it
// failed.
const maxStderr = 4096

// Variables the program's environment holds: the notice's, and those of
// the caller's environment a desktop notifier or a network client needs
// (notify-send reaches the desktop's notification daemon over D-Bus:
// the session bus's address, or $XDG_RUNTIME_DIR/bus). Nothing else of
// the caller's environment is passed.
var (
	noticeEnv = []string{"ASKPERM_QUESTION", "ASKPERM_HOST", "ASKPERM_DEADLINE", "ASKPERM_FRONTEND"}
	callerEnv = []string{"PATH", "HOME", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"}
)

// Names are every variable a notification program's environment may
// hold.
func Names() []string { return append(append([]string(nil), noticeEnv...), callerEnv...) }

// Config is [notify], resolved.
type Config struct {
	// Command is the program, an absolute path, and its arguments; nil
	// is the default: notify-send, for a question asked where the person
	// may not be looking.
	Command []string
	// Off: `command = []`, no notification at all.
	Off bool
	// Host names this host in ASKPERM_HOST: [team]'s host, else the
	// hostname.
	Host string
}

// notifySend is the default notifier's name, looked up in defaultDirs:
// never in the caller's PATH, as for the dialogs.
const notifySend = "notify-send"

// defaultDirs are where notify-send is looked up.
var defaultDirs = []string{"/usr/bin", "/usr/local/bin"}

// Program is what runs for a notice: Argv, and for the default the
// question as its last argument (notify-send reads no environment).
type Program struct {
	Argv        []string
	questionArg bool
}

// For is what runs when frontend by opens a question, nil for
// nothing. A configured command runs for every frontend that asks a
// person (tui, line, yad, zenity, team). The default, notify-send, runs
// only when the person may be looking elsewhere: for a dialog, or for
// the terminal frontends when they ask on another terminal than the
// caller's (elsewhere: the pane kept for approvals, or --tty), and only
// with a display and a D-Bus session in getenv; never for team, whose
// approvers are on other machines.
func (c *Config) For(by decision.Frontend, elsewhere bool, getenv func(string) string) *Program {
	switch {
	case c == nil || c.Off:
		return nil
	case c.Command != nil:
		return &Program{Argv: c.Command}
	case by == decision.FrontendTUI || by == decision.FrontendLine:
		if !elsewhere {
			return nil
		}
	case by != decision.FrontendYad && by != decision.FrontendZenity:
		return nil
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" ||
		getenv("DBUS_SESSION_BUS_ADDRESS") == "" && getenv("XDG_RUNTIME_DIR") == "" {
		return nil
	}
	for _, dir := range defaultDirs {
		if p := filepath.Join(dir, notifySend); userfile.Program(p) == nil {
			return &Program{Argv: []string{p, "--app-name=askperm", "--", "askperm: a question waits"}, questionArg: true}
		}
	}
	return nil
}

// Notice is what a notification says.
type Notice struct {
	// Headline is the form's one-line question (form.Form.Headline),
	// already rendered.
	Headline string
	Host     string
	Deadline time.Time
	Frontend decision.Frontend
}

// Question is n's headline as ASKPERM_QUESTION carries it: cut after
// MaxQuestion runes.
func (n Notice) Question() string {
	if utf8.RuneCountInString(n.Headline) <= MaxQuestion {
		return n.Headline
	}
	i, k := 0, 0
	for i = range n.Headline {
		if k == MaxQuestion-1 {
			break
		}
		k++
	}
	return n.Headline[:i] + "…"
}

// Environment is the program's whole environment: the notice's
// variables, and those of callerEnv that getenv sets.
func (n Notice) Environment(getenv func(string) string) []string {
	env := []string{
		"ASKPERM_QUESTION=" + n.Question(),
		"ASKPERM_DEADLINE=" + n.Deadline.Format(time.RFC3339),
		"ASKPERM_FRONTEND=" + string(n.Frontend),
	}
	if n.Host != "" {
		env = append(env, "ASKPERM_HOST="+n.Host)
	}
	for _, k := range callerEnv {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Start runs p for n and returns at once; stop ends it: the program
// and everything it started are killed unless done, and stop never
// waits. The program runs without a shell, from /, in its own process
// group, with /dev/null as stdin and stdout, for at most Bound; when it
// exits, whatever it left running in its group is killed. A program the user may not
// trust (userfile.Program), one that cannot start, fails, or outlives
// Bound is said on warn, one line.
// markup escapes what notify-send's body would read as markup: the
// question is shown as it is, never styled or linked by the request.
var markup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func Start(p *Program, n Notice, getenv func(string) string, warn func(string)) (stop func()) {
	argv := p.Argv
	if err := userfile.Program(argv[0]); err != nil {
		warn(fmt.Sprintf("notify: %v; no notification", err))
		return func() {}
	}
	args := argv[1:len(argv):len(argv)]
	if p.questionArg {
		args = append(args, markup.Replace(n.Question()))
	}
	cmd := exec.Command(argv[0], args...)
	cmd.Env = n.Environment(getenv)
	cmd.Dir = "/"
	stderr := &capped{max: maxStderr}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second // a descendant that left the group keeps stderr open
	if err := cmd.Start(); err != nil {
		warn(fmt.Sprintf("notify: %s: %v; no notification", argv[0], err))
		return func() {}
	}
	g := &group{pid: cmd.Process.Pid}
	timer := time.AfterFunc(bound, func() {
		if g.kill() {
			warn(fmt.Sprintf("notify: %s ran longer than %v; killed", argv[0], bound))
		}
	})
	go func() {
		// The leader, exited, stays a zombie until Wait: its group's id
		// cannot be taken by another process while the group is killed.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, g.pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		killed := g.exited()
		timer.Stop()
		err := cmd.Wait()
		if err != nil && !killed {
			warn(fmt.Sprintf("notify: %s: %v%s", argv[0], err, stderr.last()))
		}
	}()
	return func() { g.kill() }
}

// group is a notification program's process group, killed at most once
// and never after its leader was reaped.
type group struct {
	mu     sync.Mutex
	pid    int
	done   bool // the leader exited, or the group was killed
	killed bool
}

// kill kills the group unless done, and reports whether it did.
func (g *group) kill() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return false
	}
	g.done, g.killed = true, true
	_ = syscall.Kill(-g.pid, syscall.SIGKILL)
	return true
}

// exited kills what the leader left running in its group, unless the
// group was killed, and reports whether it was.
func (g *group) exited() (killed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.done {
		g.done = true
		_ = syscall.Kill(-g.pid, syscall.SIGKILL)
	}
	return g.killed
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// last is the last line written, rendered, after ": "; "" for none.
func (c *capped) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.TrimSpace(c.buf.String())
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return ""
	}
	return ": " + form.Line(s)
}

// Hostname is this host's name for ASKPERM_HOST; "" when unknown.
func Hostname() string {
	h, _ := os.Hostname()
	return h
}

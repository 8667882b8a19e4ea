package team

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/userfile"
)

// doneBound bounds writing a request's end to the done bucket: best
// effort, it must not hold the decision back.
const doneBound = 250 * time.Millisecond

// startBound bounds the bridge's start: its own reach of the server,
// and the time to start a program.
const startBound = ReachTimeout + time.Second

// Frontend is the `team` frontend: through the bridge (askperm-team
// bridge), it publishes the request as sent to the team's request stream
// and waits, until its context ends, for an approver's answer that
// passes Verify. Answers that do not are ignored, said on warn, and
// listed in the answer's Ignored for the audit log: a rogue answer
// neither decides nor stops the wait.
type Frontend struct {
	c    *Config
	warn func(string)
	// newAsk makes each asking's id (NewAsk).
	newAsk func() string
}

// New returns the team frontend of c (nil: team mode not configured, the
// frontend is unavailable). warn says each ignored answer and each line
// the bridge writes on its stderr, one line.
func New(c *Config, warn func(string)) *Frontend {
	if warn == nil {
		warn = func(string) {}
	}
	return &Frontend{c: c, warn: warn, newAsk: NewAsk}
}

// Name is "team".
func (*Frontend) Name() decision.Frontend { return decision.FrontendTeam }

// ErrUnavailable is the team frontend unable to ask: the pipeline's
// chain goes on to the next frontend, as for prompt.ErrUnavailable.
var ErrUnavailable = errors.New("unavailable")

// Ask asks the team about f's request, which must have a deadline
// (prompt.Bounded). It is unavailable when team mode
// is not configured or trusts no approver, when the form has no request
// as sent, when askperm-team is not installed, when the bridge cannot
// publish the request within ReachTimeout (the server unreachable, the
// team's streams missing or not as set up). Once the
// request is published it waits until ctx ends, whatever the bridge
// does, and a verified answer is the only way it returns an answer.
// Whenever the request ends, the bridge is told, to record it.
func (fe *Frontend) Ask(ctx context.Context, f *form.Form) (form.Answer, error) {
	c := fe.c
	switch {
	case c == nil:
		return form.Answer{}, fmt.Errorf("no [team] in config.toml: %w", ErrUnavailable)
	case len(c.Approvers) == 0:
		return form.Answer{}, fmt.Errorf("%w: %w", ErrNoApprovers, ErrUnavailable)
	case f.Sent() == nil:
		return form.Answer{}, fmt.Errorf("the request as sent is unknown: %w", ErrUnavailable)
	case len(f.Sent()) > MaxRequest:
		return form.Answer{}, fmt.Errorf("the request is larger than the team takes (%d bytes): %w", MaxRequest, ErrUnavailable)
	}
	// The approvers see, and sign for, the digest of the bytes sent: they
	// must be those of the request asked about.
	if d, err := decision.RequestSHA256(f.Sent()); err != nil || d != f.Req.SHA256 {
		return form.Answer{}, fmt.Errorf("the request as sent is not the request asked about: %w", ErrUnavailable)
	}
	program, err := FindProgram(c.Program)
	if err != nil {
		return form.Answer{}, fmt.Errorf("%w: %w", err, ErrUnavailable)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return form.Answer{}, fmt.Errorf("the request has no deadline: %w", ErrUnavailable)
	}
	start := BridgeStart{Config: *c, Request: f.Sent(), Digest: f.Req.SHA256, Ask: fe.newAsk(), Deadline: deadline.UnixMilli()}
	b, err := startBridge(program, start, fe.warn)
	if err != nil {
		return form.Answer{}, fmt.Errorf("%s: %w: %w", program, err, ErrUnavailable)
	}
	defer b.kill()
	r := &request{c: c, req: f.Req, ask: start.Ask, deadline: deadline, warn: b.say, b: b, opened: func() { f.Opened(decision.FrontendTeam) }}
	return r.wait(ctx)
}

// request is one request asked of the team.
type request struct {
	c        *Config
	req      *decision.Request
	ask      string // this asking's id: only answers signed for it count
	deadline time.Time
	warn     func(string)
	b        *bridge
	// opened tells the form that the request reached the team's inbox.
	opened func()
	// ignored says why each answer was ignored, the first maxIgnored;
	// more counts the others.
	ignored []string
	more    int
}

// maxIgnored bounds the ignored answers said and audited one by one: a
// flood of rogue answers must not flood the terminal or the audit log.
const maxIgnored = 16

// ignore notes that an answer was ignored, and why.
func (r *request) ignore(err error) {
	if len(r.ignored) == maxIgnored {
		if r.more == 0 {
			r.warn("team: more answers ignored; the audit log counts them")
		}
		r.more++
		return
	}
	why := form.Line(err.Error())
	r.ignored = append(r.ignored, why)
	r.warn("team: ignored " + why)
}

// ignoredAll are the ignored answers as the audit log keeps them.
func (r *request) ignoredAll() []string {
	if r.more == 0 {
		return r.ignored
	}
	return append(r.ignored, fmt.Sprintf("and %d more", r.more))
}

// wait reads the bridge's events until the first verified answer or the
// end of ctx. Before the request is published, the bridge failing or
// taking longer than startBound is unavailable; after, it is said and
// the wait goes on, for nothing, until ctx ends.
func (r *request) wait(ctx context.Context) (form.Answer, error) {
	// The done bucket is written within the request's time: the wait
	// ends that much earlier.
	margin := min(doneBound, time.Until(r.deadline)/20)
	waitCtx, cancel := context.WithDeadline(ctx, r.deadline.Add(-margin))
	defer cancel()
	started := time.NewTimer(startBound)
	defer started.Stop()
	events, published := r.b.events, false
	for {
		select {
		case ev, ok := <-events:
			var err error
			switch {
			case !ok:
				err = r.b.gone()
			case ev.Unavailable != "" && !published:
				err = errors.New(form.Line(ev.Unavailable))
			case ev.Published && !published:
				published = true
				started.Stop()
				r.opened()
				continue
			case ev.Key != "":
				v, verr := Verify(*r.c, r.ask, ev.Key, ev.Value, r.req)
				if verr != nil {
					r.ignore(verr)
					continue
				}
				r.b.end(Done{Outcome: v.Decision.Decision, Frontend: decision.FrontendTeam, Approver: v.Approver, Cause: v.Decision.Cause})
				a := answerOf(v)
				a.Ignored = r.ignoredAll()
				return a, nil
			default:
				err = errors.New("the bridge wrote an event out of turn")
			}
			if !published {
				r.b.end(Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseUnavailable})
				return form.Answer{}, fmt.Errorf("%w: %w", err, ErrUnavailable)
			}
			r.warn("team: " + err.Error() + "; no answer can arrive, the request waits for its deadline")
			r.b.kill()
			events = nil
		case <-started.C:
			r.b.end(Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: decision.CauseUnavailable})
			return form.Answer{}, fmt.Errorf("the request was not published within %v: %w", startBound, ErrUnavailable)
		case <-waitCtx.Done():
			r.b.end(Done{Outcome: decision.Deny, Frontend: decision.FrontendTeam, Cause: endCause(ctx)})
			<-ctx.Done()
			return form.Answer{Ignored: r.ignoredAll()}, ctx.Err()
		}
	}
}

// endCause is the cause of the deny of a request whose wait ended with
// ctx still running or ended: timeout, unless ctx was cancelled (a
// signal, the caller gone).
func endCause(ctx context.Context) decision.Cause {
	if errors.Is(ctx.Err(), context.Canceled) {
		return decision.CauseCancelled
	}
	return decision.CauseTimeout
}

// answerOf is the form's answer that gives the verified decision again:
// the host's form checks it once more and builds the final decision.
func answerOf(v Verified) form.Answer {
	d := v.Decision
	a := form.Answer{Message: d.Message, Approver: v.Approver}
	always := d.Persist == decision.PersistAlways
	switch {
	case d.Decision == decision.Allow && always:
		a.Choice = form.AllowAlways
	case d.Decision == decision.Allow:
		a.Choice = form.AllowOnce
	case always:
		a.Choice = form.DenyAlways
	default:
		a.Choice = form.DenyOnce
	}
	if d.Rule != nil {
		a.Grants, a.Scopes, a.WorkdirScope, a.Lifetime = d.Grants, d.Rule.Scopes, d.Rule.WorkdirScope, d.Rule.Lifetime
	}
	return a
}

// bridge is a running askperm-team bridge.
type bridge struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// started is closed once the request's line is written (or failed):
	// the end's line follows it, never mixed with it.
	started chan struct{}
	// events are the events read from the bridge's stdout, closed at its
	// end or at the first line that is not an event (err says which).
	events <-chan BridgeEvent
	err    error
	exited chan struct{}

	mu      sync.Mutex // warn, stopped
	warn    func(string)
	stopped bool
	stop    chan struct{} // closed by kill
}

// maxEvent bounds a line of the bridge: an answer and its key.
const maxEvent = 4 * MaxAnswer

// startBridge starts program's bridge on the request start, in a process
// group of its own, its stderr said on warn line by line.
func startBridge(program string, start BridgeStart, warn func(string)) (*bridge, error) {
	line, err := json.Marshal(start)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(program, "bridge")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	events := make(chan BridgeEvent)
	b := &bridge{cmd: cmd, stdin: stdin, started: make(chan struct{}), events: events, exited: make(chan struct{}),
		warn: warn, stop: make(chan struct{})}
	// The pipes are read to their end before Wait, which closes them.
	read := make(chan struct{}, 2)
	go func() {
		defer func() { read <- struct{}{} }()
		b.read(stdout, events)
		_, _ = io.Copy(io.Discard, stdout) // until the bridge ends or is killed
	}()
	go func() {
		defer func() { read <- struct{}{} }()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.say("team: askperm-team: " + form.Line(strings.TrimPrefix(sc.Text(), "askperm: ")))
		}
	}()
	go func() {
		<-read
		<-read
		_ = cmd.Wait()
		close(b.exited)
	}()
	// Written in the background, as the pipe takes it: a bridge that
	// never reads is killed when the wait ends, which ends the write.
	go func() {
		defer close(b.started)
		_, _ = stdin.Write(append(line, '\n'))
	}()
	return b, nil
}

// read sends the events of the bridge's stdout on events until the
// bridge is killed, its stdout ends, or a line is not an event; then it
// closes events.
func (b *bridge) read(stdout io.Reader, events chan<- BridgeEvent) {
	defer close(events)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, maxEvent)
	for sc.Scan() {
		var ev BridgeEvent
		if err := json.Unmarshal(sc.Bytes(), &ev, json.RejectUnknownMembers(true)); err != nil {
			b.err = fmt.Errorf("the bridge wrote %q, not an event", form.Line(string(sc.Bytes()[:min(len(sc.Bytes()), 80)])))
			return
		}
		select {
		case events <- ev:
		case <-b.stop:
			return
		}
	}
	b.err = sc.Err()
}

// say says s on warn, until the bridge is killed: what a bridge writes
// after its request ended is no one's concern.
func (b *bridge) say(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.warn(s)
	}
}

// gone says why the bridge's events ended: what it wrote, or its exit.
func (b *bridge) gone() error {
	if b.err != nil {
		return b.err
	}
	select {
	case <-b.exited:
		return fmt.Errorf("the bridge ended: %v", b.cmd.ProcessState)
	case <-time.After(doneBound):
		return errors.New("the bridge closed its stdout")
	}
}

// end tells the bridge how the request ended and gives it doneBound to
// record it; then the bridge's process group is killed.
func (b *bridge) end(d Done) {
	line, err := json.Marshal(d)
	if err == nil {
		written := make(chan struct{})
		go func() {
			<-b.started
			_, _ = b.stdin.Write(append(line, '\n'))
			close(written)
		}()
		timer := time.NewTimer(doneBound)
		defer timer.Stop()
		select {
		case <-written:
			_ = b.stdin.Close()
			select {
			case <-b.exited:
			case <-timer.C:
			}
		case <-timer.C:
		}
	}
	b.kill()
}

// kill kills the bridge's process group, and with it anything it started,
// unless the bridge was reaped already (its group id may be another's by
// now), and stops reading and saying what it writes. Again, it does
// nothing.
func (b *bridge) kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.stopped = true
	close(b.stop)
	select {
	case <-b.exited:
	default:
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = b.stdin.Close()
}

// ProgramName is the program team mode runs for its NATS side.
const ProgramName = "askperm-team"

// install is how to install askperm-team of askperm's own version.
func install() string {
	v := "latest"
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		v = bi.Main.Version
	}
	return "go install github.com/askperm/askperm/cmd/" + ProgramName + "@" + v
}

// FindProgram is the askperm-team program: configured, the path of
// [team] program (checked when config.toml was read), else the one
// beside askperm's own executable, else the first on PATH. A program
// found is one the user may trust as a configured one
// (userfile.Program), else refused with the reason: it runs outside any
// sandbox of the agent and, on an approver's machine, reads its key, so
// one planted in a directory others may write must never run.
func FindProgram(configured string) (string, error) {
	self, _ := os.Executable()
	return findProgram(configured, self, exec.LookPath, userfile.Program)
}

func findProgram(configured, self string, lookPath func(string) (string, error), trusted func(string) error) (string, error) {
	if configured != "" {
		return configured, nil
	}
	found := func(p, where string) (string, error) {
		if err := trusted(p); err != nil {
			return "", fmt.Errorf("%s %s refused, as anyone else may have written it: %w", ProgramName, where, err)
		}
		return p, nil
	}
	if self != "" {
		p := filepath.Join(filepath.Dir(self), ProgramName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return found(p, "beside askperm")
		}
	}
	if p, err := lookPath(ProgramName); err == nil {
		if p, err = filepath.Abs(p); err != nil {
			return "", err
		}
		return found(p, "on PATH")
	}
	return "", fmt.Errorf("%s is not installed beside askperm nor on PATH: %s", ProgramName, install())
}

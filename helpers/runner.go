// Package helpers is the caller's side of askperm's protocol: a Runner
// spawns any permission helper (askperm, or another that speaks the same
// protocol) for one request at a time and returns its decision, and every
// way that can go wrong is a deny carrying the reason:
//
//	r := &helpers.Runner{Argv: []string{"askperm"}, Timeout: time.Minute}
//	d, err := r.Ask(ctx, &decision.Request{Tool: "write_file", Action: "write"})
//	if d.Decision != decision.Allow {
//		// deny; err, when not nil, says why nobody allowed it
//	}
//
// The helper gets no shell: Argv is run as given. Its whole process group
// is killed at the deadline or when ctx ends, and reaped. A decision is
// returned only when the helper exited 0 with exactly one valid decision
// on stdout whose id and request_sha256 answer the request sent
// (decision.ParseDecision). The package imports nothing of askperm but
// its protocol.
package helpers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/askperm/askperm/decision"
)

// Defaults of a Runner's limits.
const (
	DefaultTimeout   = 300 * time.Second
	DefaultMaxOutput = 1 << 20
)

// killGrace is how long a helper may take to exit after SIGTERM before its
// process group is killed.
const killGrace = 500 * time.Millisecond

// Runner runs a permission helper, one request at a time.
type Runner struct {
	// Argv is the helper and its arguments, never a shell string; nil is
	// $ASKPERM_HELPER (one program) when set, else "askperm" on PATH.
	Argv []string
	// Timeout bounds one request; 0 is DefaultTimeout, never no limit.
	Timeout time.Duration
	// MaxOutput caps the helper's stdout; 0 is DefaultMaxOutput.
	MaxOutput int64
	// Env is the helper's environment; nil is this process's.
	Env []string
	// Stderr receives the helper's diagnostics; nil is os.Stderr.
	Stderr io.Writer

	mu   sync.Mutex
	busy bool
}

// ErrBusy means a request is already in flight on the runner.
var ErrBusy = errors.New("helpers: a request is already in flight on this runner")

// Ask sends req to the helper and returns its decision. The request's
// timeout is set from the runner's deadline (and ctx's), so that the helper
// answers first. On any failure the decision is a deny once with cause
// error and frontend none, its message the reason, and err says the same.
func (r *Runner) Ask(ctx context.Context, req *decision.Request) (decision.Decision, error) {
	r.mu.Lock()
	if r.busy {
		r.mu.Unlock()
		return refused(req, ErrBusy)
	}
	r.busy = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.busy = false
		r.mu.Unlock()
	}()

	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	withTimeout := *req
	secs := max(math.Floor(time.Until(deadline).Seconds()*1000)/1000, 0.001)
	withTimeout.Timeout = &secs
	in, sent, err := decision.EncodeRequest(&withTimeout)
	if err != nil {
		return refused(req, err)
	}
	out, err := r.run(ctx, in)
	if err != nil {
		return refused(sent, err)
	}
	d, err := decision.ParseDecision(out, sent)
	if err != nil {
		return refused(sent, fmt.Errorf("helpers: the helper's answer: %w", err))
	}
	return d, nil
}

// refused is the deny of a request nobody could answer, and why.
func refused(req *decision.Request, why error) (decision.Decision, error) {
	d := decision.Denied(req, decision.CauseError, decision.FrontendNone)
	d.Message = why.Error()
	return d, why
}

// argv is the helper to run.
func (r *Runner) argv() ([]string, error) {
	switch {
	case len(r.Argv) > 0:
		return r.Argv, nil
	case os.Getenv("ASKPERM_HELPER") != "":
		return []string{os.Getenv("ASKPERM_HELPER")}, nil
	}
	p, err := exec.LookPath("askperm")
	if err != nil {
		return nil, fmt.Errorf("helpers: no helper: %w", err)
	}
	return []string{p}, nil
}

// run runs the helper with in on its stdin and returns its stdout, an
// error unless it exited 0 within the deadline with at most MaxOutput
// bytes. Its process group is killed and it is reaped on every path.
//
// The helper's standard streams are pipes of ours, handed over as files,
// so that Wait returns when the helper exits whoever else holds them (a
// grandchild); the group is then killed, which ends them.
func (r *Runner) run(ctx context.Context, in []byte) ([]byte, error) {
	argv, err := r.argv()
	if err != nil {
		return nil, err
	}
	max := r.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stderr := r.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	var p pipes
	defer p.close()
	stdin, err := p.feed(in)
	if err != nil {
		return nil, err
	}
	stdout, out, err := p.collect(max)
	if err != nil {
		return nil, err
	}
	errFile, _, err := p.copyTo(stderr)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, errFile
	cmd.Env = r.Env
	// Its own process group, so that whatever it starts can be killed
	// with it: SIGTERM when ctx ends, SIGKILL after the grace.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	err = cmd.Start()
	p.closeChildEnds()
	if err != nil {
		return nil, fmt.Errorf("helpers: starting %s: %w", argv[0], err)
	}
	go func() {
		// An output over the cap kills the helper at once.
		if <-out.over {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	err = cmd.Wait()
	// Whatever the helper left in its group goes too. The group exists
	// while a member does, so its number cannot belong to anyone else.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if !p.drain(killGrace) {
		return nil, errors.New("helpers: the helper's streams were held open after it exited")
	}
	switch {
	case out.exceeded:
		return nil, fmt.Errorf("helpers: the helper wrote more than %d bytes", max)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("helpers: the helper did not answer in time: %w", context.Cause(ctx))
	case err != nil:
		return nil, fmt.Errorf("helpers: the helper failed: %w", err)
	}
	return out.buf.Bytes(), nil
}

// pipes are a helper's standard streams: the child's ends, handed over at
// start, and the goroutines that serve ours.
type pipes struct {
	child []*os.File // closed once the child has them
	ours  []*os.File // closed at the end, which stops a goroutine stuck on one
	done  []chan struct{}
}

func (p *pipes) pipe() (r, w *os.File, done chan struct{}, err error) {
	if r, w, err = os.Pipe(); err != nil {
		return nil, nil, nil, fmt.Errorf("helpers: %w", err)
	}
	done = make(chan struct{})
	p.done = append(p.done, done)
	return r, w, done, nil
}

// feed returns the child's stdin, from which it reads in.
func (p *pipes) feed(in []byte) (*os.File, error) {
	r, w, done, err := p.pipe()
	if err != nil {
		return nil, err
	}
	p.child, p.ours = append(p.child, r), append(p.ours, w)
	go func() {
		defer close(done)
		_, _ = w.Write(in)
		w.Close()
	}()
	return r, nil
}

// output is what a helper wrote on stdout, at most max bytes.
type output struct {
	buf      bytes.Buffer
	exceeded bool
	over     chan bool // true once when the cap is passed; false at the end
}

// collect returns the child's stdout and what it writes there.
func (p *pipes) collect(max int64) (*os.File, *output, error) {
	r, w, done, err := p.pipe()
	if err != nil {
		return nil, nil, err
	}
	p.child, p.ours = append(p.child, w), append(p.ours, r)
	out := &output{over: make(chan bool, 1)}
	go func() {
		defer close(done)
		n, _ := io.Copy(&out.buf, io.LimitReader(r, max+1))
		out.exceeded = n > max
		out.over <- out.exceeded
	}()
	return w, out, nil
}

// copyTo returns the child's stderr, copied to dst (a file is handed over
// as it is).
func (p *pipes) copyTo(dst io.Writer) (*os.File, chan struct{}, error) {
	if f, ok := dst.(*os.File); ok {
		return f, nil, nil
	}
	r, w, done, err := p.pipe()
	if err != nil {
		return nil, nil, err
	}
	p.child, p.ours = append(p.child, w), append(p.ours, r)
	go func() {
		defer close(done)
		_, _ = io.Copy(dst, r)
	}()
	return w, done, nil
}

func (p *pipes) closeChildEnds() {
	for _, f := range p.child {
		f.Close()
	}
	p.child = nil
}

// drain waits at most wait for the streams to end, and reports whether
// they did.
func (p *pipes) drain(wait time.Duration) bool {
	timeout := time.After(wait)
	for _, d := range p.done {
		select {
		case <-d:
		case <-timeout:
			return false
		}
	}
	return true
}

func (p *pipes) close() {
	p.closeChildEnds()
	for _, f := range p.ours {
		f.Close()
	}
	for _, d := range p.done {
		<-d
	}
}

package team

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/askperm/askperm/form"
)

// ErrNotSetUp is a team whose streams or buckets are missing.
var ErrNotSetUp = errors.New("the team's streams are not set up: run askperm-team setup once, with the set-up user's credentials")

// waitGrace is how long runTeam reads the command's output after it
// ended or was killed.
const waitGrace = 250 * time.Millisecond

// runTeam runs askperm-team's hidden command with in on its stdin and
// returns its stdout, at most max bytes, within ctx: past it, the
// command's process group is killed. Its stderr, trimmed to a line,
// is the error of a command that fails.
func runTeam(ctx context.Context, c Config, command string, in []byte, max int64) ([]byte, error) {
	program, err := FindProgram(c.Program)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, program, command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A descendant that left the group may hold stdout open: the pipes
	// are closed this long after the command ends or ctx does.
	cmd.WaitDelay = waitGrace
	cmd.Stdin = bytes.NewReader(in)
	var out capped
	out.max = max
	var stderr capped
	stderr.max = 4096
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", ProgramName, command, context.Cause(ctx))
		}
		if msg := strings.TrimSpace(stderr.buf.String()); msg != "" {
			msg = strings.TrimPrefix(strings.ReplaceAll(msg, "\n", "; "), "askperm: ")
			return nil, fmt.Errorf("%s %s: %s", ProgramName, command, form.Line(msg))
		}
		return nil, fmt.Errorf("%s %s: %w", ProgramName, command, err)
	}
	if out.over {
		return nil, fmt.Errorf("%s %s: more than %d bytes of output", ProgramName, command, max)
	}
	return out.buf.Bytes(), nil
}

// capped is a buffer that keeps the first max bytes written to it and
// says whether more came. It has no ReadFrom (bytes.Buffer's would
// bypass the cap).
type capped struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if left := c.max - int64(c.buf.Len()); int64(len(p)) > left {
		c.over = true
		c.buf.Write(p[:max(left, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

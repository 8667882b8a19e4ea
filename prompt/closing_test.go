package prompt

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

func TestClosingLine(t *testing.T) {
	req := &decision.Request{Server: "fs", Tool: "write_file", Action: "write",
		Dimensions: []decision.Dimension{{Name: "path", Value: "/tmp/x\x1b[2J"}}}
	f := form.New(req, form.Options{})
	const q = `write_file (fs) wants to write /tmp/x\e[2J` + "\n"
	for _, c := range []struct {
		a    form.Answer
		err  error
		want string
	}{
		{form.Answer{Choice: form.AllowOnce}, nil, "askperm: allowed once: " + q},
		{form.Answer{Choice: form.AllowSession}, nil, "askperm: allowed for this session: " + q},
		{form.Answer{Choice: form.AllowAlways}, nil, "askperm: allowed always: " + q},
		{form.Answer{Choice: form.DenyAlways}, nil, "askperm: denied always: " + q},
		{form.Answer{Choice: form.DenyOnce}, nil, "askperm: denied: " + q},
		{form.Answer{Choice: form.AllowOnce}, context.DeadlineExceeded, "askperm: denied: timed out: " + q},
		{form.Answer{}, fmt.Errorf("esc: %w", ErrCancelled), "askperm: denied: cancelled: " + q},
		{form.Answer{Choice: form.AllowOnce}, errors.New("tty gone"), "askperm: denied: error: " + q},
	} {
		if got := ClosingLine(f, c.a, c.err); got != c.want {
			t.Errorf("ClosingLine(%v, %v) = %q, want %q", c.a.Choice, c.err, got, c.want)
		}
	}
}

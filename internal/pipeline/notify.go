package pipeline

import (
	"context"
	"sync"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/notify"
)

// notifying arms the notification of c's question while the frontend
// chain asks (package notify): the first frontend to put the form before
// a person (c.opened) starts it, once, with the deadline of ctx; a
// request nobody is asked about notifies nobody. The func returned ends
// it when the answer is in, killing the program if it still runs,
// without waiting for it.
func (p *Pipeline) notifying(ctx context.Context, c *call) (end func()) {
	if p.c.Notify == nil {
		return func() {}
	}
	deadline, _ := ctx.Deadline()
	var once sync.Once
	stop := func() {}
	c.notify = func(by decision.Frontend) {
		once.Do(func() {
			// The terminal frontends ask elsewhere than on the caller's
			// terminal when another is named (the pane, --tty).
			tty := p.c.Prompt.TTY
			prog := p.c.Notify.For(by, tty != "" && tty != "/dev/tty", p.c.Prompt.Env)
			if prog == nil {
				return
			}
			n := notify.Notice{Headline: c.form.Headline(), Host: p.c.Notify.Host, Deadline: deadline, Frontend: by}
			stop = notify.Start(prog, n, p.c.Prompt.Env, p.c.Warn)
		})
	}
	return func() {
		once.Do(func() {}) // a start under way ends first; none comes after
		stop()
	}
}

// opened is the form's Opened: a frontend put c's form before a person.
func (c *call) opened(by decision.Frontend) {
	if c.notify != nil {
		c.notify(by)
	}
}

package prompt

import (
	"context"
	"testing"
	"testing/quick"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// A zero Options is armed: a program embedding a frontend that sets no
// delay still drops keys typed ahead of the question.
func TestZeroOptionsKeepArming(t *testing.T) {
	if got := (Options{}).Arming(); got != DefaultArmDelay {
		t.Errorf("zero Options arm after %v, want %v", got, DefaultArmDelay)
	}
	if got := (Options{ArmDelay: NoArmDelay}).Arming(); got != 0 {
		t.Errorf("NoArmDelay arms after %v, want none", got)
	}
}

// Every delay set is kept, every negative one turns arming off, and no
// setting yields a negative delay.
func TestArmingProperty(t *testing.T) {
	f := func(d time.Duration) bool {
		got := Options{ArmDelay: d}.Arming()
		switch {
		case d > 0:
			return got == d
		case d < 0:
			return got == 0
		}
		return got == DefaultArmDelay
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

// A question asked without a deadline still ends: Bounded gives it
// DefaultTimeout, and keeps a caller's own deadline, shorter or longer.
func TestBoundedWithoutDeadline(t *testing.T) {
	before := time.Now()
	ctx, cancel := Bounded(context.Background())
	defer cancel()
	at, ok := ctx.Deadline()
	if !ok || at.Before(before.Add(DefaultTimeout)) || at.After(time.Now().Add(DefaultTimeout)) {
		t.Errorf("no deadline given: got %v, %v, want %v from now", at, ok, DefaultTimeout)
	}
	for _, d := range []time.Duration{time.Second, 2 * DefaultTimeout} {
		own, cancel := context.WithTimeout(context.Background(), d)
		want, _ := own.Deadline()
		ctx, stop := Bounded(own)
		if got, _ := ctx.Deadline(); !got.Equal(want) {
			t.Errorf("a caller's deadline %v from now became %v", d, got)
		}
		stop()
		cancel()
	}
}

// deadlineSeen is a frontend that reports the deadline it was asked under.
type deadlineSeen struct{ at *time.Time }

func (deadlineSeen) Name() decision.Frontend { return decision.FrontendLine }

func (d deadlineSeen) Ask(ctx context.Context, _ *form.Form) (form.Answer, error) {
	*d.at, _ = ctx.Deadline()
	return form.Answer{}, ErrCancelled
}

// The chain asks a caller's question that has no deadline under
// DefaultTimeout: no frontend waits for ever.
func TestAskWithoutDeadlineEnds(t *testing.T) {
	var at time.Time
	before := time.Now()
	_, _, _ = Ask(context.Background(), []Frontend{deadlineSeen{&at}}, form.New(&decision.Request{Action: "x"}, form.Options{}))
	if at.IsZero() || at.Before(before.Add(DefaultTimeout)) {
		t.Errorf("the frontend was asked with deadline %v, want %v from now", at, DefaultTimeout)
	}
}

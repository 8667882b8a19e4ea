package prompt

import (
	"context"
	"testing"
	"testing/quick"
	"time"
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

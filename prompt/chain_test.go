package prompt

import (
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

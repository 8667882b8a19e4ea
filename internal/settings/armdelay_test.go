package settings

import (
	"testing"
	"time"

	"github.com/askperm/askperm/prompt"
)

// arm_delay = "0s" turns the delay off, which a zero prompt.Options (the
// default delay) would not; any other value is the delay.
func TestArmDelayZeroTurnsItOff(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		want time.Duration
	}{
		{"arm_delay = \"0s\"\n", 0},
		{"arm_delay = 0\n", 0},
		{"arm_delay = \"250ms\"\n", 250 * time.Millisecond},
		{"", prompt.DefaultArmDelay},
	} {
		getenv, _ := env(t, tc.cfg)
		s, err := Resolve(Flags{}, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Prompt.Arming(); got != tc.want {
			t.Errorf("%q: arms after %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

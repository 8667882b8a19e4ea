package settings

import (
	"testing"
	"time"
)

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30s": 30 * time.Second, "5m": 5 * time.Minute, "1.5": 1500 * time.Millisecond,
		"10": 10 * time.Second, "0": DefaultTimeout, "0s": DefaultTimeout,
	} {
		if got, err := ParseTimeout(in); err != nil || got != want {
			t.Errorf("%q: got %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "soon", "-1", "-5s", "1e30", "NaN"} {
		if got, err := ParseTimeout(in); err == nil {
			t.Errorf("%q: accepted as %v", in, got)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "65536": 65536, "64KiB": 64 << 10, "1MiB": 1 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%q: got %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0", "-1", "1GB", "1 MiB", "MiB", "2000000MiB", "1.5MiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("%q: accepted as %d", in, got)
		}
	}
}

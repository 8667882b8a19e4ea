package settings

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration ("30s", "5m") or a bare number of
// seconds, and refuses negative ones.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(secs) {
			return 0, fmt.Errorf("%q is neither a duration (30s, 5m) nor a number of seconds", s)
		}
		if secs > (1<<63-1)/float64(time.Second) {
			return 0, fmt.Errorf("%q is too long", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// ParseTimeout reads a timeout as ParseDuration does; 0 means the default,
// never "no timeout".
func ParseTimeout(s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err == nil && d == 0 {
		d = DefaultTimeout
	}
	return d, err
}

// ParseSize reads a positive byte count, optionally with a KiB or MiB
// suffix.
func ParseSize(s string) (int64, error) {
	num, unit := s, int64(1)
	for suffix, mult := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			num, unit = n, mult
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive byte count (e.g. 65536, 64KiB, 1MiB)", s)
	}
	if n > (1<<40)/unit {
		return 0, errors.New("larger than 1 TiB")
	}
	return n * unit, nil
}

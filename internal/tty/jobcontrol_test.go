//go:build linux && (amd64 || arm64)

package tty

import (
	"sync"
	"testing"
)

// handler is the current handler of jobControl[i].
func handler(i int) uintptr {
	var old sigaction
	setSigaction(jobControl[i], nil, &old)
	return old.handler
}

// Job-control signals are ignored while any prompt holds them, and put
// back as they were when the last one lets go, so that a long-running
// process can be suspended again between prompts.
func TestHoldJobControl(t *testing.T) {
	for i := range jobControl {
		if h := handler(i); h != 0 {
			t.Fatalf("%v: handler %d before, want the default", jobControl[i], h)
		}
	}
	var wg sync.WaitGroup
	releases := make(chan func(), 8)
	for range 8 {
		wg.Go(func() { releases <- HoldJobControl() })
	}
	wg.Wait()
	close(releases)
	n := 0
	for release := range releases {
		for i := range jobControl {
			if h := handler(i); h != sigIgn {
				t.Fatalf("%v: handler %d while held, want SIG_IGN", jobControl[i], h)
			}
		}
		release()
		release() // twice is once
		n++
	}
	for i := range jobControl {
		if h := handler(i); h != 0 {
			t.Errorf("%v: handler %d after %d releases, want the default", jobControl[i], h, n)
		}
	}
}

//go:build linux && (amd64 || arm64)

package tty

import (
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A prompt that reads in canonical mode must not be stopped by Ctrl-Z
// (SIGTSTP), and a read or write from the background must fail with EIO,
// and so cancel, rather than stop the process (SIGTTIN, SIGTTOU). The
// kernel does that for ignored signals only; a caught one makes it retry
// the read forever. os/signal can ignore them, but never puts back their
// default afterwards, which would leave a long-running process (a gate)
// that cannot be suspended. So the dispositions are set and restored here
// directly, held while any prompt of the process reads. The Go runtime
// installs no handler for these three unless os/signal asks it to, which
// askperm never does.

var jobControl = []syscall.Signal{unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU}

var held struct {
	sync.Mutex
	count int
	saved []sigaction
}

// HoldJobControl ignores SIGTSTP, SIGTTIN and SIGTTOU until every returned
// release has been called, then restores what they were.
func HoldJobControl() (release func()) {
	held.Lock()
	defer held.Unlock()
	if held.count == 0 {
		held.saved = make([]sigaction, len(jobControl))
		ignore := sigaction{handler: sigIgn}
		for i, sig := range jobControl {
			setSigaction(sig, &ignore, &held.saved[i])
		}
	}
	held.count++
	var once sync.Once
	return func() { once.Do(releaseJobControl) }
}

func releaseJobControl() {
	held.Lock()
	defer held.Unlock()
	if held.count--; held.count == 0 {
		for i, sig := range jobControl {
			setSigaction(sig, &held.saved[i], nil)
		}
	}
}

// sigaction is the kernel's struct sigaction for rt_sigaction on amd64
// and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

const sigIgn = 1 // SIG_IGN

// setSigaction sets sig's action to act, saving the old one in old when
// not nil. Neither can fail for these signals and valid pointers.
func setSigaction(sig syscall.Signal, act, old *sigaction) {
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), unsafe.Sizeof(act.mask), 0, 0)
}

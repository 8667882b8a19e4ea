//go:build !(linux && (amd64 || arm64))

package tty

import (
	"os/signal"
	"syscall"
)

// HoldJobControl ignores SIGTSTP, SIGTTIN and SIGTTOU. Where askperm does
// not know the kernel's struct sigaction, it uses os/signal, which cannot
// restore them: they stay ignored for the rest of the process.
func HoldJobControl() (release func()) {
	signal.Ignore(syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	return func() {}
}

// Package tty opens the terminal a prompt runs on and guards it: the
// foreground check, typeahead flushing, and job-control signals held off
// while a prompt reads. The terminal frontends (prompt/tui, prompt/line)
// share it.
package tty

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Default is the controlling terminal.
const Default = "/dev/tty"

// Open opens the terminal a prompt runs on, read-write, for input and
// output alike. It fails when there is no such terminal
// (ENXIO without a controlling terminal), when path is not a terminal, or
// when the terminal is our controlling one but we are not in its foreground
// process group (reading or changing modes there would stop the process
// with SIGTTIN/SIGTTOU and hang it), and when it is another terminal with a
// program in its foreground that could read the keys meant for askperm (a
// shell at its prompt; a Holder reads nothing). Every error means no
// prompt can run on path: the frontends report it as unavailable.
func Open(path string) (*os.File, error) {
	if path == "" {
		path = Default
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tty := os.NewFile(uintptr(fd), path)
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		tty.Close()
		return nil, fmt.Errorf("%s: not a terminal", path)
	}
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	switch {
	case errors.Is(err, syscall.ENOTTY):
		// Not our controlling terminal (--tty naming another pane): job
		// control does not apply to us there, but a program in its
		// foreground would read half of the person's keys.
		if err := checkNoReader(path, fd); err != nil {
			tty.Close()
			return nil, err
		}
	case err != nil:
		tty.Close()
		return nil, fmt.Errorf("%s: foreground process group: %w", path, err)
	case fg != unix.Getpgrp():
		tty.Close()
		return nil, fmt.Errorf("%s: not in the terminal's foreground process group", path)
	}
	return tty, nil
}

// Flush discards typeahead: keys typed before the prompt was shown
// must never answer it.
func Flush(tty *os.File) error {
	return unix.IoctlSetInt(int(tty.Fd()), unix.TCFLSH, unix.TCIFLUSH)
}

package tty

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Holder is the program a pane kept for approvals runs in its foreground:
// it never reads the terminal, so every key typed there reaches askperm.
const Holder = "sleep"

// foregroundReader finds a process, other than this one, in the
// foreground of the terminal with device number rdev that may read keys
// typed there (a shell at its prompt, an editor): every process in the
// terminal's foreground process group but a Holder or a pane. It reads
// /proc.
func foregroundReader(rdev uint64) (comm string, pid int, found bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		st, ok := parseStat(b)
		if !ok || st.pid == self || !sameTTY(st.ttyNr, rdev) || st.tpgid <= 0 || st.pgrp != st.tpgid {
			continue
		}
		if st.comm != Holder && st.comm != PaneName {
			return st.comm, st.pid, true
		}
	}
	return "", 0, false
}

// procStat holds the fields of /proc/PID/stat that say whether a process
// is in the foreground of its controlling terminal.
type procStat struct {
	pid, pgrp, ttyNr, tpgid int
	comm                    string
}

// parseStat reads /proc/PID/stat: "pid (comm) state ppid pgrp session
// tty_nr tpgid ...". The command name may hold spaces and parentheses, so
// it ends at the last ')'.
func parseStat(b []byte) (procStat, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 6 {
		return procStat{}, false
	}
	var st procStat
	st.comm = string(b[open+1 : end])
	var err error
	for _, v := range []struct {
		dst *int
		s   []byte
	}{{&st.pid, bytes.TrimSpace(b[:open])}, {&st.pgrp, f[2]}, {&st.ttyNr, f[4]}, {&st.tpgid, f[5]}} {
		if *v.dst, err = strconv.Atoi(string(v.s)); err != nil {
			return procStat{}, false
		}
	}
	return st, true
}

// sameTTY reports whether a tty_nr of /proc/PID/stat names the device rdev.
func sameTTY(ttyNr int, rdev uint64) bool {
	major := uint32(ttyNr>>8) & 0xfff
	minor := uint32(ttyNr&0xff) | uint32(ttyNr>>12)&0xfff00
	return ttyNr != 0 && major == unix.Major(rdev) && minor == unix.Minor(rdev)
}

// checkNoReader refuses a terminal that is not ours when another program
// in its foreground could read the keys meant for askperm.
func checkNoReader(path string, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if comm, pid, found := foregroundReader(st.Rdev); found {
		return fmt.Errorf("%s: %q (pid %d) is in the terminal's foreground and would read keys meant for askperm; keep a pane for approvals by running `%s infinity` in it", path, comm, pid, Holder)
	}
	return nil
}

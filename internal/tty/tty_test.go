package tty

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/askperm/askperm/internal/ptytest"
)

// A terminal that is not ours is refused while a program that could read
// it is in its foreground, and taken when only a holder is, or nobody.
func TestOpenRefusesATerminalWithAReader(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		ok   bool
	}{
		{nil, true},
		{[]string{"sleep", "30"}, true},
		{[]string{"sh", "-c", "read x"}, false},
		{[]string{"cat"}, false},
	} {
		_, path := ptytest.Foreground(t, tc.argv...)
		f, err := Open(path)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%v: refused: %v", tc.argv, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), `"`+tc.argv[0]+`"`) || !strings.Contains(err.Error(), "sleep infinity")):
			t.Errorf("%v: got %v, want unavailable naming the program and the way out", tc.argv, err)
		}
		if f != nil {
			f.Close()
		}
	}
}

func TestParseStat(t *testing.T) {
	st, ok := parseStat([]byte("4242 (a (b) c) S 1 4242 4242 34817 4242 4194560 ..."))
	if !ok || st.pid != 4242 || st.comm != "a (b) c" || st.pgrp != 4242 || st.ttyNr != 34817 || st.tpgid != 4242 {
		t.Errorf("got %+v, %v", st, ok)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1", "x (y) S 1 2 3 4 5"} {
		if _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	// /dev/pts/1 is major 136, minor 1: tty_nr 34817.
	if !sameTTY(34817, unix.Mkdev(136, 1)) || sameTTY(34817, unix.Mkdev(136, 2)) || sameTTY(0, 0) {
		t.Error("sameTTY")
	}
}

package tty

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// PaneName is the process name askperm pane takes: like a Holder, it never
// reads its terminal, so a helper asking there does not take it for a
// reader of the person's keys.
const PaneName = "askperm-pane"

// paneFile is where a pane announces itself, in the state directory.
const paneFile = "pane.json"

// Pane is a pane's announcement: its process and its terminal.
type Pane struct {
	PID int    `json:"pid"`
	TTY string `json:"tty"`
}

// ControllingPath is the path of this process's controlling terminal,
// found by its device number among /dev/pts and /dev/tty*.
func ControllingPath() (string, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return "", err
	}
	st, ok := parseStat(b)
	if !ok || st.ttyNr == 0 {
		return "", errors.New("no controlling terminal")
	}
	pts, _ := filepath.Glob("/dev/pts/[0-9]*")
	ttys, _ := filepath.Glob("/dev/tty[0-9A-Za-z]*")
	for _, p := range append(pts, ttys...) {
		var s unix.Stat_t
		if unix.Stat(p, &s) == nil && s.Mode&unix.S_IFMT == unix.S_IFCHR && sameTTY(st.ttyNr, s.Rdev) {
			return p, nil
		}
	}
	return "", errors.New("the controlling terminal has no device file")
}

// AnnouncePane names this process PaneName and announces it in dir as the
// pane kept for approvals on the terminal path. release withdraws the
// announcement, unless another pane has replaced it meanwhile.
func AnnouncePane(dir, path string) (release func(), err error) {
	if err := os.WriteFile("/proc/self/comm", []byte(PaneName), 0); err != nil {
		return nil, fmt.Errorf("naming the process: %w", err)
	}
	b, _ := json.Marshal(Pane{PID: os.Getpid(), TTY: path})
	tmp := filepath.Join(dir, paneFile+"."+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, paneFile)
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() {
		if p, ok := readPane(file); ok && p.PID == os.Getpid() {
			os.Remove(file)
		}
	}, nil
}

// FindPane is the pane announced in dir, when one is still running
// there: its process alive, named PaneName, with that
// terminal as its controlling one, which is owned by this user.
func FindPane(dir string) (Pane, bool) {
	p, ok := Announced(dir)
	if !ok {
		return Pane{}, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/stat")
	if err != nil {
		return Pane{}, false
	}
	st, ok := parseStat(b)
	var s unix.Stat_t
	if !ok || st.comm != PaneName || unix.Stat(p.TTY, &s) != nil || s.Uid != uint32(os.Getuid()) || !sameTTY(st.ttyNr, s.Rdev) {
		return Pane{}, false
	}
	return p, true
}

// Announced is the announcement in dir, whether or not its process still
// runs: a running pane reads it to see that it is still the one announced.
func Announced(dir string) (Pane, bool) { return readPane(filepath.Join(dir, paneFile)) }

// readPane reads an announcement that only this user could have written.
func readPane(file string) (Pane, bool) {
	var p Pane
	f, err := os.Open(file)
	if err != nil {
		return p, false
	}
	defer f.Close()
	var s unix.Stat_t
	if unix.Fstat(int(f.Fd()), &s) != nil || s.Uid != uint32(os.Getuid()) || s.Mode&0o022 != 0 {
		return p, false
	}
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	return p, json.Unmarshal(b[:n], &p) == nil && p.PID > 0 && filepath.IsAbs(p.TTY)
}

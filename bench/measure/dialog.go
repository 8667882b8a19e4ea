package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askperm/askperm/internal/xvfb"
)

// xServer is a private Xvfb and a connection to it that sees every
// top-level window mapped or destroyed (SubstructureNotify on the root).
type xServer struct {
	*xvfb.Server
	conn   net.Conn
	events chan xEvent
}

// xEvent is a MapNotify or DestroyNotify of a child of the root, and when
// it arrived.
type xEvent struct {
	mapped bool // else destroyed
	window uint32
	at     time.Time
}

// startX starts Xvfb (internal/xvfb) and subscribes to the root window's
// structure events.
func startX() (*xServer, error) {
	s, err := xvfb.Start()
	if err != nil {
		return nil, err
	}
	x := &xServer{Server: s, events: make(chan xEvent, 64)}
	if err := x.subscribe(); err != nil {
		x.stop()
		return nil, err
	}
	return x, nil
}

func (x *xServer) stop() {
	if x.conn != nil {
		x.conn.Close()
	}
	x.Stop()
}

// subscribe speaks just enough X11: the connection setup (no
// authorisation: the server was started without), then
// ChangeWindowAttributes(root, event-mask = SubstructureNotify).
func (x *xServer) subscribe() error {
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if x.conn, err = net.Dial("unix", "/tmp/.X11-unix/X"+x.Display[1:]); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if _, err := x.conn.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		return err
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(x.conn, head); err != nil {
		return err
	}
	data := make([]byte, 4*int(le.Uint16(head[6:])))
	if _, err := io.ReadFull(x.conn, data); err != nil {
		return err
	}
	if head[0] != 1 {
		return errors.New("the X server refused the connection")
	}
	vendor := (int(le.Uint16(data[16:])) + 3) &^ 3
	root := le.Uint32(data[32+vendor+8*int(data[21]):])
	req := make([]byte, 16)
	req[0] = 2 // ChangeWindowAttributes
	le.PutUint16(req[2:], 4)
	le.PutUint32(req[4:], root)
	le.PutUint32(req[8:], 0x800)    // CWEventMask
	le.PutUint32(req[12:], 0x80000) // SubstructureNotifyMask
	if _, err := x.conn.Write(req); err != nil {
		return err
	}
	go func() {
		ev := make([]byte, 32)
		for {
			if _, err := io.ReadFull(x.conn, ev); err != nil {
				close(x.events)
				return
			}
			at := time.Now()
			switch ev[0] & 0x7f {
			case 19: // MapNotify
				if ev[12] == 0 { // not override-redirect: a real top-level
					x.events <- xEvent{true, le.Uint32(ev[8:]), at}
				}
			case 17: // DestroyNotify
				x.events <- xEvent{false, le.Uint32(ev[8:]), at}
			}
		}
	}()
	return nil
}

// drain forgets the events seen so far.
func (x *xServer) drain() {
	for {
		select {
		case <-x.events:
		default:
			return
		}
	}
}

// window runs cmd (already set up) and returns the time from its spawn to
// its first top-level window being mapped; before returning it calls
// mapped (with the process still running), then kills the process group
// and waits for the window to be destroyed.
func (x *xServer) window(cmd *exec.Cmd, mapped func(pid int)) (time.Duration, error) {
	x.drain()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	timeout := time.After(15 * time.Second)
	for {
		select {
		case e, ok := <-x.events:
			if !ok {
				kill()
				return 0, errors.New("the X connection closed")
			}
			if !e.mapped {
				continue
			}
			d := e.at.Sub(start)
			if mapped != nil {
				mapped(cmd.Process.Pid)
			}
			kill()
			gone := time.After(3 * time.Second)
		wait:
			for {
				select {
				case g := <-x.events:
					if !g.mapped && g.window == e.window {
						break wait
					}
				case <-gone:
					break wait
				}
			}
			return d, nil
		case err := <-done:
			done <- err
			kill()
			return 0, fmt.Errorf("%s exited (%v) before a window appeared", filepath.Base(cmd.Path), err)
		case <-timeout:
			kill()
			return 0, errors.New("no window in 15 s")
		}
	}
}

// childArgv is the command line of pid's first child process.
func childArgv(pid int) []string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		_, rest, ok := bytes.Cut(b, []byte(") "))
		f := strings.Fields(string(rest))
		if !ok || len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(filepath.Dir(s), "cmdline"))
		if err == nil && len(cmdline) > 0 {
			return strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		}
	}
	return nil
}

// stubName is the name under which the measuring program stands in for a
// dialog program: it notes when it started, and exits.
const stubName = "dialog-stub"

// stubMain notes the time (Unix nanoseconds) in the file "started" beside
// the stub, and exits with 1 (a dialog that failed: askperm denies).
func stubMain() {
	now := time.Now().UnixNano()
	os.WriteFile(filepath.Join(filepath.Dir(os.Args[0]), "started"), strconv.AppendInt(nil, now, 10), 0o600)
	os.Exit(1)
}

// stubStart runs cmd, waits for it, and returns the time from the spawn to
// the start of the stub in dir.
func stubStart(cmd *exec.Cmd, dir string) (time.Duration, error) {
	started := filepath.Join(dir, "started")
	os.Remove(started)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	cmd.Run() // both end in failure: the stub exits 1, askperm denies
	b, err := os.ReadFile(started)
	if err != nil {
		return 0, fmt.Errorf("%s did not run the stub dialog: %s", filepath.Base(cmd.Path), firstLine(stderr.String()))
	}
	ns, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Unix(0, ns).Sub(start), nil
}

// dialogStart measures askperm's own part of a dialog's delay: from its
// spawn to the start of the dialog program, here a stub (this program)
// that notes when it started, against the stub spawned directly. A
// window's appearance varies by tens of milliseconds from run to run; this
// isolates what askperm adds before the program starts. The stub lives
// in a directory of the user's cache: askperm runs only dialog programs
// in directories no one else may write, which excludes /tmp.
func dialogStart(display string) {
	const what = "a desktop dialog: askperm's time before the dialog program starts (a stub that notes its start) vs the stub spawned directly"
	cache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		skip(what, "no cache directory for the stub: "+err.Error())
		return
	}
	dir, err := os.MkdirTemp(cache, "askperm-bench")
	if err != nil {
		skip(what, err.Error())
		return
	}
	defer os.RemoveAll(dir)
	stub := filepath.Join(dir, stubName)
	self, err := os.Executable()
	if err == nil {
		err = copyFile(self, stub)
	}
	if err != nil {
		skip(what, "copying the stub: "+err.Error())
		return
	}
	home := newHome()
	config := filepath.Join(home, "config", "askperm")
	if err := os.MkdirAll(config, 0o700); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(config, "config.toml"), []byte(fmt.Sprintf("[dialogs]\nyad = %q\n", stub)), 0o600); err != nil {
		panic(err)
	}
	environ := env(home, "DISPLAY="+display)
	a := func(i int) (time.Duration, error) {
		cmd := exec.Command(*askperm, "--frontend", "yad", "--timeout", "60s")
		cmd.Stdin = bytes.NewReader(request(withSession(fmt.Sprintf("stub-%d", i))))
		cmd.Env = environ
		return stubStart(cmd, dir)
	}
	b := func(int) (time.Duration, error) {
		cmd := exec.Command(stub, "--text-info")
		cmd.Env = environ
		return stubStart(cmd, dir)
	}
	da, db, err := pair(*runs, a, b)
	if err != nil {
		skip(what, "failed: "+err.Error())
		return
	}
	add(row{what, ms(da), ms(db) + " (the stub)", fmt.Sprintf("+%.2f ms", float64(da-db)/1e6), "≤ +3 ms", yes(da-db <= 3*time.Millisecond)})
}

// copyFile copies the executable from to the new file to.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o700)
}

// dialogs: section 3.
func dialogs() {
	const what = "a desktop dialog's window appearing under Xvfb"
	for _, p := range []string{"Xvfb", "yad", "zenity"} {
		if _, err := exec.LookPath(p); err != nil {
			skip(what, p+" is not installed (Debian packages xvfb, yad, zenity)")
			return
		}
	}
	x, err := startX()
	if err != nil {
		skip(what, "Xvfb: "+err.Error())
		return
	}
	defer x.stop()
	home := newHome()
	environ := env(home, "DISPLAY="+x.Display)
	text := request(nil) // what the bare viewer shows: about the size of askperm's text
	dialogStart(x.Display)
	for _, program := range []string{"yad", "zenity"} {
		what := fmt.Sprintf("a desktop dialog's window appearing under Xvfb: `--frontend %s` vs bare %s (text-info)", program, program)
		var argv []string
		a := func(i int) (time.Duration, error) {
			cmd := exec.Command(*askperm, "--frontend", program, "--timeout", "60s")
			cmd.Stdin = bytes.NewReader(request(withSession(fmt.Sprintf("dialog-%s-%d", program, i))))
			cmd.Env = environ
			return x.window(cmd, func(pid int) {
				if argv == nil {
					if argv = childArgv(pid); argv != nil {
						fmt.Fprintf(os.Stderr, "  the dialog askperm runs: %q\n", argv)
					}
				}
			})
		}
		b := func(int) (time.Duration, error) {
			if argv == nil {
				return 0, errors.New("the dialog askperm ran was not found")
			}
			r, w, err := os.Pipe()
			if err != nil {
				return 0, err
			}
			go func() { w.Write(text); w.Close() }()
			defer r.Close()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.ExtraFiles = []*os.File{r} // fd 3: --filename=/dev/fd/3
			cmd.Env, cmd.Dir = environ, "/"
			return x.window(cmd, nil)
		}
		da, db, err := pair(*runs, a, b)
		if err != nil {
			skip(what, "failed: "+err.Error())
			continue
		}
		add(row{what, ms(da), ms(db) + " (bare " + program + ")", fmt.Sprintf("+%.2f ms", float64(da-db)/1e6), "≤ +3 ms", yes(da-db <= 3*time.Millisecond)})
	}
}

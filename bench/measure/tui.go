package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// queries are the terminal queries a terminal emulator answers, and what
// an answering pty replies (an 80x24 xterm with a dark background).
var queries = []struct {
	re    *regexp.Regexp
	reply func(m [][]byte) string
}{
	{regexp.MustCompile(`\x1b\[6n`), func([][]byte) string { return "\x1b[1;1R" }},       // DSR: cursor position
	{regexp.MustCompile(`\x1b\[\?6n`), func([][]byte) string { return "\x1b[?1;1R" }},    // DECXCPR
	{regexp.MustCompile(`\x1b\[0?c`), func([][]byte) string { return "\x1b[?62;22c" }},   // DA1
	{regexp.MustCompile(`\x1b\[>0?c`), func([][]byte) string { return "\x1b[>1;10;0c" }}, // DA2
	{regexp.MustCompile(`\x1b\](1[012]);\?(?:\x07|\x1b\\)`), func(m [][]byte) string { // OSC 10/11/12 colours
		colour := map[string]string{"10": "ffff/ffff/ffff", "11": "0000/0000/0000", "12": "ffff/ffff/ffff"}[string(m[1])]
		return "\x1b]" + string(m[1]) + ";rgb:" + colour + "\x1b\\"
	}},
	{regexp.MustCompile(`\x1b\]4;(\d+);\?(?:\x07|\x1b\\)`), func(m [][]byte) string { // OSC 4 palette
		return "\x1b]4;" + string(m[1]) + ";rgb:8080/8080/8080\x1b\\"
	}},
	{regexp.MustCompile(`\x1b\[\?(\d+)\$p`), func(m [][]byte) string { return "\x1b[?" + string(m[1]) + ";2$y" }}, // DECRQM
	{regexp.MustCompile(`\x1b\[\?u`), func([][]byte) string { return "\x1b[?0u" }},                                // kitty keyboard flags
	{regexp.MustCompile(`\x1b\[>0?q`), func([][]byte) string { return "\x1bP>|xterm(390)\x1b\\" }},                // XTVERSION
	{regexp.MustCompile(`\x1b\[18t`), func([][]byte) string { return "\x1b[8;24;80t" }},                           // text area size
}

// ptyRun spawns a program on a fresh 80x24 pty as its controlling
// terminal and returns the time from the spawn to the first output for
// which frame is true. With answer, the pty answers terminal queries as a
// terminal emulator does; without, it answers none.
func ptyRun(argv, environ []string, stdin []byte, ttyStdio, answer bool, frame func(text string) bool) (time.Duration, error) {
	ptm, pts, err := pty.Open()
	if err != nil {
		return 0, err
	}
	defer ptm.Close()
	defer pts.Close()
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		return 0, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = environ
	var out, stderr bytes.Buffer
	if ttyStdio {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	} else {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &out, &stderr
	}
	cmd.ExtraFiles = []*os.File{pts} // fd 3 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	seen := make(chan time.Duration, 1)
	var mu sync.Mutex
	var raw []byte
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}()
	go func() {
		buf := make([]byte, 1<<16)
		scanned, found := 0, false
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				mu.Lock()
				raw = append(raw, buf[:n]...)
				if answer {
					scanned = reply(ptm, raw, scanned)
				}
				if !found && frame(ansi.Strip(string(raw))) {
					found = true
					seen <- time.Since(start)
				}
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case d := <-seen:
		return d, nil
	case err := <-done:
		done <- err
		mu.Lock()
		defer mu.Unlock()
		return 0, fmt.Errorf("%s exited (%v) before its first frame: %s %q", argv[0], err, firstLine(stderr.String()), ansi.Strip(string(raw)))
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		return 0, fmt.Errorf("no first frame in 10 s: %q", ansi.Strip(string(raw)))
	}
}

// reply answers the queries in raw after scanned and returns how far it
// has looked: a query cut in two by a read is found whole on the next.
func reply(ptm *os.File, raw []byte, scanned int) int {
	last := scanned
	for _, q := range queries {
		for _, m := range q.re.FindAllSubmatchIndex(raw[scanned:], -1) {
			groups := make([][]byte, len(m)/2)
			for g := range groups {
				if m[2*g] >= 0 {
					groups[g] = raw[scanned+m[2*g] : scanned+m[2*g+1]]
				}
			}
			ptm.WriteString(q.reply(groups))
			last = max(last, scanned+m[1])
		}
	}
	return max(last, len(raw)-32)
}

var countdown = regexp.MustCompile(`\d+:\d\d left`)

// tuiFrame: section 2.
func tuiFrame() {
	home := newHome()
	askFrame := func(t string) bool { return strings.Contains(t, "Deny once") && countdown.MatchString(t) }
	gumFrame := func(t string) bool {
		return strings.Contains(t, "Proceed?") && strings.Contains(t, "Yes") && strings.Contains(t, "No")
	}
	for _, answer := range []bool{true, false} {
		what := "the terminal UI's first complete frame on a pty answering terminal queries"
		if !answer {
			what = "the terminal UI's first complete frame on a pty answering no queries"
		}
		// Each run in a session of its own: runs that reach a person count
		// towards the session's prompt rate limit.
		a := func(i int) (time.Duration, error) {
			req := request(withSession(fmt.Sprintf("tui-%v-%d", answer, i)))
			return ptyRun([]string{*askperm, "--frontend", "tui", "--timeout", "20s"}, env(home, "TERM=xterm-256color"), req, false, answer, askFrame)
		}
		if *gum == "" {
			var ds []time.Duration
			for i := -1; i < *runs; i++ {
				d, err := a(i)
				if err != nil {
					skip(what, "failed: "+err.Error())
					return
				}
				if i >= 0 {
					ds = append(ds, d)
				}
			}
			d := median(ds)
			add(row{what, ms(d), "gum not installed", "-", "< 15 ms", yes(d < 15*time.Millisecond)})
			continue
		}
		g := func(int) (time.Duration, error) {
			return ptyRun([]string{*gum, "confirm", "--timeout=20s", "Proceed?"}, env(home, "TERM=xterm-256color"), nil, true, answer, gumFrame)
		}
		// gum waits seconds for answers a silent pty never gives: a few
		// runs of it tell as much.
		ng, peer := *runs, " (`gum confirm`)"
		if !answer {
			ng = min(*runs, 3)
			peer = fmt.Sprintf(" (`gum confirm`, median of %d)", ng)
		}
		da, dg, err := pairN(*runs, ng, a, g)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				skip(what, "gum: "+err.Error())
			} else {
				skip(what, "failed: "+err.Error())
			}
			return
		}
		add(row{what, ms(da), ms(dg) + peer, ratio(da, dg), "< 15 ms", yes(da < 15*time.Millisecond)})
	}
}

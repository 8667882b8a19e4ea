// Package xvfb starts a private X server for the end-to-end tests and the
// benchmarks that drive real yad and zenity dialogs. askperm itself never
// imports it.
package xvfb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Server is a running Xvfb.
type Server struct {
	Display string // e.g. ":93"
	Cmd     *exec.Cmd
	Stderr  *bytes.Buffer // what the server said
}

// Start starts Xvfb on a display it picks itself (-displayfd, so parallel
// runs never collide) and returns once the server has named it, at most
// 10 s later. -noreset: without it the server resets whenever its last
// client leaves, and refuses the next dialog while it does.
func Start() (*Server, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := &Server{Stderr: &bytes.Buffer{}}
	s.Cmd = exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset")
	s.Cmd.ExtraFiles = []*os.File{w}
	s.Cmd.Stderr = s.Stderr
	err = s.Cmd.Start()
	w.Close()
	if err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	var n string
	select {
	case n = <-line:
	case <-time.After(10 * time.Second):
	}
	if n == "" {
		s.Stop()
		return nil, s.Failed(errors.New("no display number in time"))
	}
	s.Display = ":" + n
	return s, nil
}

// Failed is err with the first line the server wrote to stderr, if any.
func (s *Server) Failed(err error) error {
	if said, _, _ := strings.Cut(strings.TrimSpace(s.Stderr.String()), "\n"); said != "" {
		return fmt.Errorf("%w: %s", err, said)
	}
	return err
}

// Stop ends the server (SIGTERM: it removes its lock and socket) and
// reaps it.
func (s *Server) Stop() {
	s.Cmd.Process.Signal(syscall.SIGTERM)
	s.Cmd.Wait()
}

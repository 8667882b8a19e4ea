package helpers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/testbin"
)

// askperm is the askperm binary, built once for the tests that run it.
var askperm string

func TestMain(m *testing.M) { testbin.Main(m, &askperm) }

// script is a helper written as a shell script, with $ASKPERM the askperm
// binary and $DIR a directory of the test's own.
func script(t *testing.T, body string) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "helper")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "ASKPERM=" + askperm, "DIR=" + dir}
	return &Runner{Argv: []string{p}, Timeout: 10 * time.Second, Env: env, Stderr: &strings.Builder{}}, dir
}

func request() *decision.Request {
	id := "req-1"
	return &decision.Request{ID: &id, Tool: "write_file", Action: "write", Grants: []decision.Grant{{Name: "fs.write"}}}
}

// gone reports whether the process whose pid the helper wrote to file has
// ended (a zombie counts as ended: nobody can reap it but its parent).
func gone(t *testing.T, file string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the helper wrote no pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return true
		}
	}
	return false
}

// Every way a helper can fail is a deny carrying the reason.
func TestRunnerDeniesEveryFailure(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		timeout    time.Duration
		max        int64
		reason     string
		pidFile    string
	}{
		{"hangs", `echo $$ >"$DIR/pid"; exec sleep 60`, 500 * time.Millisecond, 0, "did not answer in time", "pid"},
		{"ignores SIGTERM", `trap '' TERM; echo $$ >"$DIR/pid"; while :; do sleep 1; done`, 500 * time.Millisecond, 0, "did not answer in time", "pid"},
		{"prints too much", `cat >/dev/null; head -c 3000000 /dev/zero`, 0, 1 << 20, "more than 1048576 bytes", ""},
		{"prints two decisions", `tee "$DIR/req" >/dev/null; "$ASKPERM" --answer allow-once <"$DIR/req"; "$ASKPERM" --answer allow-once <"$DIR/req"`, 0, 0, "more than one line", ""},
		{"exits non-zero", `"$ASKPERM" --answer allow-once; exit 3`, 0, 0, "exit status 3", ""},
		{"answers another id", `"$ASKPERM" --answer allow-once | sed 's/req-1/req-2/'`, 0, 0, `"id"`, ""},
		{"answers another request", `sed 's/write_file/read_file/' | "$ASKPERM" --answer allow-once`, 0, 0, "request_sha256", ""},
		{"prints nothing", `cat >/dev/null`, 0, 0, "no output", ""},
		{"prints garbage", `cat >/dev/null; echo '{"decision":"allow"'`, 0, 0, "decision", ""},
		{"is not there", `exec /nonexistent/helper`, 0, 0, "exit status 127", ""},
	} {
		r, dir := script(t, tc.body)
		if tc.timeout > 0 {
			r.Timeout = tc.timeout
		}
		r.MaxOutput = tc.max
		start := time.Now()
		d, err := r.Ask(context.Background(), request())
		if err == nil || d.Decision != decision.Deny || d.Cause != decision.CauseError || !strings.Contains(d.Message, tc.reason) || d.Message != err.Error() {
			t.Errorf("%s: %+v, %v; want a deny saying %q", tc.name, d, err, tc.reason)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: took %v", tc.name, took)
		}
		if tc.pidFile != "" && !gone(t, filepath.Join(dir, tc.pidFile)) {
			t.Errorf("%s: the helper lives on", tc.name)
		}
	}
}

// askperm itself allows and denies through the runner; the request's own
// timeout is set from the runner's, so that the helper answers first.
func TestRunnerWithAskperm(t *testing.T) {
	r, dir := script(t, `tee "$DIR/req" | "$ASKPERM" "$@"`)
	r.Timeout = 30 * time.Second
	for _, args := range [][]string{{"--answer", "allow-once"}, {"--answer", "deny-once", "--message", "no"}} {
		r.Argv = append(r.Argv[:1], args...)
		d, err := r.Ask(context.Background(), request())
		if err != nil || d.ID == nil || *d.ID != "req-1" || (args[1] == "allow-once") != (d.Decision == decision.Allow) {
			t.Errorf("%v: %+v, %v", args, d, err)
		}
		if args[1] == "deny-once" && d.Message != "no" {
			t.Errorf("message %q", d.Message)
		}
	}
	var sent struct{ Timeout float64 }
	b, _ := os.ReadFile(filepath.Join(dir, "req"))
	if err := json.Unmarshal(b, &sent); err != nil || sent.Timeout < 25 || sent.Timeout > 30 {
		t.Errorf("the request's timeout: %v, %v", sent.Timeout, err)
	}
}

// A grandchild that holds stdout open does not hold up the answer, and
// dies with the helper's group.
func TestRunnerGrandchildHoldingStdout(t *testing.T) {
	r, dir := script(t, `"$ASKPERM" --answer allow-once; sleep 60 & echo $! >"$DIR/pid"`)
	start := time.Now()
	d, err := r.Ask(context.Background(), request())
	if err != nil || d.Decision != decision.Allow {
		t.Errorf("%+v, %v", d, err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	if !gone(t, filepath.Join(dir, "pid")) {
		t.Error("the grandchild lives on")
	}
}

// Cancelling ctx ends the helper and the request is denied.
func TestRunnerCancelled(t *testing.T) {
	r, dir := script(t, `echo $$ >"$DIR/pid"; exec sleep 60`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	d, err := r.Ask(ctx, request())
	if !errors.Is(err, context.Canceled) || d.Decision != decision.Deny {
		t.Errorf("%+v, %v", d, err)
	}
	if !gone(t, filepath.Join(dir, "pid")) {
		t.Error("the helper lives on")
	}
}

// One request at a time per runner.
func TestRunnerOneAtATime(t *testing.T) {
	r, dir := script(t, `touch "$DIR/started"; exec sleep 60`)
	r.Timeout = 2 * time.Second
	go r.Ask(context.Background(), request())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first request did not start")
		}
	}
	if d, err := r.Ask(context.Background(), request()); !errors.Is(err, ErrBusy) || d.Decision != decision.Deny {
		t.Errorf("%+v, %v", d, err)
	}
}

// An invalid request is never sent.
func TestRunnerRefusesInvalidRequest(t *testing.T) {
	r, dir := script(t, `touch "$DIR/ran"`)
	if d, err := r.Ask(context.Background(), &decision.Request{}); err == nil || d.Decision != decision.Deny {
		t.Errorf("%+v, %v", d, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the helper ran")
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// scaling: section 8. Each row at a size against the same row at the
// smallest size, in the same run: what memory that grows with use costs.
func scaling() {
	sizes := []int{10, 1_000, 10_000, 100_000}
	lines := []int{10_000, 100_000, 1_000_000}
	waves := []int{50, 200}
	if *quick {
		sizes, lines, waves = sizes[:2], lines[:1], waves[:1]
	}
	req := file("scaling.json", request(nil))
	stores := map[int]string{}
	for _, n := range sizes {
		dir, err := rememberedStore(n, req)
		if err != nil {
			skip(fmt.Sprintf("a decision with %d remembered rules", n), "failed: "+err.Error())
			return
		}
		stores[n] = dir
	}
	home := newHome()
	decide := func(dir string) func(int) (time.Duration, error) {
		return timed(fixed([]string{*askperm, "--state-dir", dir, "--frontend", "none"}), env(home), fixed(req), `"memory"`)
	}
	list := func(dir string) func(int) (time.Duration, error) {
		return timed(fixed([]string{*askperm, "rules", "list", "--state-dir", dir}), env(home), fixed(req), "")
	}
	base := sizes[0]
	for _, n := range sizes[1:] {
		what := fmt.Sprintf("a decision by memory with %s remembered rules vs %d, whole process", count(n), base)
		a, b, err := pair(3**runs, decide(stores[n]), decide(stores[base]))
		if err != nil {
			skip(what, "failed: "+err.Error())
			continue
		}
		add(row{what, ms(a), ms(b) + fmt.Sprintf(" (%d rules)", base), ratio(a, b), "≤ 1.2×", yes(float64(a) <= 1.2*float64(b))})
	}
	for _, n := range sizes[1:] {
		what := fmt.Sprintf("`askperm rules list` of %s remembered rules vs %d", count(n), base)
		a, b, err := pair(*runs, list(stores[n]), list(stores[base]))
		if err != nil {
			skip(what, "failed: "+err.Error())
			continue
		}
		add(row{what, ms(a), ms(b) + fmt.Sprintf(" (%d rules)", base), ratio(a, b), "-",
			fmt.Sprintf("%.2f µs a rule", float64(a-b)/1e3/float64(n-base))})
	}
	auditLogs(lines)
	helperWaves(waves, req)
	rules, _ := tenThousandRuleFiles()
	decisionWithRules(rules, file("exec.json", []byte(execRequest)))
}

// count formats n with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// rememberedStore is a state directory of n remembered rules: the one an
// always-answer to req leaves, written by askperm itself, and n-1 more as
// use leaves them (other files of the same tool under path prefixes, other
// tools' commands, a few denies), written in-process.
func rememberedStore(n int, req string) (string, error) {
	home := newHome()
	dir := filepath.Join(home, "state")
	if _, err := spawn([]string{*askperm, "--answer", "allow-always", "--state-dir", dir}, env(home), req, `"allow"`); err != nil {
		return "", fmt.Errorf("remembering: %w", err)
	}
	st, err := state.Open(context.Background(), dir)
	if err != nil {
		return "", err
	}
	err = st.Do(func(tx *state.Tx) error {
		for i := range n - 1 {
			r := state.Rule{Decision: decision.Allow, Server: "fs-default", Tool: "write_file", Action: "write",
				Dimensions: []state.Dimension{{Name: "path", Match: fmt.Sprintf("/home/a/p%d/", i), Kind: decision.KindPrefix}}}
			switch {
			case i%100 == 0:
				r = state.Rule{Decision: decision.Deny, Tool: fmt.Sprintf("Other%d", i), Action: "exec",
					Dimensions: []state.Dimension{{Name: "command", Match: "rm -rf", Kind: decision.KindWords}}}
			case i%2 == 1:
				r = state.Rule{Decision: decision.Allow, Tool: fmt.Sprintf("tool%d", i%50), Action: "exec",
					Dimensions: []state.Dimension{{Name: "command", Match: fmt.Sprintf("cmd%d sub", i), Kind: decision.KindWords}}}
			}
			r.Origin, r.Created = "answers", 1_700_000_000
			if _, err := tx.Remember(r); err != nil {
				return err
			}
		}
		return nil
	})
	return dir, errors.Join(err, st.Close())
}

// auditLogs: `askperm log` (its whole table) of a generated audit log at
// each size, against the smallest, with its peak memory.
func auditLogs(sizes []int) {
	type figure struct {
		wall time.Duration
		kib  int64
	}
	dirs := map[int]string{}
	for _, n := range sizes {
		dir, err := auditLog(n)
		if err != nil {
			skip(fmt.Sprintf("`askperm log` of %s lines", count(n)), "failed: "+err.Error())
			return
		}
		dirs[n] = dir
	}
	got := map[int]figure{}
	for _, n := range sizes {
		// A million lines take seconds a run: fewer runs than the rest;
		// the smallest, every other row's base, takes them all.
		reps := *runs
		if n > sizes[0] {
			reps = min(*runs, 5)
		}
		var walls []time.Duration
		var kibs []int64
		for i := -1; i < reps; i++ {
			wall, kib, err := logRun(dirs[n])
			if err != nil {
				skip(fmt.Sprintf("`askperm log` of %s lines", count(n)), "failed: "+err.Error())
				return
			}
			if i >= 0 {
				walls, kibs = append(walls, wall), append(kibs, kib)
			}
		}
		slices.Sort(kibs)
		got[n] = figure{median(walls), kibs[len(kibs)/2]}
	}
	base := got[sizes[0]]
	for _, n := range sizes {
		f := got[n]
		what := fmt.Sprintf("`askperm log` of %s audit lines (table to /dev/null): wall time", count(n))
		per := float64(f.wall) / float64(n) / 1e3
		if n == sizes[0] {
			add(row{what, ms(f.wall), "-", "-", "linear", fmt.Sprintf("%.2f µs a line", per)})
		} else {
			linear := float64(base.wall) * float64(n) / float64(sizes[0])
			add(row{what, ms(f.wall), ms(base.wall) + fmt.Sprintf(" (%s lines)", count(sizes[0])), ratio(f.wall, base.wall),
				fmt.Sprintf("linear (≤ %.0f×)", 1.5*float64(n)/float64(sizes[0])), yes(float64(f.wall) <= 1.5*linear) + fmt.Sprintf(", %.2f µs a line", per)})
		}
		add(row{fmt.Sprintf("`askperm log` of %s audit lines: peak memory (maxrss)", count(n)), fmt.Sprintf("%.1f MiB", float64(f.kib)/1024),
			fmt.Sprintf("%.1f MiB (%s lines)", float64(base.kib)/1024, count(sizes[0])), fmt.Sprintf("%.2f×", float64(f.kib)/float64(base.kib)),
			"flat, < 32 MiB", yes(f.kib < 32*1024)})
	}
}

// auditLog is a state directory whose audit log holds n decisions a
// second apart, written directly: as many lines as askperm writes, in
// sessions of a hundred, one in ten a deny.
func auditLog(n int) (string, error) {
	dir := filepath.Join(newHome(), "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(filepath.Join(dir, state.AuditName), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	start := time.Now().Add(-time.Duration(n) * time.Second).UTC()
	var b []byte
	for i := range n {
		verdict, cause := "allow", "answers"
		if i%10 == 0 {
			verdict, cause = "deny", "rule"
		}
		b = append(b[:0], `{"time":"`...)
		b = start.Add(time.Duration(i)*time.Second).AppendFormat(b, time.RFC3339Nano)
		b = fmt.Appendf(b, `","request_sha256":"%064x","server":"fs-default","tool":"write_file","action":"write","session_id":"s-%d",`+
			`"dimensions":{"path":"/home/a/p/f%d.md"},"decision":"%s","persist":"once","cause":"%s","frontend":"answers","latency_ms":%d}`+"\n",
			i, i/100, i, verdict, cause, i%7)
		if _, err := w.Write(b); err != nil {
			f.Close()
			return "", err
		}
	}
	// Synced: the writeback of a million lines would otherwise throttle
	// the writes of the runs timed next.
	return dir, errors.Join(w.Flush(), f.Sync(), f.Close())
}

// logRun runs `askperm log` on the state directory dir, its output
// discarded, and returns its wall time and peak memory (KiB) by GNU time,
// which forks (see peakRSS).
func logRun(dir string) (time.Duration, int64, error) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0, 0, errors.New("no /usr/bin/time for the peak memory")
	}
	out := filepath.Join(work, "log-maxrss")
	cmd := exec.Command("/usr/bin/time", "-f", "%M", "-o", out, *askperm, "log", "--state-dir", dir)
	cmd.Env = env(newHome())
	var stderr strings.Builder
	cmd.Stderr = &stderr // Stdout nil: /dev/null
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("askperm log: %v: %s", err, firstLine(stderr.String()))
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		return 0, 0, fmt.Errorf("askperm log: %s", firstLine(s))
	}
	text, err := os.ReadFile(out)
	if err != nil {
		return 0, 0, err
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	return wall, kib, err
}

// helperWaves: waves of n helpers started at once on one --state-dir,
// decided by a canned allow-once (each counts the decision in the store
// and appends its audit line) and by a remembered rule (an audit line
// only), each against the same wave answered allow-once with
// --no-remember (no state directory at all); after each wave,
// one more helper folds in what was kept for later, and every helper's
// decision must then be in the audit log, once.
func helperWaves(sizes []int, req string) {
	home := newHome()
	cfg := filepath.Join(home, "config", "askperm", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		panic(err)
	}
	// Prompt rate limits off: every canned answer is a decision recorded.
	if err := os.WriteFile(cfg, []byte("[limits]\nprompts_per_minute = 0\nprompts_per_minute_user = 0\n"), 0o600); err != nil {
		panic(err)
	}
	remembered, err := rememberedStore(1, req)
	if err != nil {
		skip("waves of helpers", "failed: "+err.Error())
		return
	}
	reps := min(*runs, 5) // a wave of 200 takes a second or two
	for _, n := range sizes {
		for _, w := range []struct {
			what, dir string
			args      []string
			want      string
		}{
			{"a canned allow-once", filepath.Join(home, fmt.Sprintf("canned-%d", n)), []string{"--answer", "allow-once"}, `"user"`},
			{"a remembered rule", remembered, []string{"--frontend", "none"}, `"memory"`},
		} {
			what := fmt.Sprintf("%d helpers at once on one state directory, decided by %s, vs --no-remember: the wave", n, w.what)
			var with, without []time.Duration
			var late, missing int
			for i := -1; i < reps; i++ {
				a, got, err := wave(n, append([]string{"--state-dir", w.dir}, w.args...), env(home), req, w.want)
				if err == nil {
					missing += n - got.logged
					late += got.late
				}
				var b time.Duration
				if err == nil {
					b, _, err = wave(n, []string{"--no-remember", "--answer", "allow-once"}, env(home), req, `"allow"`)
				}
				if err != nil {
					skip(what, "failed: "+err.Error())
					return
				}
				if i >= 0 {
					with, without = append(with, a), append(without, b)
				}
			}
			a, b := median(with), median(without)
			audited := fmt.Sprintf("all %d audited, %d kept for later and folded in", (reps+1)*n, late)
			if missing > 0 {
				audited = fmt.Sprintf("**no**, %d of %d missing from the audit log", missing, (reps+1)*n)
			}
			add(row{what, ms(a) + fmt.Sprintf(" (%.2f ms a helper)", float64(a)/1e6/float64(n)), ms(b) + " (--no-remember)", ratio(a, b),
				"every decision in the audit log", audited})
		}
	}
}

// waveCount is what the audit log shows of a wave: how many of its
// helpers' decisions it holds (after one more helper folded in the kept
// ones), and how many helpers said theirs was kept for later.
type waveCount struct{ logged, late int }

// wave starts n helpers with args at once on req and times them to the
// last exit; each must decide (want in its output) and lose nothing it
// records. With a --state-dir it then runs one more helper, which folds
// in the audit lines and breaker counts kept for later, and counts the
// wave's lines in the audit log by the helpers' request ids.
func wave(n int, args, environ []string, req, want string) (time.Duration, waveCount, error) {
	dir := ""
	if i := slices.Index(args, "--state-dir"); i >= 0 {
		dir = args[i+1]
	}
	id := fmt.Sprintf("wave-%d", time.Now().UnixNano())
	reqs := make([]string, n+1)
	for i := range reqs {
		text, err := os.ReadFile(req)
		if err != nil {
			return 0, waveCount{}, err
		}
		var r map[string]any
		if err := json.Unmarshal(text, &r); err != nil {
			return 0, waveCount{}, err
		}
		r["id"] = fmt.Sprintf("%s-%d", id, i)
		if reqs[i], err = marshal(r); err != nil {
			return 0, waveCount{}, err
		}
	}
	errs := make([]error, n)
	stderrs := make([]string, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() { stderrs[i], errs[i] = helper(append([]string{*askperm}, args...), environ, reqs[i], want) })
	}
	wg.Wait()
	wall := time.Since(start)
	var count waveCount
	for i, s := range stderrs {
		if errs[i] != nil {
			return 0, count, errs[i]
		}
		if strings.Contains(s, "lost") || strings.Contains(s, "not counted") {
			return 0, count, fmt.Errorf("helper %d: %s", i, firstLine(s))
		}
		if strings.Contains(s, "until it frees") || strings.Contains(s, "when the store frees") {
			count.late++
		}
	}
	if dir == "" {
		return wall, count, nil
	}
	if _, err := helper(append([]string{*askperm}, args...), environ, reqs[n], want); err != nil {
		return 0, count, fmt.Errorf("the helper after the wave: %w", err)
	}
	out, err := exec.Command(*askperm, "log", "--json", "--state-dir", dir).Output()
	if err != nil {
		return 0, count, fmt.Errorf("askperm log: %w", err)
	}
	seen := map[string]int{}
	for line := range strings.Lines(string(out)) {
		var e struct{ ID string }
		if json.Unmarshal([]byte(line), &e) == nil && strings.HasPrefix(e.ID, id+"-") {
			seen[e.ID]++
		}
	}
	for i := range n {
		if c := seen[fmt.Sprintf("%s-%d", id, i)]; c > 1 {
			return 0, count, fmt.Errorf("helper %d's decision is in the audit log %d times", i, c)
		} else if c == 1 {
			count.logged++
		}
	}
	for _, name := range []string{state.PendingName, state.LateCountsName} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Size() > 0 {
			return 0, count, fmt.Errorf("%s still holds %d bytes after the wave was folded in", name, fi.Size())
		}
	}
	return wall, count, nil
}

// helper runs one askperm with stdin req, in a session of its own, and
// returns its stderr; it fails on a non-zero exit or an output without
// want.
func helper(argv, environ []string, req, want string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(req), &stdout, &stderr
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return stderr.String(), fmt.Errorf("askperm: %v: %s", err, firstLine(stderr.String()))
	}
	if !strings.Contains(stdout.String(), want) {
		return stderr.String(), fmt.Errorf("askperm: output lacks %q: %s", want, firstLine(stdout.String()+stderr.String()))
	}
	return stderr.String(), nil
}

// marshal is v as JSON text.
func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

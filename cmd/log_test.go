package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/stats"
)

// oldLog is askperm log as it was when it read the whole log into memory
// and sorted it: the streaming one must print the same bytes.
func oldLog(t *testing.T, dir string, o logOptions) string {
	t.Helper()
	var since time.Time
	if o.Since != "" {
		var err error
		if since, err = time.Parse(time.RFC3339, o.Since); err != nil {
			t.Fatal(err)
		}
	}
	var entries []state.AuditEntry
	for _, name := range []string{state.AuditName + ".1", state.AuditName} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e state.AuditEntry
			if json.Unmarshal(sc.Bytes(), &e) == nil && (o.Session == "" || e.SessionID == o.Session) && !e.Time.Before(since) &&
				(o.Decision == "" || e.Decision == o.Decision) && (o.Tool == "" || e.Tool == o.Tool) {
				entries = append(entries, e)
			}
		}
		f.Close()
		if sc.Err() != nil {
			t.Fatal(sc.Err())
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time.Before(entries[j].Time) })
	var out bytes.Buffer
	if o.json {
		for _, e := range entries {
			b, _ := json.Marshal(e)
			out.Write(append(b, '\n'))
		}
		return out.String()
	}
	w := tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(cli.LogColumns, "\t"))
	for _, e := range entries {
		fmt.Fprintln(w, strings.Join(cli.LogRow(e), "\t"))
	}
	w.Flush()
	return out.String()
}

var (
	genWords    = []string{"ls", "rm -rf /tmp/x", "cat ünïcødé", "写文件", "git push", "read_file /etc/hosts", ""}
	genSessions = []string{"", "s1", "s2", "s3"}
	genTools    = []string{"", "Bash", "write_file", "read_file"}
)

// genEntry is a random entry at t.
func genEntry(r *rand.Rand, t time.Time, irregular bool) state.AuditEntry {
	e := state.AuditEntry{
		Time: t, RequestSHA256: "00", Action: genWords[r.IntN(len(genWords))],
		SessionID: genSessions[r.IntN(len(genSessions))], Tool: genTools[r.IntN(len(genTools))],
		Decision: []string{"allow", "deny"}[r.IntN(2)], Persist: []string{"once", "session", "always"}[r.IntN(3)],
		Cause: decision.Cause([]string{"person", "rule", "timeout"}[r.IntN(3)]), Frontend: decision.Frontend([]string{"tui", "line", "none"}[r.IntN(3)]),
		Stop: r.IntN(5) == 0,
	}
	if r.IntN(3) == 0 {
		e.Dimensions = map[string]string{"path": genWords[r.IntN(len(genWords))], "host": "example.org"}
	}
	if r.IntN(3) == 0 {
		e.DecidedBy = []string{"rule 1", "memory 2"}[:1+r.IntN(2)]
	}
	if r.IntN(4) == 0 {
		e.NotRemembered = "no session"
	}
	if irregular && r.IntN(10) == 0 {
		e.Action += "\tand\na tab"
	}
	return e
}

// genLog writes n random entries, slightly out of time order, split over
// the rotated file and the current one, with invalid lines among them and
// a torn tail, and returns the time of the first and the last entry.
func genLog(t testing.TB, dir string, r *rand.Rand, n int, irregular bool) (time.Time, time.Time) {
	t.Helper()
	var files [2]*bufio.Writer
	for i, name := range []string{state.AuditName + ".1", state.AuditName} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = bufio.NewWriter(f)
	}
	start := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	split := r.IntN(n + 1)
	at := start
	for i := range n {
		at = at.Add(time.Duration(r.IntN(3)) * time.Second)
		stamped := at.Add(-time.Duration(r.IntN(3)) * time.Second) // stamped before the lock was had
		b, _ := json.Marshal(genEntry(r, stamped, irregular))
		f := files[0]
		if i >= split {
			f = files[1]
		}
		switch r.IntN(20) {
		case 0:
			f.WriteString("not json\n")
		case 1:
			f.WriteString("\n")
		}
		f.Write(append(b, '\n'))
	}
	for _, f := range files {
		if r.IntN(3) == 0 {
			b, _ := json.Marshal(genEntry(r, at, irregular))
			f.Write(b[:r.IntN(len(b))]) // a torn tail
		}
		if err := f.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return start, at
}

// askperm log prints what it printed when it read the whole log, for
// every filter, on generated logs.
func TestLogSameAsBefore(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 22))
		dir := t.TempDir()
		first, last := genLog(t, dir, r, r.IntN(300), seed%4 == 0)
		o := logOptions{LogFilter: cli.LogFilter{Session: genSessions[r.IntN(len(genSessions))], Tool: genTools[r.IntN(len(genTools))],
			Decision: []string{"", "allow", "deny"}[r.IntN(3)]}}
		if r.IntN(2) == 0 {
			o.Since = first.Add(time.Duration(r.Int64N(int64(last.Sub(first) + time.Second)))).Format(time.RFC3339)
		}
		o.json = r.IntN(2) == 0
		args := []string{"log", "--state-dir", dir, "--session", o.Session, "--tool", o.Tool, "--decision", o.Decision, "--since", o.Since}
		if o.json {
			args = append(args, "--json")
		}
		code, got, stderr := invoke(t, "", nil, args...)
		if want := oldLog(t, dir, o); code != 0 || got != want {
			t.Fatalf("seed %d %v: exit %d %s\ngot\n%s\nwant\n%s", seed, args, code, stderr, got, want)
		}
	}
}

// A line longer than any entry is reported and skipped; the rest is shown.
func TestLogSkipsLongLine(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	genLog(t, dir, r, 50, false)
	path := filepath.Join(dir, state.AuditName)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := oldLog(t, dir, logOptions{})
	i := bytes.IndexByte(before, '\n') + 1
	long := append(append(append([]byte{}, before[:i]...), bytes.Repeat([]byte("x"), state.MaxAuditLine+10)...), '\n')
	if err := os.WriteFile(path, append(long, before[i:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, got, stderr := invoke(t, "", nil, "log", "--state-dir", dir)
	if code != 0 || got != want || !strings.Contains(stderr, "line 2: longer than") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q\ngot\n%s\nwant\n%s", code, stderr, got, want)
	}
}

// BenchmarkLog runs askperm log over generated logs of growing size: time
// per line should stay flat, and memory with it.
func BenchmarkLog(b *testing.B) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			genLog(b, dir, rand.New(rand.NewPCG(uint64(n), 22)), n, false)
			for _, json := range []bool{false, true} {
				args := []string{"log", "--state-dir", dir}
				if json {
					args = append(args, "--json")
				}
				b.Run(fmt.Sprintf("json=%v", json), func(b *testing.B) {
					s := nullStreams(b)
					s.Decision = null
					s.Getenv = func(k string) string { return map[string]string{"XDG_CONFIG_HOME": dir}[k] }
					b.ReportAllocs()
					for b.Loop() {
						if code := run(s, args); code != 0 {
							b.Fatalf("exit %d", code)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
				})
			}
		})
	}
}

// appendOnWrite appends line to the file at path when the table's first
// byte is written: after the log was measured, before its rows are.
type appendOnWrite struct {
	out        bytes.Buffer // not embedded: its WriteString would pass Write by
	t          *testing.T
	path, line string
}

func (w *appendOnWrite) Write(b []byte) (int, error) {
	if w.line != "" {
		f, err := os.OpenFile(w.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			w.t.Fatal(err)
		}
		_, err = f.WriteString(w.line)
		if err = errors.Join(err, f.Close()); err != nil {
			w.t.Fatal(err)
		}
		w.line = ""
	}
	return w.out.Write(b)
}

// A table too big to hold is read from the log once: its rows are the
// rows measured, even when the log grows while it is written, and are
// laid out as tabwriter lays out the whole table.
func TestLogTableReadsLogOnce(t *testing.T) {
	for seed := range uint64(2) {
		r := rand.New(rand.NewPCG(seed, 7))
		dir := t.TempDir()
		_, last := genLog(t, dir, r, 30_000, seed == 1)
		want := oldLog(t, dir, logOptions{})
		if len(want) < 2*cli.TableHeld/3 { // the rows' cells, without cli.StreamTable's count of their overhead
			t.Fatalf("seed %d: a table of %d bytes is no bigger than cli.StreamTable holds", seed, len(want))
		}
		late, err := json.Marshal(state.AuditEntry{Time: last.Add(time.Hour), Action: "written after measuring, wider than any cell"})
		if err != nil {
			t.Fatal(err)
		}
		got := &appendOnWrite{t: t, path: filepath.Join(dir, state.AuditName), line: "\n" + string(late) + "\n"}
		if err := writeLog(got, dir, state.AuditQuery{}, false); err != nil || got.out.String() != want {
			t.Fatalf("seed %d: %v\ngot %.1000s\nwant %.1000s", seed, err, got.out.String(), want)
		}
	}
}

// Without a place for the spool, a table too big to hold is read again.
func TestLogTableWithoutSpool(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	dir := t.TempDir()
	genLog(t, dir, rand.New(rand.NewPCG(3, 7)), 30_000, false)
	var got bytes.Buffer
	if err := writeLog(&got, dir, state.AuditQuery{}, false); err != nil || got.String() != oldLog(t, dir, logOptions{}) {
		t.Fatalf("%v\ngot %.1000s", err, got.String())
	}
}

// log --stats writes the log's names (tools, servers, what decided) as
// form renders request text: no control or format character of theirs
// reaches the terminal.
func TestWriteStatsRendersNames(t *testing.T) {
	hostile := "ev\x1b[2Jil\u202egnp.exe\x07"
	s := stats.Stats{DecidedBy: map[string]int{hostile: 1}, Tools: []stats.Row{{Name: hostile}}, Servers: []stats.Row{{Name: hostile}}}
	var b strings.Builder
	if err := writeStats(&b, s); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.ContainsAny(out, "\x1b\u202e\x07") || !strings.Contains(out, form.Line(hostile)) {
		t.Errorf("log --stats wrote %q", out)
	}
}

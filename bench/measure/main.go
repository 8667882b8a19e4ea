// Command measure measures askperm side by side with its peers, each
// figure a median over repeated runs and a ratio against its peer in the
// same run, and prints one table. bench/run.sh builds what it needs and
// runs it; `measure -quick` is the short form its test runs.
//
// Sections (-only takes a comma list of their numbers):
//
//	1  a request decided without a human, whole process, against the floor; the canned decision against
//	   libfloor, with the page faults of the three and askperm's own package initialisers
//	2  the terminal UI's first complete frame on a pty, against gum confirm
//	3  a desktop dialog's window appearing under Xvfb, against bare yad/zenity
//	4  a 1 MiB request: wall time and peak memory, against the floor
//	5  one request against 10,000 rules: in-process, and askperm check against Codex's execpolicy check
//	6  askperm gate's added latency per MCP tool call, and 1, 10, 100 calls at once with memory on vs off
//	7  the state store's cost per request, and 50 parallel helpers
//	8  scaling, each size against the smallest: a decision by memory and rules list at 10 to 100,000
//	   remembered rules, askperm log at 10,000 to 1,000,000 audit lines (time, peak memory), and a
//	   decision with a 10,000-rule file vs without rules (-quick: the small sizes only)
//	9  team mode against a local NATS server: askperm --frontend team answered on sight by a scripted
//	   approver vs the canned decision, and askperm-team inbox list's memory with 10,000 pending requests
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	askperm = flag.String("askperm", "", "the askperm binary (required)")
	floor   = flag.String("floor", "", "the floor binary (bench/floor; required)")
	libs    = flag.String("libfloor", "", "the floor linked with the required libraries (bench/libfloor; its row is skipped when empty)")
	gum     = flag.String("gum", "", "the gum binary (section 2's peer; skipped when empty)")
	repo    = flag.String("repo", ".", "the repository (testdata, .ci/tools, go test)")
	runs    = flag.Int("n", 21, "runs per figure; the median is reported")
	quick   = flag.Bool("quick", false, "few runs and short in-process benchmarks: checks that every part works")
	only    = flag.String("only", "", "comma-separated section numbers to run (default all)")
	work    string // a scratch directory, removed at the end
)

// row is one line of the table.
type row struct {
	what, ours, peer, ratio, target, met string
}

var rows []row

// add records a row and shows it at once on stderr, so a long run shows
// progress.
func add(r row) {
	rows = append(rows, r)
	fmt.Fprintf(os.Stderr, "  %s: %s vs %s (%s) %s %s\n", r.what, r.ours, r.peer, r.ratio, r.target, r.met)
}

// skip records a row that could not be measured, and why.
func skip(what, why string) {
	add(row{what: what, ours: "skipped", peer: "-", ratio: "-", target: "-", met: why})
}

func main() {
	if filepath.Base(os.Args[0]) == stubName {
		stubMain()
	}
	flag.Parse()
	if *askperm == "" || *floor == "" {
		fmt.Fprintln(os.Stderr, "measure: -askperm and -floor are required")
		os.Exit(64)
	}
	if *quick && *runs > 3 {
		*runs = 3
	}
	var err error
	if work, err = os.MkdirTemp("", "askperm-bench"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(work)
	sections := []func(){nil, noHuman, tuiFrame, dialogs, largeRequest, tenThousandRules, gate, stateStore, scaling, teamMode}
	started := time.Now()
	for i := 1; i < len(sections); i++ {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), strconv.Itoa(i)) {
			continue
		}
		fmt.Fprintf(os.Stderr, "section %d\n", i)
		sections[i]()
	}
	fmt.Println("| what | askperm | peer | ratio | target | met? |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.what, r.ours, r.peer, r.ratio, r.target, r.met)
	}
	fmt.Printf("\n%d runs per figure (medians); measured in %s\n", *runs, time.Since(started).Round(time.Second))
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// ratio formats a/b.
func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	if r := float64(a) / float64(b); r < 0.1 {
		return fmt.Sprintf("%.3f×", r)
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

// yes is the met? column.
func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// median is the median of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// pair runs a and b alternately, n times each after one warm-up of each,
// and returns their medians: alternating spreads the machine's drift over
// both sides.
func pair(n int, a, b func(i int) (time.Duration, error)) (time.Duration, time.Duration, error) {
	return pairN(n, n, a, b)
}

// pairN is pair with b run only nb times (its first nb turns): for a peer
// that takes seconds.
func pairN(n, nb int, a, b func(i int) (time.Duration, error)) (time.Duration, time.Duration, error) {
	var as, bs []time.Duration
	for i := -1; i < n; i++ {
		da, err := a(i)
		if err != nil {
			return 0, 0, err
		}
		if i >= 0 {
			as = append(as, da)
		}
		if i >= nb {
			continue
		}
		db, err := b(i)
		if err != nil {
			return 0, 0, err
		}
		if i >= 0 {
			bs = append(bs, db)
		}
	}
	return median(as), median(bs), nil
}

// env is the environment of askperm: a home of its own under the scratch
// directory, so no user's config, rules or memory take part.
func env(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + home,
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}, extra...)
}

// newHome makes a fresh home directory.
func newHome() string {
	d, err := os.MkdirTemp(work, "home")
	if err != nil {
		panic(err)
	}
	return d
}

// run is one whole-process run.
type run struct {
	wall   time.Duration
	state  *os.ProcessState
	stdout []byte
}

// spawn runs argv with stdin from the file stdin, in a session of its own
// (no controlling terminal, as an MCP server or CI job runs a helper), and
// times it from just before the spawn to the reaped exit; it fails on a
// non-zero exit or when the output lacks want.
func spawn(argv, environ []string, stdin, want string) (run, error) {
	in, err := os.Open(stdin)
	if err != nil {
		return run{}, err
	}
	defer in.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &stdout, &stderr
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return run{}, fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, firstLine(stderr.String()))
	}
	if !bytes.Contains(stdout.Bytes(), []byte(want)) {
		return run{}, fmt.Errorf("%s: output lacks %q: %s", filepath.Base(argv[0]), want, firstLine(stdout.String()+stderr.String()))
	}
	return run{wall, cmd.ProcessState, stdout.Bytes()}, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// timed adapts spawn to pair.
func timed(argv func(i int) []string, environ []string, stdin func(i int) string, want string) func(int) (time.Duration, error) {
	return func(i int) (time.Duration, error) {
		r, err := spawn(argv(i), environ, stdin(i), want)
		return r.wall, err
	}
}

// fixed is a function of the run number that ignores it.
func fixed[T any](v T) func(int) T { return func(int) T { return v } }

// request is testdata/requests/write-file.json changed by change, as JSON.
func request(change func(map[string]any)) []byte {
	text, err := os.ReadFile(filepath.Join(*repo, "testdata/requests/write-file.json"))
	if err != nil {
		panic(err)
	}
	var req map[string]any
	if err := json.Unmarshal(text, &req); err != nil {
		panic(err)
	}
	if change != nil {
		change(req)
	}
	out, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return out
}

// withSession is the request with its own session: the prompt rate limit
// (60 a minute per session) must not decide a benchmark's runs.
func withSession(sid string) func(map[string]any) {
	return func(req map[string]any) { req["session_id"] = sid }
}

// file writes text to a new file in the scratch directory.
func file(name string, text []byte) string {
	p := filepath.Join(work, name)
	if err := os.WriteFile(p, text, 0o600); err != nil {
		panic(err)
	}
	return p
}

// sessionFiles writes n+1 copies of the request, each with a session of
// its own (run -1 is the warm-up), and returns the file of run i.
func sessionFiles(prefix string, n int) func(int) string {
	for i := -1; i < n; i++ {
		file(fmt.Sprintf("%s-%d.json", prefix, i), request(withSession(fmt.Sprintf("%s-%d", prefix, i))))
	}
	return func(i int) string { return filepath.Join(work, fmt.Sprintf("%s-%d.json", prefix, i)) }
}

// floorRow measures one askperm command line against the floor on the
// same request and adds a row with the target ratio.
func floorRow(what string, argv []string, environ []string, stdin func(int) string, want string, target float64) {
	a, f, err := pair(*runs, timed(fixed(argv), environ, stdin, want), timed(fixed([]string{*floor}), nil, stdin, "allow"))
	if err != nil {
		skip(what, "failed: "+err.Error())
		return
	}
	add(row{what, ms(a), ms(f) + " (floor)", ratio(a, f), fmt.Sprintf("≤ %.1f×", target), yes(float64(a) <= target*float64(f))})
}

// noHuman: section 1.
func noHuman() {
	home := newHome()
	req := fixed(file("request.json", request(nil)))
	canned := []string{*askperm, "--answer", "allow-once", "--no-remember"}
	libsRow(req)
	floorRow("decided without a human: canned answer (`--answer allow-once`)", canned, env(home), req, `"allow"`, 1.5)
	cannedRows(canned, env(home), req(0))

	rules := file("allow.toml", []byte("[[rule]]\nname = \"bench\"\ntool = \"write_file\"\n"))
	floorRow("decided without a human: a rules file",
		[]string{*askperm, "--rules", rules, "--no-remember"}, env(home), req, `"allow"`, 1.5)

	state := filepath.Join(newHome(), "state")
	if _, err := spawn([]string{*askperm, "--answer", "allow-always", "--state-dir", state}, env(home), req(0), `"allow"`); err != nil {
		skip("decided without a human: memory", "remembering failed: "+err.Error())
		return
	}
	floorRow("decided without a human: memory (a remembered rule)",
		[]string{*askperm, "--state-dir", state, "--frontend", "none"}, env(home), req, `"memory"`, 1.5)
}

// libsRow measures the floor linked with the libraries askperm must use
// against the bare floor: the part of the start-up askperm's own code
// cannot remove.
func libsRow(req func(int) string) {
	const what = "the floor linked with the required libraries (cobra, bubbletea, huh, x/term, go-isatty): no askperm code"
	if *libs == "" {
		skip(what, "no -libfloor")
		return
	}
	l, f, err := pair(*runs, timed(fixed([]string{*libs}), nil, req, "allow"), timed(fixed([]string{*floor}), nil, req, "allow"))
	if err != nil {
		skip(what, "failed: "+err.Error())
		return
	}
	add(row{what, ms(l), ms(f) + " (floor)", ratio(l, f), "-", "the least a canned decision can cost"})
}

// cannedRows measures the canned decision against the floor linked with
// the required libraries (what askperm's own code adds to the least a
// canned decision can cost), the page faults of the three programs, and
// askperm's own package initialisers against the libraries'.
func cannedRows(canned, environ []string, req string) {
	const what = "canned decision vs libfloor (the required libraries alone): what askperm's own code adds"
	if *libs == "" {
		skip(what, "no -libfloor")
	} else {
		a, l, err := pair(*runs, timed(fixed(canned), environ, fixed(req), `"allow"`), timed(fixed([]string{*libs}), nil, fixed(req), "allow"))
		if err != nil {
			skip(what, "failed: "+err.Error())
		} else {
			add(row{what, ms(a), ms(l) + " (libfloor)", ratio(a, l), "≤ 1.25×", yes(float64(a) <= 1.25*float64(l))})
		}
	}

	// Minor page faults: the pages of the binary and the heap a process
	// touches, each a trap into the kernel.
	faults := func(argv, environ []string) (int64, error) {
		var fs []int64
		for range *runs {
			r, err := spawn(argv, environ, req, "allow")
			if err != nil {
				return 0, err
			}
			fs = append(fs, r.state.SysUsage().(*syscall.Rusage).Minflt)
		}
		slices.Sort(fs)
		return fs[len(fs)/2], nil
	}
	af, err1 := faults(canned, environ)
	ff, err2 := faults([]string{*floor}, nil)
	lf, err3 := int64(0), error(nil)
	if *libs != "" {
		lf, err3 = faults([]string{*libs}, nil)
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		skip("page faults of a canned decision", "failed: "+err.Error())
	} else {
		peer := fmt.Sprintf("%d (libfloor), %d (floor)", lf, ff)
		add(row{"page faults (minor, rusage) of a canned decision", fmt.Sprint(af), peer,
			fmt.Sprintf("%.2f×", float64(af)/float64(max(lf, 1))), "-", fmt.Sprintf("+%d over libfloor", af-lf)})
	}

	own, others, n, err := initialisers(canned, environ, req)
	if err != nil {
		skip("package initialisers of a canned decision", "failed: "+err.Error())
		return
	}
	add(row{fmt.Sprintf("package initialisers of a canned decision (`GODEBUG=inittrace=1`): askperm's own (%d packages) vs the rest", n),
		ms(own), ms(others) + " (the rest)", "-", "-", fmt.Sprintf("%.0f%% of all", 100*float64(own)/float64(own+others))})
}

// initialisers runs argv with GODEBUG=inittrace=1 and returns the median
// total time of the initialisers of askperm's own packages and of all the
// others, and how many of askperm's own ran.
func initialisers(argv, environ []string, req string) (own, others time.Duration, n int, err error) {
	var os_, ot []time.Duration
	for range *runs {
		r, err := spawnStderr(argv, append(environ[:len(environ):len(environ)], "GODEBUG=inittrace=1"), req)
		if err != nil {
			return 0, 0, 0, err
		}
		var o, t time.Duration
		n = 0
		for _, m := range initLine.FindAllStringSubmatch(r, -1) {
			v, _ := strconv.ParseFloat(m[2], 64)
			d := time.Duration(v * 1e6)
			if strings.HasPrefix(m[1], "github.com/askperm/askperm") {
				o += d
				n++
			} else {
				t += d
			}
		}
		os_, ot = append(os_, o), append(ot, t)
	}
	return median(os_), median(ot), n, nil
}

// initLine is one line of GODEBUG=inittrace=1: the package and its
// initialisers' clock time in milliseconds.
var initLine = regexp.MustCompile(`(?m)^init (\S+) @[\d.]+ ms, ([\d.]+) ms clock`)

// spawnStderr runs argv as spawn does and returns its stderr.
func spawnStderr(argv, environ []string, stdin string) (string, error) {
	in, err := os.Open(stdin)
	if err != nil {
		return "", err
	}
	defer in.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stdin, cmd.Stderr, cmd.Env = in, &stderr, environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, firstLine(stderr.String()))
	}
	return stderr.String(), nil
}

// largeRequest: section 4.
func largeRequest() {
	// A detail of plain lines, as large as fits in 1 MiB, the default
	// --max-request, once encoded.
	line := "lorem ipsum dolor sit amet, consectetur adipiscing elit\n"
	text := strings.Repeat(line, 1<<20/len(line))
	large := func() []byte {
		return request(func(r map[string]any) {
			r["details"] = []any{map[string]any{"label": "content", "text": text}}
		})
	}
	for over := len(large()) - 1<<20; over > 0; over = len(large()) - 1<<20 {
		text = text[:len(text)-over-1]
	}
	req := file("large.json", large())
	a, f, err := pair(*runs,
		timed(fixed([]string{*askperm, "--answer", "allow-once", "--no-remember"}), env(newHome()), fixed(req), `"allow"`),
		timed(fixed([]string{*floor}), nil, fixed(req), "allow"))
	if err != nil {
		skip("a 1 MiB request, canned answer", "failed: "+err.Error())
		return
	}
	add(row{"a 1 MiB request, canned answer: wall time", ms(a), ms(f) + " (floor)", ratio(a, f), "≤ 5×", yes(a <= 5*f)})
	am, err1 := peakRSS([]string{*askperm, "--answer", "allow-once", "--no-remember"}, req)
	fm, err2 := peakRSS([]string{*floor}, req)
	if err := errors.Join(err1, err2); err != nil {
		skip("a 1 MiB request, canned answer: peak memory", "failed: "+err.Error())
		return
	}
	add(row{"a 1 MiB request, canned answer: peak memory (maxrss)", fmt.Sprintf("%.1f MiB", float64(am)/1024),
		fmt.Sprintf("%.1f MiB (floor)", float64(fm)/1024), fmt.Sprintf("%.2f×", float64(am)/float64(fm)), "< 16 MiB", yes(am < 16*1024)})
}

// peakRSS is the median peak resident set (KiB) of argv reading stdin.
// Go starts a child with vfork, and Linux counts the parent's peak into
// the child's maxrss at exec; GNU time forks, so its figure is the
// child's own. Without /usr/bin/time the figure is an upper bound.
func peakRSS(argv []string, stdin string) (int64, error) {
	var kib []int64
	out := filepath.Join(work, "maxrss")
	for range *runs {
		var r run
		var err error
		if _, terr := os.Stat("/usr/bin/time"); terr == nil {
			_, err = spawn(append([]string{"/usr/bin/time", "-f", "%M", "-o", out}, argv...), env(newHome()), stdin, "allow")
			if err == nil {
				text, rerr := os.ReadFile(out)
				k, perr := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
				err = errors.Join(rerr, perr)
				kib = append(kib, k)
			}
		} else {
			r, err = spawn(argv, env(newHome()), stdin, "allow")
			if err == nil {
				kib = append(kib, r.state.SysUsage().(*syscall.Rusage).Maxrss)
			}
		}
		if err != nil {
			return 0, err
		}
	}
	slices.Sort(kib)
	return kib[len(kib)/2], nil
}

// goBench runs the named benchmarks of a package in-process and returns
// their ns/op by name (without the -GOMAXPROCS suffix).
func goBench(pkg, pattern string) (map[string]float64, error) {
	benchtime := "1s"
	if *quick {
		benchtime = "20x"
	}
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, pkg)
	cmd.Dir = *repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test %s: %v: %s", pkg, err, lastLines(string(out)))
	}
	found := map[string]float64{}
	for _, m := range benchLine.FindAllStringSubmatch(string(out), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		found[m[1]] = v
	}
	return found, nil
}

var benchLine = regexp.MustCompile(`(?m)^(Benchmark[^\s-]+)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op`)

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " / ")
}

// tenThousandRules: section 5.
func tenThousandRules() {
	found, err := goBench("./internal/policy", "^BenchmarkOpinions10000Rules(CompoundCommand)?$")
	for _, b := range []struct{ name, what string }{
		{"BenchmarkOpinions10000Rules", "one request against 10,000 rules, in-process"},
		{"BenchmarkOpinions10000RulesCompoundCommand", "one 4 KiB compound command line against 10,000 rules, each command decided, in-process"},
	} {
		if ns, ok := found[b.name]; err == nil && ok {
			d := time.Duration(ns)
			add(row{b.what + " (`" + b.name + "`)", ms(d), "-", "-", "< 1 ms", yes(d < time.Millisecond)})
		} else {
			skip(b.what, fmt.Sprintf("failed: %v", err))
		}
	}

	rules, cr := tenThousandRuleFiles()
	req := file("exec.json", []byte(execRequest))
	const what = "one request against 10,000 prefix rules, whole process: `askperm check` vs Codex `execpolicy check`"
	codex, _ := filepath.Glob(filepath.Join(*repo, ".ci/tools/node_modules/@openai/codex-linux-*/vendor/*/bin/codex"))
	if len(codex) == 0 {
		skip(what, "Codex is not installed (.ci/run installs it)")
		return
	}
	home := newHome()
	a, c, err := pair(*runs,
		timed(fixed([]string{*askperm, "check", "--json", "--rules", rules, "--no-remember"}), env(home), fixed(req), `"allow"`),
		timed(fixed([]string{codex[0], "execpolicy", "check", "--rules", cr, "cmd9990", "-a", "x"}), env(home), fixed(req), "allow"))
	if err != nil {
		skip(what, "failed: "+err.Error())
		return
	}
	add(row{what, ms(a), ms(c) + " (Codex)", ratio(a, c), "< 1× (faster)", yes(a < c)})
}

// execRequest matches one of tenThousandRuleFiles' rules near the end (an
// allow).
const execRequest = `{"tool":"shell","action":"exec","arguments":{"argv":["cmd9990","-a","x"]}}`

// tenThousandRuleFiles writes the same 10,000 prefix rules as askperm's
// rules file and as Codex's, and returns their paths.
func tenThousandRuleFiles() (ours, codex string) {
	var o, c strings.Builder
	for i := range 10000 {
		d := i % 3
		fmt.Fprintf(&o, "[[rule]]\nname = \"r%d\"\ndecision = \"%s\"\n[[rule.when]]\npath = \"$.argv\"\nprefix = [\"cmd%d\", [\"-a\", \"-b\"]]\n",
			i, []string{"allow", "prompt", "deny"}[d], i)
		fmt.Fprintf(&c, "prefix_rule(pattern=[\"cmd%d\", [\"-a\", \"-b\"]], decision=\"%s\")\n",
			i, []string{"allow", "prompt", "forbidden"}[d])
	}
	return file("rules.toml", []byte(o.String())), file("rules.codex", []byte(c.String()))
}

// decisionWithRules: a decision with a 10,000-rule file against the same
// decision without rules (a canned answer), whole process, both with
// memory on: every process but the first decides from the file's
// compiled cache beside the state.
func decisionWithRules(rules, req string) {
	const what = "a decision with a 10,000-rule file vs without rules, whole process"
	home := newHome()
	state := filepath.Join(home, "state")
	a, n, err := pair(*runs,
		timed(fixed([]string{*askperm, "--rules", rules, "--state-dir", state}), env(home), fixed(req), `"allow"`),
		timed(fixed([]string{*askperm, "--answer", "allow-once", "--state-dir", state}), env(home), fixed(req), `"allow"`))
	if err != nil {
		skip(what, "failed: "+err.Error())
		return
	}
	add(row{what, ms(a), ms(n) + " (no rules)", ratio(a, n), "< 3×", yes(a < 3*n)})
}

// stateStore: section 7.
func stateStore() {
	found, err := goBench("./internal/pipeline", "^BenchmarkDecide(Stateless|WithMemory)$")
	s, ok1 := found["BenchmarkDecideStateless"]
	m, ok2 := found["BenchmarkDecideWithMemory"]
	if err == nil && ok1 && ok2 {
		add(row{"the state store, in-process: a canned decision with memory vs without (`BenchmarkDecide*`)",
			ms(time.Duration(m)), ms(time.Duration(s)) + " (no memory)", fmt.Sprintf("%.2f×", m/s),
			"-", fmt.Sprintf("+%.2f ms", (m-s)/1e6)})
	} else {
		skip("the state store, in-process", fmt.Sprintf("failed: %v", err))
	}

	home := newHome()
	state := filepath.Join(home, "state")
	plain := fixed(file("request.json", request(nil)))
	a, b, err := pair(*runs,
		timed(fixed([]string{*askperm, "--answer", "allow-once", "--state-dir", state}), env(home), sessionFiles("store", *runs), `"allow"`),
		timed(fixed([]string{*askperm, "--answer", "allow-once", "--no-remember"}), env(home), plain, `"allow"`))
	if err != nil {
		skip("the state store, whole process", "failed: "+err.Error())
	} else {
		add(row{"the state store, whole process: canned answer with `--state-dir` vs `--no-remember`",
			ms(a), ms(b) + " (no memory)", ratio(a, b), "-", fmt.Sprintf("+%.2f ms", float64(a-b)/1e6)})
	}

	// 50 helpers at once in one session, with memory; against 50 without.
	one := file("session.json", request(withSession("bench-parallel")))
	reps := max(3, *runs/3)
	wave := func(memory bool) func(int) (time.Duration, error) {
		return func(int) (time.Duration, error) {
			args := []string{*askperm, "--answer", "allow-once", "--no-remember"}
			if memory {
				args = []string{*askperm, "--answer", "allow-once", "--state-dir", filepath.Join(newHome(), "state")}
			}
			errs := make(chan error, 50)
			start := time.Now()
			for range 50 {
				go func() {
					_, err := spawn(args, env(home), one, `"allow"`)
					errs <- err
				}()
			}
			var first error
			for range 50 {
				if err := <-errs; err != nil && first == nil {
					first = err
				}
			}
			return time.Since(start), first
		}
	}
	a, b, err = pair(reps, wave(true), wave(false))
	if err != nil {
		skip("50 parallel helpers in one session", "failed: "+err.Error())
		return
	}
	add(row{fmt.Sprintf("50 parallel helpers in one session, all done: with memory vs `--no-remember` (median of %d)", reps),
		ms(a), ms(b) + " (no memory)", ratio(a, b), "-", fmt.Sprintf("+%.2f ms per helper", float64(a-b)/50e6)})
}

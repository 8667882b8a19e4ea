package shell

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

// stubs are programs for the oracle's PATH: rm logs its words and runs
// nothing; the wrappers askperm does not find on the machine run their
// words.
var stubs = map[string]string{
	"rm":             `printf '%s\n' "#rm $*" >> "$ORACLE_LOG"`,
	"sudo":           `while [ "${1#-}" != "$1" ]; do [ "$1" = -u ] && shift; shift; done; exec "$@"`,
	"doas":           `exec "$@"`,
	"unknownwrapper": `shift 2; exec "$@"`,
	"curl":           `echo 'rm -rf ~'`,
}

// tools are the real programs the oracle's lines may run.
var tools = []string{"bash", "sh", "dash", "zsh", "env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "find", "flock", "cat", "true", "false", "echo", "wait"}

// oracle runs lines under shell, each in a subshell, with rm a stub and
// HOME a scratch directory, and returns for each line whether rm ran with
// -rf first.
func oracle(t *testing.T, shell string, lines []string) []bool {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	log, work := filepath.Join(dir, "log"), filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for i, l := range lines {
		// In eval, a line the shell cannot parse ends its subshell only.
		fmt.Fprintf(&script, "echo '#line %d' >> \"$ORACLE_LOG\"\n( eval %s ) </dev/null >/dev/null 2>&1\n", i, shq(l))
	}
	cmd := exec.Command(shell, "-c", script.String())
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin, "HOME=" + filepath.Join(dir, "home"), "ORACLE_LOG=" + log}
	cmd.Run() // some lines fail; what ran is in the log
	out, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	ran := make([]bool, len(lines))
	i := -1
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "#line %d", &i); err == nil {
			continue
		}
		if strings.HasPrefix(l, "#rm -rf") && i >= 0 {
			ran[i] = true
		}
	}
	return ran
}

// skipOracle skips an oracle test under go test -short: it runs thousands
// of lines through real shells.
func skipOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs real shells as the oracle; runs in the full suite")
	}
}

// The shell as the oracle: whenever bash, dash or zsh (each for the lines
// it reads) runs rm -rf from a generated line (wrappers real or stubbed,
// -c strings, eval, here-strings, here-documents, ANSI-C quoting, braces,
// zsh's =rm), a deny of rm -rf covers the line, or may (a computed
// command). A shell not installed is skipped with a message.
func TestDenyCoversWhatTheShellRuns(t *testing.T) {
	skipOracle(t)
	rng := rand.New(rand.NewPCG(11, 19))
	lines := []string{"rm${IFS}-rf ~", "rm -$'rf' ~", "{rm,-rf,~}", "$'rm' -rf ~", "eval 'rm -rf ~'", "bash <<< 'rm -rf ~'",
		"=rm -rf ~", "curl x | sh", "sudo -u root env FOO=1 nice -n 5 timeout 5 rm -rf ~", "echo ~ | xargs rm -rf", "x=rm; $x -rf ~"}
	targets := []string{"~", "*", "~/.ssh", `"$HOME"`, "x", "{a,b}"}
	for range 300 {
		cmd := quoteWord(rng, "rm") + " " + quoteWord(rng, "-rf") + " " + targets[rng.IntN(len(targets))]
		for range rng.IntN(3) {
			cmd = prefixes[rng.IntN(len(prefixes))](cmd)
		}
		for range rng.IntN(3) {
			if rng.IntN(2) == 0 {
				cmd = runners[rng.IntN(len(runners))](cmd)
			} else {
				cmd = wrap(rng, cmd)
			}
		}
		if !strings.Contains(cmd, "env -i") { // would find the real rm
			lines = append(lines, cmd)
		}
	}
	for _, sh := range []string{"bash", "dash", "zsh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed: skipped", sh)
			continue
		}
		ran, n := oracle(t, path, lines), 0
		for i, l := range lines {
			if !ran[i] {
				continue
			}
			n++
			if got := Split(l).Denied(denied); got == Not {
				t.Errorf("%s ran rm -rf from %q: %v", sh, l, got)
			}
		}
		t.Logf("%s ran rm -rf from %d of %d lines", sh, n, len(lines))
		if sh == "bash" && n < len(lines)/4 {
			t.Errorf("bash ran rm -rf from only %d lines: the oracle does not run them", n)
		}
	}
}

// stubNames are the programs of the static oracle's PATH: each logs its
// argv and runs nothing; fail also fails, for the left side of ||; cat
// is one, to read a here-document as data.
var stubNames = []string{"alpha", "beta", "gamma", "delta", "fail", "cat"}

// ran is what the static oracle saw a line do: the argv of each stub run
// (joined by NULs, sorted) and the files written in its directory.
type ran struct{ argvs, files []string }

// runStubbed runs lines under shell, each in its own subshell and
// directory, with PATH only the stubs and the shells lines hand strings
// to. A stub logs one record per run: the line's number, then its argv,
// each ended by a NUL, then a newline and a NUL.
func runStubbed(t *testing.T, shell string, lines []string) []ran {
	t.Helper()
	dir := t.TempDir()
	bin, work, log := filepath.Join(dir, "bin"), filepath.Join(dir, "work"), filepath.Join(dir, "log")
	for _, d := range []string{bin, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "in"), []byte("input\n"), 0o644); err != nil { // ../../in of a line
		t.Fatal(err)
	}
	for _, name := range stubNames {
		body := `printf '%s\0' "$ORACLE_LINE" "${0##*/}" "$@" '` + "\n" + `' >> "$ORACLE_LOG"`
		switch name {
		case "fail":
			body += "\nexit 1"
		case "cat": // prints what it reads
			body += "\nwhile IFS= read -r l || [ -n \"$l\" ]; do printf '%s\\n' \"$l\"; done"
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"bash", "sh", "zsh", "env"} {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var script strings.Builder
	for i, l := range lines {
		d := filepath.Join(work, fmt.Sprint(i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&script, "cd %s && ( ORACLE_LINE=%d; export ORACLE_LINE; eval %s\nwait ) </dev/null >/dev/null 2>&1\n", shq(d), i, shq(l))
	}
	file := filepath.Join(dir, "script")
	if err := os.WriteFile(file, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell, file)
	cmd.Env = []string{"PATH=" + bin, "HOME=" + filepath.Join(dir, "home"), "ORACLE_LOG=" + log}
	stderr, _ := cmd.CombinedOutput() // some lines fail; what ran is in the log
	out, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("%s ran nothing: %v: %.500s", shell, err, stderr)
	}
	runs := make([]ran, len(lines))
	for _, rec := range strings.Split(string(out), "\n\x00") {
		fields := strings.Split(strings.TrimSuffix(rec, "\x00"), "\x00")
		var i int
		if _, err := fmt.Sscan(fields[0], &i); err != nil || len(fields) < 2 || i < 0 || i >= len(lines) {
			continue
		}
		runs[i].argvs = append(runs[i].argvs, strings.Join(fields[1:], "\x00"))
	}
	for i := range runs {
		slices.Sort(runs[i].argvs)
		entries, err := os.ReadDir(filepath.Join(work, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			runs[i].files = append(runs[i].files, e.Name())
		}
	}
	return runs
}

// missing are the strings of a not in b, as multisets.
func missing(a, b []string) []string {
	var out []string
	b = slices.Clone(b)
	for _, s := range a {
		if i := slices.Index(b, s); i >= 0 {
			b = slices.Delete(b, i, i+1)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// lineGen generates command lines of one dialect from a grammar: simple
// commands of stub programs and literal words in every quoting form,
// assignments, redirections to files, comments, ; && || | & and
// newlines, ( ), { ; }, if, for, case, and -c strings, each line so that
// every command in it runs once; and, in some lines, one of the forms
// section 10 calls opaque.
type lineGen struct {
	rng *rand.Rand
	d   dialect
	// zsh says zsh is installed, for zsh -c strings.
	zsh bool
}

// staticWords are literal words, each written as a shell of every
// dialect reads it back whole.
var staticWords = []string{"x", "a1", "-v", "--flag=v", "k=v", "x.y", "a,b", "{}", "@", "'two words'", `"dq \"in\" \\ \$ \` + "`" + `"`,
	`a\ b`, `\*`, `\?`, `'*'`, `a'b'"c"`, "''", `""`, `'$HOME'`, `"#"`, `\#x`, "-", "%", "+x", `'(' ')'`, `"a'b"`, `'a"b'`}

// dialectWords are literal words only some dialects read whole.
var dialectWords = [...][]string{
	bash:  {`$'\x41\t'`, `$'it\'s'`, "p{a,b}", "n{1..3}", "a~", "a#b", "{x,y}{1,2}"},
	posix: {"a~", "a#b", "{x}"},
	zsh:   {`$'\x41\t'`, `$'it\'s'`, "p{a,b}", "{x,y}{1,2}"},
}

func (g *lineGen) word() string {
	if ws := dialectWords[g.d]; g.rng.IntN(4) == 0 {
		return ws[g.rng.IntN(len(ws))]
	}
	return staticWords[g.rng.IntN(len(staticWords))]
}

// redirects are output redirections to files, and those that are not.
var redirects = [...][]string{
	bash: {"> o1", ">> o2", "2> e1", ">| o3", "&> o4", "&>> o5", "> /dev/null", "2>&1", "> 'o 6'", "3<> rw", `>"o7"`, "1>o8",
		"< ../../in", "3<../../in", ">&2", "3>&1 1>&2", "> o1 2>&1", "0<../../in >&0", "3<../../in 1>&3", "<&0"},
	posix: {"> o1", ">> o2", "2> e1", ">| o3", "> /dev/null", "2>&1", "> 'o 6'", "3<> rw", `>"o7"`, "1>o8", "< ../../in",
		">&2", "> o1 2>&1", "0<../../in >&0"},
	zsh: {"> o1", ">> o2", "2> e1", ">| o3", "&> o4", "> /dev/null", "2>&1", "> 'o 6'", "3<> rw", `>"o7"`, "< ../../in",
		">&2", "> o1 2>&1", "3<../../in 1>&3"},
}

// simple is a simple command and its exit status.
func (g *lineGen) simple() (string, int) {
	var b strings.Builder
	if g.rng.IntN(5) == 0 {
		b.WriteString([]string{"LANG=C ", "TZ='UTC' ", "LC_ALL=C NO_COLOR=1 ", "FOO=1 "}[g.rng.IntN(4)])
	}
	name, status := stubNames[g.rng.IntN(4)], 0
	if g.rng.IntN(6) == 0 {
		name, status = "fail", 1
	}
	q := quoteWord(g.rng, name)
	for g.d == posix && strings.Contains(q, "$'") {
		q = quoteWord(g.rng, name)
	}
	b.WriteString(q)
	for range g.rng.IntN(4) {
		b.WriteString(" " + g.word())
	}
	if g.rng.IntN(8) == 0 { // a commit message, as agents write one
		b.WriteString(" \"$(cat <<'EOF'\nsubject: a $x `y`\n\n  body\\n\n\nEOF\n)\"")
	}
	b.WriteString(g.redirect(4))
	return b.String(), status
}

// redirect is, one time in n, a redirection.
func (g *lineGen) redirect(n int) string {
	if g.rng.IntN(n) != 0 {
		return ""
	}
	rs := redirects[g.d]
	return " " + rs[g.rng.IntN(len(rs))]
}

// bodies are compound commands that run their list once.
var bodies = []string{"( %s )", "{ %s; }", "for i in one; do %s; done", "case k in z) ;; k) %s;; esac"}

// element is a command of a list: simple or compound, and its status.
func (g *lineGen) element(depth int) (string, int) {
	if depth > 2 {
		return g.simple()
	}
	switch k := g.rng.IntN(13); k {
	case 0:
		a, _ := g.simple()
		b, s := g.simple()
		return a + " | " + b, s
	case 1, 2, 3, 4:
		l, s := g.list(depth + 1)
		return fmt.Sprintf(bodies[k-1], l) + g.redirect(2), s
	case 5:
		c, cs := g.simple()
		if cs != 0 {
			c = "! " + c
		}
		l, s := g.list(depth + 1)
		return "if " + c + "; then " + l + "; fi", s
	case 6, 7:
		return g.dashC(depth)
	}
	return g.simple()
}

// dashC is a list handed to a shell as a literal -c string.
func (g *lineGen) dashC(depth int) (string, int) {
	type shell struct {
		prefix string
		d      dialect
	}
	shells := []shell{{"bash -c ", bash}, {"bash --norc -c ", bash}, {"sh -c ", posix}, {"env LANG=C sh -c ", posix}, {"env -i PATH=\"$PATH\" ORACLE_LINE=\"$ORACLE_LINE\" ORACLE_LOG=\"$ORACLE_LOG\" bash -c ", bash}}
	if g.zsh {
		shells = append(shells, shell{"zsh -c ", zsh})
	}
	sh := shells[g.rng.IntN(len(shells))]
	inner := &lineGen{g.rng, sh.d, g.zsh}
	l, s := inner.list(depth + 1)
	return sh.prefix + shq(l), s
}

// list is elements joined by operators, each run once, and its status.
func (g *lineGen) list(depth int) (string, int) {
	out, status := g.element(depth)
	for range g.rng.IntN(3) {
		op := []string{"; ", " && ", " || ", "\n", " | "}[g.rng.IntN(5)]
		switch {
		case op == " && " && status != 0, op == " || " && status == 0:
			op = "; "
		case op == " | ":
			e, s := g.simple()
			out, status = out+op+e, s
			continue
		}
		e, s := g.element(depth)
		out, status = out+op+e, s
	}
	return out, status
}

// opaqueForms are forms section 10 calls opaque, in each dialect.
var opaqueForms = [...][]string{
	bash: {"alpha $(beta x)", "alpha `beta`", `alpha "$HOME"`, "alpha $HOME", "alpha <(beta)", "alpha $((1+2))", "eval 'alpha x'",
		"eval alpha x", "source ./none", ". ./none", "f() { alpha y; }; f", "alpha *", "alpha ?", "alpha [ab]", "((x=1))", "[[ -v x ]]",
		"x=alpha; $x z", "alpha ~/f", "alpha x > ~/f", "bash <<'EOF'\nalpha h\nEOF", "delta <<EOF\nx\nEOF", "alpha <<< x",
		"PATH=/none alpha", "bash -c \"$x\"", "alias a=alpha; a", "echo x | bash", "alpha > \"$HOME/f\"",
		"exec alpha", "let x=1", "declare -a x=(a)", "alpha x(N)", "> r1", ">> r2 2>&1", "FOO=1 > r3", "{ LANG=C; } > r4",
		"alpha | > r5", "2> r6 &", "PAGER=alpha", "GIT_PAGER=x alpha", "alpha 0</dev/tcp/127.0.0.1/1 >&0"},
	posix: {"alpha $(beta x)", "alpha `beta`", `alpha "$HOME"`, "alpha $((1+2))", "eval 'alpha x'", ". ./none", "f() { alpha y; }; f",
		"alpha *", "alpha [ab]", "alpha ~/f", "sh <<'EOF'\nalpha h\nEOF", "delta <<EOF\nx\nEOF", "alpha $'x'", "alpha {a,b}",
		"PATH=/none alpha", "[[ x ]] && alpha", "> r1", "FOO=1 > r3", "PAGER=alpha"},
	zsh: {"alpha $(beta x)", `alpha "$HOME"`, "alpha =(beta)", "=alpha x", "alpha *(N)", "alpha x(N)", "alpha *", "eval 'alpha x'",
		"f() { alpha y; }; f", "alpha <(beta)", "((x=1))", "alpha ~/f", "alpha n{1..3}", "alpha a#b", "repeat 2 alpha", "> r1",
		"> r2 <<< x", "FOO=1 > r3"},
}

// line is a generated line and whether it holds an opaque form.
func (g *lineGen) line() (string, bool) {
	l, _ := g.list(0)
	if g.rng.IntN(4) == 0 {
		forms := opaqueForms[g.d]
		f := forms[g.rng.IntN(len(forms))]
		if g.rng.IntN(2) == 0 {
			return f + "\n" + l, true
		}
		return l + "\n" + f, true
	}
	switch g.rng.IntN(6) {
	case 0:
		l += " &\nalpha bg"
	case 1:
		l += " # a comment, alpha x"
	case 2:
		l = "# a comment\n" + l
	}
	return l, false
}

// The shell as the oracle for an allow: for every generated line that
// SplitDialect calls fully static, the stubs bash ran are exactly its
// commands (same argv, same count) and the files it wrote exactly its
// output redirections; every file a line read to its end writes is
// listed (not one whose command or -c string is known only in part, or
// writes to a file not known); a line holding an opaque
// form is never allowed.
// Same with dash for sh and zsh for zsh, each skipped with a message
// when not installed.
func TestStaticLinesRunAsSplit(t *testing.T) {
	skipOracle(t)
	_, zshErr := exec.LookPath("zsh")
	for _, tc := range []struct {
		shell string
		d     dialect
		n     int
	}{{"bash", bash, 2000}, {"dash", posix, 700}, {"zsh", zsh, 700}} {
		t.Run(tc.shell, func(t *testing.T) {
			t.Parallel()
			staticLinesRunAsSplit(t, tc.shell, tc.d, tc.n, zshErr == nil)
		})
	}
}

// staticLinesRunAsSplit runs n lines of dialect d under shell and checks
// them (TestStaticLinesRunAsSplit); zsh says zsh -c strings may be used.
func staticLinesRunAsSplit(t *testing.T, shell string, d dialect, n int, zsh bool) {
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed: skipped", shell)
	}
	g := &lineGen{rand.New(rand.NewPCG(uint64(d), 20)), d, zsh}
	var lines []string
	var opaque []bool
	for range n {
		l, o := g.line()
		lines, opaque = append(lines, l), append(opaque, o)
	}
	runs, static := runStubbed(t, path, lines), 0
	for i, l := range lines {
		sl := SplitDialect(l, decision.Dialect(dialectNames[d]))
		allowed := sl.Allowed(func(Command) bool { return true })
		if !slices.ContainsFunc(sl.Commands, func(c Command) bool { return !c.Static() }) && sl.Parsed {
			static++
			var want, files []string
			for _, c := range sl.Commands {
				if !c.Wrapper {
					want = append(want, strings.Join(c.Words, "\x00"))
				}
				for _, r := range c.Redirects {
					files = append(files, r.Target)
				}
			}
			slices.Sort(want)
			slices.Sort(files)
			if !slices.Equal(want, runs[i].argvs) || !slices.Equal(slices.Compact(files), runs[i].files) || !allowed {
				t.Errorf("%s ran %q: only run %q, only split %q; wrote %q, split %q (allowed %v)", shell, l,
					missing(runs[i].argvs, want), missing(want, runs[i].argvs), runs[i].files, files, allowed)
			}
		}
		// A line read to its end lists every file it writes.
		if sl.Parsed && !slices.ContainsFunc(sl.Commands, func(c Command) bool {
			return c.Computed || c.Inner || c.Partial || strings.Contains(c.Why, "a file not known")
		}) {
			var listed []string
			for _, c := range sl.Commands {
				for _, r := range c.Redirects {
					listed = append(listed, r.Target)
				}
			}
			if unlisted := missing(runs[i].files, listed); len(unlisted) > 0 {
				t.Errorf("%s: %q wrote %q, not listed: %s", shell, l, unlisted, summary(sl))
			}
		}
		if allowed && opaque[i] {
			t.Errorf("%s: %q holds an opaque form and is allowed: %s", shell, l, summary(sl))
		}
	}
	t.Logf("%s: %d of %d lines static", shell, static, len(lines))
	if static < len(lines)/3 {
		t.Errorf("%s: only %d lines static: the grammar does not exercise the split", shell, static)
	}
}

package shell

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		line   string
		want   []Command
		parsed bool
	}{
		{"git status -s", []Command{{Words: []string{"git", "status", "-s"}}}, true},
		{`'r'm "-rf" a\ b`, []Command{{Words: []string{"rm", "-rf", "a b"}}}, true},
		{"rm -rf ~", []Command{{Words: []string{"rm", "-rf"}, Opaque: true}}, true},
		{"rm -rf ~/.ssh", []Command{{Words: []string{"rm", "-rf"}, Opaque: true}}, true},
		{"rm -rf *", []Command{{Words: []string{"rm", "-rf"}, Opaque: true}}, true},
		{"cat /tmp/$f x", []Command{{Words: []string{"cat", "/tmp/"}, Opaque: true}}, true},
		{"a~ x{y {}", []Command{{Words: []string{"a~", "x{y", "{}"}}}, true},
		{"{rm,-rf,~} x", []Command{{Words: []string{"rm", "-rf"}, Opaque: true}}, true},
		{"$'r\\x6d' $'-\\162f'", []Command{{Words: []string{"rm", "-rf"}}}, true},
		{`"$d"/rm -rf`, []Command{{Words: []string{"rm", "-rf"}, Opaque: true}}, true},
		{"bash -c 'ls; rm -rf x'", []Command{{Words: []string{"bash", "-c", "ls; rm -rf x"}}, {Words: []string{"ls"}}, {Words: []string{"rm", "-rf", "x"}}}, true},
		{`echo "a\"b\q"`, []Command{{Words: []string{"echo", `a"b\q`}}}, true},
		{"LANG=C ls > x && (cd /; pwd) | wc", []Command{{Words: []string{"ls"}}, {Words: []string{"cd", "/"}}, {Words: []string{"pwd"}}, {Words: []string{"wc"}}}, true},
		{"echo $(id -u)", []Command{{Words: []string{"echo"}, Opaque: true}, {Words: []string{"id", "-u"}}}, true},
		{"LANG=C", nil, true},
		{"a 'b", []Command{{Words: []string{"a", "b"}, Opaque: true}}, false},
	} {
		got := Split(tc.line)
		if got.Parsed != tc.parsed || !slices.EqualFunc(got.Commands, tc.want, func(a, b Command) bool {
			return a.Opaque == b.Opaque && slices.Equal(a.Words, b.Words)
		}) {
			t.Errorf("%q: %+v, want %+v (parsed %v)", tc.line, got, tc.want, tc.parsed)
		}
	}
}

var denied = Deny{Words: []string{"rm", "-rf"}}

// covered reports whether a deny of the words rm -rf covers line.
func covered(line string) bool { return Split(line).Denied(denied) == Covered }

// Finding 3: a deny on leading words or a command glob reaches the
// command through wrappers and shell syntax; a computed command asks.
func TestDenied(t *testing.T) {
	glob := Deny{Covers: func(s string) bool { return strings.HasPrefix(s, "rm -rf ") }, Lead: LeadWords("rm -rf *")}
	for _, tc := range []struct {
		line       string
		words, glb Cover
	}{
		{"sudo rm -rf ~", Covered, Covered},
		{"env rm -rf ~", Covered, Covered},
		{"env FOO=1 rm -rf ~", Covered, Covered},
		{"command rm -rf ~", Covered, Covered},
		{"nohup rm -rf ~", Covered, Covered},
		{"xargs rm -rf", Covered, Covered},
		{"{rm,-rf,~}", Covered, Covered},
		{"bash -c 'rm -rf ~'", Covered, Covered},
		{"$'rm' -rf ~", Covered, Covered},
		{"rm${IFS}-rf ~", Covered, Covered},
		{"rm -$'rf' ~", Covered, Covered},
		{"exec rm -rf ~", Covered, Covered},
		{"builtin rm -rf ~", Covered, Covered},
		{"nice -n 5 rm -rf ~", Covered, Covered},
		{"timeout 5 rm -rf ~", Covered, Covered},
		{"time rm -rf ~", Covered, Covered},
		{"stdbuf -o0 setsid doas rm -rf ~", Covered, Covered},
		{"eval 'rm -rf ~'", Covered, Covered},
		{"eval rm -rf '~'", Covered, Covered},
		{"bash <<< 'rm -rf ~'", Covered, Covered},
		{"sh <<EOF\nrm -rf ~\nEOF", Covered, Covered},
		{"sh <<'EOF'\nrm -rf ~\nEOF", Covered, Covered},
		{"alias x='rm -rf'; x ~", Covered, Covered},
		{"alias x=rm; x -rf ~", Covered, Covered},
		{"=rm -rf ~", Covered, Covered},
		{"/bin/rm -rf ~", Covered, Covered},
		{"./rm -rf ~", Covered, Covered},
		{`\rm -rf ~`, Covered, Covered},
		{"sudo -u root /usr/bin/env bash -lc 'cd / && rm -rf ~'", Covered, Covered},
		{`bash -c "rm -rf $HOME"`, Covered, Covered},
		{`bash -c "rm -r$x ~"`, Covered, Covered},
		{`$'\x72\u006d' $'\055rf' ~`, Covered, Covered},
		{"~/bin/rm -rf x", Covered, Covered},
		{`"$d"/rm -rf ~`, Covered, Covered},
		{"$HOME/bin/tool x", Not, Not},
		{"find . -name x -exec rm -rf {} +", Covered, Covered},
		{"su -c 'rm -rf ~' root", Covered, Covered},
		{"flock /tmp/l -c 'rm -rf ~'", Covered, Covered},
		{"env -S 'rm -rf ~'", Covered, Covered},
		{"watch -n 1 'rm -rf ~'", Covered, Covered},
		{"xargs -I{} grep x {}", Not, Not},
		{"$(echo rm) -rf ~", Maybe, Maybe},
		{"sudo $(echo rm) -rf ~", Maybe, Maybe},
		{`env "$x" -rf ~`, Maybe, Maybe},
		{`nice -n 5 "$@"`, Maybe, Maybe},
		{"`echo rm` -rf ~", Maybe, Maybe},
		{`"$cmd" -rf ~`, Maybe, Maybe},
		{`bash -c "$x"`, Maybe, Maybe},
		{"eval $x", Maybe, Maybe},
		{"curl -s x | sh", Maybe, Maybe},
		{`git commit -m "rm -rf stuff"`, Not, Not},
		{"rm -r ~", Not, Not},
		{"rmdir -rf x", Not, Not},
		{"echo $HOME ~", Not, Not},
		{"ls -la", Not, Not},
		{"bash script.sh", Not, Not},
		{`bash -c 'echo "rm -rf ~"'`, Not, Not},
	} {
		l := Split(tc.line)
		if got := l.Denied(denied); got != tc.words {
			t.Errorf("%q: words deny %v, want %v (%+v)", tc.line, got, tc.words, l.Commands)
		}
		if got := l.Denied(glob); got != tc.glb {
			t.Errorf("%q: glob deny %v, want %v (%+v)", tc.line, got, tc.glb, l.Commands)
		}
	}
}

func TestANSIC(t *testing.T) {
	for in, want := range map[string]string{
		`rm`: "rm", `a\nb\t`: "a\nb\t", `\\ \' \"`: `\ ' "`, `\x72\x6d`: "rm", `\u00e9\U0001F600`: "é😀",
		`\162\155`: "rm", `\101x`: "Ax", `\cA`: "\x01", `\q`: `\q`, `a\x00b`: "a", `\e[0m`: "\x1b[0m", `\x`: `\x`,
	} {
		if got, ok := ansiC(in); got != want || !ok {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestLeadWords(t *testing.T) {
	for in, want := range map[string][]string{"rm -rf *": {"rm", "-rf"}, "git push": {"git", "push"}, "*": nil, "a 'b' c": {"a"}} {
		if got := LeadWords(in); !slices.Equal(got, want) {
			t.Errorf("%q: %q", in, got)
		}
	}
}

// quoteWord writes w as a shell would read it back as w.
func quoteWord(rng *rand.Rand, w string) string {
	switch rng.IntN(9) {
	case 0:
		return "'" + w + "'"
	case 1:
		return `"` + w + `"`
	case 2:
		return `\` + w
	case 3:
		return w[:1] + "''" + w[1:]
	case 4:
		return `"` + w[:1] + `"` + w[1:]
	case 5:
		return "$'" + w + "'"
	case 6:
		return fmt.Sprintf(`$'\x%02x'`, w[0]) + w[1:]
	case 7:
		return fmt.Sprintf(`$'\%03o'`, w[0]) + w[1:]
	}
	return w
}

// shq quotes s as one word.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// delimiters numbers here-document delimiters, so that nested ones differ.
var delimiters int

func delimiter() string { delimiters++; return fmt.Sprint("EOF", delimiters) }

// prefixes put s, a simple command, behind a wrapper that runs it, known
// to askperm or not.
var prefixes = []func(string) string{
	func(s string) string { return "sudo " + s },
	func(s string) string { return "sudo -u root " + s },
	func(s string) string { return "doas " + s },
	func(s string) string { return "env " + s },
	func(s string) string { return "env -i FOO=1 " + s },
	func(s string) string { return "/usr/bin/env " + s },
	func(s string) string { return "command " + s },
	func(s string) string { return "builtin " + s },
	func(s string) string { return "exec " + s },
	func(s string) string { return "nohup " + s },
	func(s string) string { return "nice -n 5 " + s },
	func(s string) string { return "timeout 5 " + s },
	func(s string) string { return "time " + s },
	func(s string) string { return "stdbuf -o0 " + s },
	func(s string) string { return "setsid -f " + s },
	func(s string) string { return "unknownwrapper --flag x " + s },
	func(s string) string { return "find . -exec " + s + " {} +" },
}

// runners hand s, a line, to a shell: a -c string, eval, a here-string or
// here-document fed to a shell, an alias.
var runners = []func(string) string{
	func(s string) string { return "bash -c " + shq(s) },
	func(s string) string { return "sh -ec " + shq(s) + " sh x" },
	func(s string) string { return "/bin/zsh -o errexit -c " + shq(s) },
	func(s string) string { return "dash -c -- " + shq(s) },
	func(s string) string { return "eval " + shq(s) },
	func(s string) string { return "bash <<< " + shq(s) },
	func(s string) string { d := delimiter(); return "{ sh <<'" + d + "'\n" + s + "\n" + d + "\n}" },
	func(s string) string {
		d := delimiter()
		return "{ bash -s <<" + d + "\n" + strings.NewReplacer(`\`, `\\`, "$", `\$`, "`", "\\`").Replace(s) + "\n" + d + "\n}"
	},
	func(s string) string { return "alias w=" + shq(s) + "; w" },
	func(s string) string { return "su -c " + shq(s) + " root" },
	func(s string) string { return "flock lock -c " + shq(s) },
}

// wrap puts s, a command, somewhere a shell runs it.
func wrap(rng *rand.Rand, s string) string {
	wrappers := []func(string) string{
		func(s string) string { return "cd /tmp; " + s },
		func(s string) string { return "true && " + s },
		func(s string) string { return "false || " + s },
		func(s string) string { return s + " | cat" },
		func(s string) string { return "echo x | " + s },
		func(s string) string { return "( " + s + " )" },
		func(s string) string { return "{ " + s + "; }" },
		func(s string) string { return "echo $( " + s + ")" },
		func(s string) string { return "x=$( " + s + ")" },
		func(s string) string { return s + " > /dev/null 2>&1" },
		func(s string) string { return "true\n" + s + "\n\ntrue" },
		func(s string) string { return "if true; then " + s + "; fi" },
		func(s string) string { return "while false; do :; done; " + s },
		func(s string) string { return s + " & wait" },
		func(s string) string { return "{ ! { " + s + "; }; }" },
		func(s string) string { return "{ time { " + s + "; }; }" },
		func(s string) string { return "cat <( " + s + ")" },
		func(s string) string { return "f() { " + s + "; }; f" },
		func(s string) string { return "for i in 1; do " + s + "; done" },
		func(s string) string { return "case x in x) " + s + ";; esac" },
	}
	return wrappers[rng.IntN(len(wrappers))](s)
}

// Shell syntax against deny scopes: a deny of rm -rf covers generated
// wrappings of rm -rf (quotes, ANSI-C quoting, operators, subshells,
// substitutions, redirections, assignments, newlines, wrappers, -c
// strings, eval, here-strings, here-documents, aliases), whatever its
// target.
func TestDenyCoversGeneratedWrappings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 19))
	targets := []string{"~", "*", "~/.ssh", "/", `"$HOME"`, "/tmp/x", "$(pwd)", "{a,b}", ".[!.]*", ""}
	for range 5000 {
		cmd := quoteWord(rng, "rm") + " " + quoteWord(rng, "-rf") + " " + targets[rng.IntN(len(targets))]
		switch rng.IntN(4) {
		case 0:
			cmd = "FOO=1 " + cmd
		case 1:
			cmd = "< /dev/null " + cmd
		case 2:
			cmd += " 2>/dev/null"
		}
		for range rng.IntN(3) {
			cmd = prefixes[rng.IntN(len(prefixes))](cmd)
		}
		line := cmd
		for range 1 + rng.IntN(4) {
			if rng.IntN(2) == 0 {
				line = runners[rng.IntN(len(runners))](line)
			} else {
				line = wrap(rng, line)
			}
		}
		if !Split(line).Parsed {
			t.Fatalf("%q does not parse", line)
		}
		if !covered(line) {
			t.Errorf("%q: the deny does not cover it", line)
		}
	}
}

// FuzzShellDeny: reading never panics, and a deny of rm -rf covers rm -rf
// followed by anything, parsed or not, bare or behind a wrapper or a
// runner (a -c string, eval, a here-string or here-document, an alias).
func FuzzShellDeny(f *testing.F) {
	for i, s := range []string{"~", "*", "~/.ssh", "'", "x; y", ")", "$(", "=(cmd)", "*(e:'id':)", "\\", "<<EOF\nx\nEOF", "\nEOF1\n", "$'\\x41'"} {
		f.Add(s, uint8(i))
	}
	around := append(append([]func(string) string{func(s string) string { return s }}, prefixes...), runners...)
	f.Fuzz(func(t *testing.T, s string, k uint8) {
		Split(s)
		if line := around[int(k)%len(around)]("rm -rf " + s); !covered(line) && !strings.ContainsRune(s, 0) {
			t.Fatalf("%q: the deny does not cover it", line)
		}
	})
}

// The shell as the oracle for $'…': generated escapes decode as bash
// decodes them (skipped where bash is not installed).
func TestANSICAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	rng := rand.New(rand.NewPCG(7, 19))
	pieces := []string{`\n`, `\t`, `\\`, `\'`, `\"`, `\?`, `\a`, `\e`, `\x7`, `\x72`, `\x6dz`, `\u00e9`, `\u2603x`, `\U0001F600`,
		`\1`, `\162`, `\0551`, `\cA`, `\c?`, `\q`, `\x`, `\u`, "r", "m", "-", " ", "%s", `\E`, `\v`, `\f`, `\b`, `\r`}
	var script strings.Builder
	var in []string
	for range 300 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in = append(in, b.String())
		script.WriteString("printf '%s\\0' $'" + b.String() + "'\n")
	}
	out, err := exec.Command(bash, "-c", script.String()).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(string(out), "\x00")
	if len(got) != len(in)+1 {
		t.Fatalf("bash printed %d strings for %d", len(got)-1, len(in))
	}
	for i, s := range in {
		if dec, ok := ansiC(s); !ok || dec != got[i] {
			t.Errorf("$'%s': %q, bash %q", s, dec, got[i])
		}
	}
}

// bash ends a $'…' piece at \c@ as at any NUL.
func TestANSICControlNUL(t *testing.T) {
	if got, ok := ansiC(`a\c@b`); got != "a" || !ok {
		t.Errorf(`a\c@b: %q %v, want "a"`, got, ok)
	}
}

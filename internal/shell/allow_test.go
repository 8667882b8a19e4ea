package shell

import (
	"slices"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

// summary is a line's reading in one string: each command's MatchText,
// then * when it is Static, W when it is a Wrapper, its Why in braces.
func summary(l Line) string {
	var out []string
	for _, c := range l.Commands {
		s := c.MatchText()
		if c.Static() {
			s += " *"
		}
		if c.Wrapper {
			s += " W"
		}
		if c.Why != "" {
			s += " {" + c.Why + "}"
		}
		if len(c.Assigns) > 0 {
			s = strings.Join(c.Assigns, " ") + " " + s
		}
		out = append(out, s)
	}
	if !l.Parsed {
		out = append(out, "(not parsed: "+l.Why+")")
	}
	return strings.Join(out, " | ")
}

// Section 10 for an allow: what is split, what is opaque and why, in
// each dialect.
func TestSplitDialect(t *testing.T) {
	for _, tc := range []struct {
		d          decision.Dialect
		line, want string
	}{
		{"", "go test ./a && go test ./b", "go test ./a * | go test ./b *"},
		{"", "go test ./... && curl x | sh", "go test ./... * | curl x * | sh {runs what another command prints}"},
		{"", "go test $(curl x)", "go test {runs the output of `curl x`} | curl x *"},
		{"", "echo x > ~/.bashrc", "echo x {writes to a file not known; a home directory `~/.bashrc`}"},
		{"", "echo x > out.txt 2>err >>log &>all >|c 2>&1 >/dev/null <in 3<>rw", "echo x > out.txt 2> err >> log &> all >| c 3<> rw *"},
		{"", "FOO=1 go test", "FOO=1 go test {sets FOO}"},
		{"", "LANG=C go test", "LANG=C go test *"},
		{"", "PATH=/tmp go test", "PATH=/tmp go test {sets PATH}"},
		{"", "FOO=1", "FOO=1  {sets FOO}"},
		{"", "LANG=C", ""},
		{"", "# only a comment", ""},
		{"", "PATH=/x; ls", "PATH=/x  {sets PATH} | ls *"},
		{"", "bash -c 'ls && pwd'", "bash -c 'ls && pwd' * W | ls * | pwd *"},
		{"", "env LANG=C sh -ec 'ls' > out", "env LANG=C sh -ec ls > out * W | ls > out *"},
		{"", "sudo bash -c 'ls'", "sudo bash -c ls * | ls *"},
		{"", "bash -i -c 'ls'", "bash -i -c ls * | ls *"},
		{"", "zsh -c 'ls =(x)'", "zsh -c 'ls =(x)' * W | ls {process substitution `=(x)`} | x *"},
		{"", "eval ls", "eval ls {eval} | ls {run by eval}"},
		{"", "source x; . y", "source x {source} | . y {source}"},
		{"", "f() { ls; }; f", "ls * | f {defined in this line (function)}"},
		{"", "alias l=ls; l -a", "alias l=ls {defines an alias} | ls {defined in this line (alias)} | l -a {defined in this line (alias)} | ls -a {defined in this line (alias)}"},
		{"", "python3 <<EOF\nprint(1)\nEOF", "python3 {a here-document fed to python3}"},
		{"", "cat <<EOF > out\nhi $(id)\nEOF", "cat > out * | id *"},
		{"", "ls *.go", "ls {a glob `*.go`}"},
		{"", "git commit -m \"$(cat <<'EOF'\nfix: a $x\n\nEOF\n)\" && echo \"$(cat <<EOF\n$x\nEOF\n)\"",
			"git commit -m 'fix: a $x' * | cat * | echo {runs the output of `cat <<EOF\n$x\nEOF`} | cat *"},
		{"", "echo $(cat <<'EOF'\na b\nEOF\n)", "echo {runs the output of `cat <<'EOF'\na b\nEOF`} | cat *"},
		{"", "echo $HOME", "echo {uses $HOME}"},
		{"", "cat <(ls)", "cat {process substitution `<(ls)`} | ls *"},
		{"", "echo $((x++))", "echo {arithmetic `$((x++))`}"},
		{"", "((x=1)); [[ -v x ]]", " {arithmetic `(( … ))`} |  {a test `[[ … ]]`, which may run arithmetic}"},
		{"", "{ echo a; ls; } > out", "echo a > out * | ls > out *"},
		{"", "echo $(ls) > out", "echo > out {runs the output of `ls`} | ls *"},
		{"", "if a; then b; elif c; then :; else d; fi; while e; do f; done; for i in x; do g; done", "a * | b * | c * | : * | d * | e * | f * | g *"},
		{"", "case x in y) a;; esac; select i in x; do b; done; ( c ); ! d; time e; coproc g", "a * | b * | c * | d * | e * | g *"},
		{"", "exec $x", "exec {uses $x; a computed command; replaces the shell (exec)}"},
		{"", "export FOO=1 && export PATH=/x", "export FOO=1 {sets FOO} | export PATH=/x {sets PATH}"},
		{"", "ls foo(N)", "ls foo N {does not parse as bash} | (not parsed: does not parse as bash)"},
		{"zsh", "ls =(cmd)", "ls {process substitution `=(cmd)`} | cmd *"},
		{"zsh", "=ls -l", "=ls -l {zsh's `=ls` (a path search)}"},
		{"zsh", "ls *(N) foo(e:x:) a^b", "ls {a zsh glob qualifier `*(N)`}"},
		{"zsh", "ls foo(e:x:)", "ls foo {a zsh glob qualifier `foo(e:x:)`}"},
		{"zsh", "git add {a,b}.go", "git add a.go b.go *"},
		{"zsh", "echo {1..3}", "echo 1 2 3 {a range `{1..3}`, which zsh may read otherwise}"},
		{"fish", "ls; and echo (pwd)", "ls and echo pwd {a fish line, which askperm does not read} | (not parsed: a fish line, which askperm does not read)"},
		{"sh", "echo {a,b}", "echo a b {braces `{a,b}`, which sh does not expand}"},
		{"sh", "echo $'x'", "echo x {`$'…'` quoting, which not every sh reads} | (not parsed: `$'…'` quoting, which not every sh reads)"},
		{"dash", "[[ x ]] && ls", " {a glob `[[`; a computed command} | ls *"},
		{"sh", "a &> f", "a &> f {does not parse as sh} | (not parsed: does not parse as sh)"},
	} {
		if got := summary(SplitDialect(tc.line, tc.d)); got != tc.want {
			t.Errorf("%s %q:\n got %s\nwant %s", tc.d, tc.line, got, tc.want)
		}
	}
}

// globCovers is an allow of glob patterns, as the rules apply them.
func globCovers(patterns ...string) func(Command) bool {
	var globs []*Glob
	for _, p := range patterns {
		g, err := CompileGlob(p)
		if err != nil {
			panic(err)
		}
		globs = append(globs, g)
	}
	return func(c Command) bool {
		return slices.ContainsFunc(globs, func(g *Glob) bool { return g.Covers(c) })
	}
}

// An allow covers a line only when it covers every command and none is
// opaque; a -c wrapper is a command like any, to be covered besides the
// commands of its string; a line running no command is allowed by nothing.
func TestAllowed(t *testing.T) {
	covers := globCovers("go test *", "git status", "ls", "pwd", "echo *", "bash -c ls")
	for line, want := range map[string]bool{
		"go test ./... && git status":        true,
		"go test ./a; go test ./b":           true,
		"go test ./... && curl x | sh":       false,
		"go test $(curl x)":                  false,
		"bash -c 'ls && pwd'":                false,
		"bash -c 'pwd'":                      false,
		"bash -c 'ls'":                       true,
		"bash -lc 'ls; git status'":          false,
		"bash -c ls && ls":                   true,
		"sudo bash -c 'ls'":                  false,
		"bash -c \"$x\"":                     false,
		"echo x > ~/.bashrc":                 false,
		"echo x > /dev/null 2>&1":            true,
		"FOO=1 go test ./x":                  false,
		"LANG=C go test ./x":                 true,
		"PATH=/tmp/evil go test ./x":         false,
		"PATH=/tmp/evil; go test ./x":        false,
		"FOO=1":                              false,
		"":                                   false,
		"# ls":                               false,
		"eval ls":                            false,
		"ls; f() { ls; }; f":                 false,
		"{ echo a; } > ~/.bashrc":            false,
		"ls 'a b":                            false,
		"go test ./... # and a comment":      true,
		"(ls) && { pwd; } || ! git status &": true,
	} {
		if got := Split(line).Allowed(covers); got != want {
			t.Errorf("%q: allowed %v, want %v (%s)", line, got, want, summary(Split(line)))
		}
	}
	if got := SplitDialect("ls", decision.DialectFish).Allowed(func(Command) bool { return true }); got {
		t.Error("a fish line is allowed")
	}
}

// A deny reads every dialect widest: zsh's =rm is rm, a fish line is
// read roughly, sh's $'…' as bash reads it.
func TestDeniedDialects(t *testing.T) {
	for _, tc := range []struct {
		d    decision.Dialect
		line string
		want Cover
	}{
		{decision.DialectZsh, "=rm -rf ~", Covered},
		{decision.DialectZsh, "ls *(e:'rm -rf ~':)", Maybe},
		{decision.DialectZsh, "zsh -c 'ls; rm -rf ~'", Covered},
		{decision.DialectFish, "ls; and rm -rf ~", Covered},
		{decision.DialectFish, "echo (rm -rf ~)", Covered},
		{decision.DialectSh, "$'rm' -rf ~", Covered},
		{decision.DialectSh, "[[ x ]] && rm -rf ~", Covered},
		{"dash", "{rm,-rf,~}", Covered},
		{decision.DialectSh, "ls", Not},
	} {
		if got := SplitDialect(tc.line, tc.d).Denied(denied); got != tc.want {
			t.Errorf("%s %q: %v, want %v (%s)", tc.d, tc.line, got, tc.want, summary(SplitDialect(tc.line, tc.d)))
		}
	}
}

// FuzzShellSplit: reading never panics in any dialect; a line is never
// allowed when any command is not Static (a Wrapper included); a Static
// command has words (a redirection alone never is) and its MatchText is
// never empty.
func FuzzShellSplit(f *testing.F) {
	for i, s := range []string{"go test ./... && git status", "ls $(x)", "bash -c 'ls; pwd' > o", "f() { ls; }; f", "echo {a,b} > x",
		"FOO=1 ls 2>&1", "ls =(x) *(N)", "cat <<EOF\nx\nEOF", "''", "PATH=/x", "a 'b", "((x++))", "eval x", "env sh -c ''",
		">f", "ls | >f 2>&1", "ls 0</dev/tcp/h/1 >&0", "GIT_PAGER=x git log", "PAGER=x; ls", "bash -lc ls", "ls 3<in >&3"} {
		f.Add(s, uint8(i))
	}
	dialects := []decision.Dialect{decision.DialectBash, decision.DialectSh, decision.DialectZsh, decision.DialectFish, "dash", ""}
	f.Fuzz(func(t *testing.T, line string, k uint8) {
		l := SplitDialect(line, dialects[int(k)%len(dialects)])
		allowed := l.Allowed(func(Command) bool { return true })
		for _, c := range l.Commands {
			if !c.Static() && allowed {
				t.Fatalf("%q is allowed with %+v not static", line, c)
			}
			if c.Static() && len(c.Words) == 0 {
				t.Fatalf("%q: %+v is static and has no words (a redirection alone)", line, c)
			}
			if c.Static() && c.MatchText() == "" {
				t.Fatalf("%q: %+v is static and matches as nothing", line, c)
			}
		}
	})
}

package shell

import (
	"math/rand/v2"
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
		{"a~ x{y", []Command{{Words: []string{"a~", "x"}, Opaque: true}}, true},
		{`echo "a\"b\q"`, []Command{{Words: []string{"echo", `a"b\q`}}}, true},
		{"FOO=1 ls > x && (cd /; pwd) | wc", []Command{{Words: []string{"ls"}}, {Words: []string{"cd", "/"}}, {Words: []string{"pwd"}}, {Words: []string{"wc"}}}, true},
		{"echo $(id -u)", []Command{{Words: []string{"echo"}, Opaque: true}, {Words: []string{"id", "-u"}}}, true},
		{"X=1", nil, true},
		{"a 'b", []Command{{Words: []string{"a", "b"}, Opaque: true}, {Words: []string{"b"}, Opaque: true}}, false},
	} {
		got := Split(tc.line)
		if got.Parsed != tc.parsed || !slices.EqualFunc(got.Commands, tc.want, func(a, b Command) bool {
			return a.Opaque == b.Opaque && slices.Equal(a.Words, b.Words)
		}) {
			t.Errorf("%q: %+v, want %+v (parsed %v)", tc.line, got, tc.want, tc.parsed)
		}
	}
}

func TestStartsWith(t *testing.T) {
	c := Command{Words: []string{"rm", "-rf"}}
	if !c.StartsWith([]string{"rm"}) || !c.StartsWith([]string{"rm", "-rf"}) || c.StartsWith([]string{"rm", "-rf", "/"}) ||
		c.StartsWith(nil) || c.StartsWith([]string{"-rf"}) {
		t.Error("StartsWith")
	}
}

var denied = []string{"rm", "-rf"}

// covered reports whether a deny of the words rm -rf covers line.
func covered(line string) bool {
	return slices.ContainsFunc(Split(line).Commands, func(c Command) bool { return c.StartsWith(denied) })
}

// quoteWord writes w as a shell would read it back as w.
func quoteWord(rng *rand.Rand, w string) string {
	switch rng.IntN(6) {
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
	}
	return w
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
// wrappings of rm -rf (quotes, operators, subshells, substitutions,
// redirections, assignments, newlines), whatever its target.
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
		line := cmd
		for range 1 + rng.IntN(4) {
			line = wrap(rng, line)
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
// followed by anything, parsed or not.
func FuzzShellDeny(f *testing.F) {
	for _, s := range []string{"~", "*", "~/.ssh", "'", "x; y", ")", "$(", "=(cmd)", "*(e:'id':)", "\\", "<<EOF\nx\nEOF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Split(s)
		if line := "rm -rf " + s; !covered(line) && !strings.ContainsRune(s, 0) {
			t.Fatalf("%q: the deny does not cover it", line)
		}
	})
}

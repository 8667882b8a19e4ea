// Package shell reads a command line as a shell would: a command line →
// its simple commands and opaque parts (protocol section 10). It parses
// with mvdan.cc/sh's bash grammar and keeps, for each simple command
// anywhere in the line (after ; && || & |, newlines, in subshells,
// blocks, compound commands and substitutions), the words known before
// the line runs, after quote removal, brace expansion and the decoding of
// $'…'. Lines a command hands a shell (`bash -c STRING`, `eval ARGS`, a
// here-string or here-document fed to a shell, an alias defined in the
// line) are read too, their commands listed after it. What cannot be
// known (an expansion, a glob, a tilde, a line that does not parse) makes
// a command opaque. Deny (deny.go) says how far a deny reaches a line.
package shell

import (
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command of a line.
type Command struct {
	// Words are the command's leading words after quote removal, as far
	// as they are known before the line runs: at the first word that
	// is not wholly literal they stop, with that word's literal start
	// as the last word when it has one (`rm -rf ~/x` → rm -rf; `cat
	// /tmp/$f` → cat /tmp/).
	Words []string
	// Partial says the last of Words is only the literal start of a word
	// whose rest is not known (`/tmp/` above).
	Partial bool
	// Opaque says the command holds more than its Words: its text is
	// not wholly known before it runs.
	Opaque bool
	// Computed says what the command runs is not known before it runs:
	// its name is not (`$(echo rm) -rf ~`), or it hands a shell a line
	// that is not wholly known (`bash -c "$x"`, `eval $x`, `curl x | sh`).
	Computed bool
	// Text is the command as written, from its first word to its last
	// (assignments and redirections left out); "" in a rough reading.
	Text string
	// Assigns are the assignments before the command (`FOO=1 go test`),
	// as written: shown, never hiding the command.
	Assigns []string
	// Redirects are the command's output redirections to files, part of
	// what an allow must cover (`echo x > ~/.bashrc`); not those to
	// /dev/null nor duplications of descriptors (`2>&1`).
	Redirects []Redirect
	// Inner says the command was read from a line handed to a shell in a
	// way section 10 calls opaque (eval, an alias, a here-document): a
	// deny reads it, an allow never covers it.
	Inner bool
	// Why says in words, for a person, what makes the command not wholly
	// known ("runs the output of `curl x`", "a computed command"); "" for
	// a command that is. Phrases are joined by "; ". It may hold text of
	// the line: it reaches a person only through the display's escaping.
	Why string
	// Wrapper says the command only hands its literal -c string to bash,
	// sh, dash or zsh (`bash -c 'a && b'`, `env FOO=1 sh -c '…'`), whose
	// commands follow it, with its redirections: Line.Allowed judges
	// those and skips it; a deny reads it as any command.
	Wrapper bool
	// starts are the offsets in Text where each of Words starts, -1 for
	// a word that is part of a brace expansion.
	starts []int
	// rest is what follows the first word in Text.
	rest string
}

// Line is a command line read as a shell reads it.
type Line struct {
	// Commands are the line's simple commands in the order they appear,
	// nested ones (in a substitution, a -c string, an eval) after the
	// command holding them. When the line does not parse, they are its
	// rough reading: one opaque command starting at each word, since what
	// runs cannot be known and a deny must cover its words wherever they
	// stand.
	Commands []Command
	// Parsed says the line parses in its dialect (bash for Split). A
	// fish line is never parsed.
	Parsed bool
	// Why says, when the line is not parsed, why ("does not parse as
	// bash", "a fish line, which askperm does not read"); shown for the
	// line as one opaque command.
	Why string
}

// maxDepth bounds how deep lines handed to a shell are read, and
// maxInner how many are read in all; one more is computed (what it runs
// is not known), so that no line costs more than a few readings.
const (
	maxDepth = 8
	maxInner = 64
)

// maxBraces bounds the words a brace expansion is read into; a larger
// one is opaque.
const maxBraces = 64

// Split reads line as bash: SplitDialect(line, decision.DialectBash).
func Split(line string) Line { return SplitDialect(line, decision.DialectBash) }

// SplitDialect reads line as shell d runs it: bash ("" too), sh (POSIX;
// "dash" too), zsh, or fish (never parsed). It never fails: a line that
// does not parse is read roughly (Line.Parsed false).
func SplitDialect(line string, d decision.Dialect) Line {
	budget := maxInner
	return split(line, 0, &budget)
}

func split(line string, depth int, budget *int) Line {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return rough(line)
	}
	r := &reader{src: line, depth: depth, budget: budget, piped: map[*syntax.Stmt]bool{}, aliases: map[string]string{}}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				r.piped[n.Y] = true
			}
		case *syntax.Stmt:
			if call, ok := n.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				r.stmt(n, call)
			}
		}
		return true
	})
	r.expandAliases()
	return Line{Commands: r.out, Parsed: true}
}

// reader reads one parsed line.
type reader struct {
	src    string
	depth  int
	budget *int // lines left to read (maxInner)
	out    []Command
	// piped are the statements whose standard input is a pipe.
	piped map[*syntax.Stmt]bool
	// aliases are the aliases the line defines: name → value.
	aliases map[string]string
}

// word is one word of a command after brace expansion: its known text
// and whether that is all of it.
type word struct {
	text  string
	whole bool
	start int // offset in the line of the argument it comes from; -1 within a brace expansion
}

// stmt reads a simple command, and the lines it hands a shell.
func (r *reader) stmt(st *syntax.Stmt, call *syntax.CallExpr) {
	ws := words(call.Args)
	named := len(ws) > 0 && !ws[0].whole && ws[0].start >= 0
	if base, ok := knownBase(call.Args[0]); named && ok {
		ws[0].text, ws[0].whole = base, true // "$d"/rm, ~/bin/rm: rm
	} else {
		named = false
	}
	begin := int(call.Args[0].Pos().Offset())
	end := int(call.Args[len(call.Args)-1].End().Offset())
	c := Command{Text: r.src[begin:end], rest: r.src[call.Args[0].End().Offset():end]}
	for _, w := range ws {
		if w.text != "" || w.whole {
			c.Words = append(c.Words, w.text)
			c.starts = append(c.starts, max(w.start-begin, -1))
		}
		if !w.whole {
			c.Opaque, c.Partial = true, w.text != ""
			break
		}
	}
	c.Opaque = c.Opaque || named
	c.Computed = computed(ws)
	i := len(r.out)
	r.out = append(r.out, c)
	// Any word may be the command a wrapper runs (sudo, env, xargs…).
	for k, w := range ws {
		if !w.whole {
			break
		}
		switch name := Name(w.text); {
		case handsALine(name) && (r.depth >= maxDepth || *r.budget <= 0):
			r.out[i].Computed = true // more lines than are read
		case shells[name]:
			r.shellArgs(ws[k+1:], st, &r.out[i].Computed)
		case lineOptions[name] != nil:
			r.optionLine(ws[k+1:], lineOptions[name], &r.out[i].Computed)
		case name == "watch": // runs its words with sh -c
			j := k + 1
			for j < len(ws) && ws[j].whole && strings.HasPrefix(ws[j].text, "-") {
				if ws[j].text == "-n" {
					j++
				}
				j++
			}
			text, whole := joined(ws[min(j, len(ws)):])
			r.inner(text, whole, &r.out[i].Computed)
		case name == "eval":
			text, whole := joined(ws[k+1:])
			r.inner(text, whole, &r.out[i].Computed)
		case name == "alias":
			r.alias(ws[k+1:], &r.out[i].Computed)
		}
	}
}

// wrappers are commands known to run the command their words name: one
// of their words that is not known may name any command. (A wrapper not
// listed still never hides a command whose name is known: Line.Denied
// reads a command from each of its words.)
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "command": true, "builtin": true, "exec": true, "nohup": true, "nice": true,
	"timeout": true, "time": true, "xargs": true, "stdbuf": true, "setsid": true, "ionice": true, "taskset": true, "chroot": true,
	"su": true, "runuser": true, "unbuffer": true, "watch": true, "strace": true, "ltrace": true, "flock": true, "chrt": true,
	"systemd-run": true, "parallel": true, "find": true,
}

// computed reports whether the command of words ws runs a command whose
// name is not known: its first word is not, or a word after a wrapper.
func computed(ws []word) bool {
	if len(ws) == 0 || !ws[0].whole && ws[0].text == "" {
		return true
	}
	for k, w := range ws {
		if !w.whole {
			return false
		}
		if wrappers[Name(w.text)] {
			return slices.ContainsFunc(ws[k+1:], func(w word) bool { return !w.whole && w.text == "" })
		}
	}
	return false
}

// knownBase is the base name of w when its text after its last '/' is a
// known literal, whatever precedes it ("$d"/rm, ~/bin/rm, $(x)/rm).
func knownBase(w *syntax.Word) (string, bool) {
	lit, ok := w.Parts[len(w.Parts)-1].(*syntax.Lit)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(lit.Value, '/')
	if i < 0 {
		return "", false
	}
	base := lit.Value[i+1:]
	return base, base != "" && !strings.ContainsAny(base, "*?[{~\\")
}

// lineOptions are the options after which a command takes a command
// line, which it hands a shell (su -c, flock -c, script -c) or splits
// into words (env -S).
var lineOptions = map[string][]string{
	"su": {"-c", "--command"}, "runuser": {"-c", "--command"}, "flock": {"-c", "--command"}, "script": {"-c", "--command"},
	"env": {"-S", "--split-string"},
}

// handsALine reports whether the command name may run a command line
// among its words.
func handsALine(name string) bool {
	return shells[name] || name == "eval" || name == "alias" || name == "watch" || lineOptions[name] != nil
}

// optionLine reads the line that follows one of options in args.
func (r *reader) optionLine(args []word, options []string, computed *bool) {
	for j := 0; j+1 < len(args) && args[j].whole; j++ {
		if slices.Contains(options, args[j].text) {
			r.inner(args[j+1].text, args[j+1].whole, computed)
			return
		}
	}
}

// shells are the interpreters whose -c string, here-string or
// here-document, or standard input, is a command line.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "busybox": true, "yash": true, "posh": true}

// shellArgs reads what a shell given args runs: its -c string, else,
// when no script is named, its standard input (a here-string or
// here-document of st, or a pipe: not known).
func (r *reader) shellArgs(args []word, st *syntax.Stmt, computed *bool) {
	dashC, stdin, j := false, false, 0
	for ; j < len(args); j++ {
		a := args[j]
		if !a.whole || a.text == "-" || len(a.text) < 2 || a.text[0] != '-' && a.text[0] != '+' {
			break
		}
		if a.text == "--" {
			j++
			break
		}
		if strings.HasPrefix(a.text, "--") {
			if a.text == "--rcfile" || a.text == "--init-file" {
				j++
			}
			continue
		}
		if strings.ContainsAny(a.text[1:], "oO") {
			j++ // -o option takes a word
		}
		dashC = dashC || a.text[0] == '-' && strings.Contains(a.text, "c")
		stdin = stdin || a.text[0] == '-' && strings.Contains(a.text, "s")
	}
	switch {
	case dashC && j < len(args):
		r.inner(args[j].text, args[j].whole, computed)
		return
	case dashC:
		return // no string: an error
	case j < len(args) && !stdin:
		return // runs a script file, as any program does
	}
	for _, rd := range st.Redirs {
		switch rd.Op {
		case syntax.WordHdoc:
			text, whole := literal(rd.Word)
			r.inner(text, whole, computed)
		case syntax.Hdoc, syntax.DashHdoc:
			text, whole := hdoc(rd)
			r.inner(text, whole, computed)
		}
	}
	if r.piped[st] {
		*computed = true // runs what another command prints
	}
}

// alias records the aliases defined by args (name=value): each value is
// also read as a line.
func (r *reader) alias(args []word, computed *bool) {
	for _, a := range args {
		name, value, ok := strings.Cut(a.text, "=")
		if !ok {
			continue
		}
		if a.whole {
			r.aliases[name] = value
		}
		r.inner(value, a.whole, computed)
	}
}

// expandAliases reads again, with the alias's value for its name, each
// command named by an alias the line defines.
func (r *reader) expandAliases() {
	if len(r.aliases) == 0 {
		return
	}
	for _, c := range r.out {
		if len(c.Words) == 0 || c.Partial && len(c.Words) == 1 || c.Text == "" {
			continue
		}
		if value, ok := r.aliases[c.Words[0]]; ok {
			var computed bool
			r.inner(value+c.rest, true, &computed)
		}
	}
}

// inner reads text, a line a command hands a shell, whole or only its
// known start (whole false: what it runs is then not known, computed,
// and its last command may go on past the start).
func (r *reader) inner(text string, whole bool, computed *bool) {
	if !whole {
		*computed = true
	}
	if r.depth >= maxDepth || *r.budget <= 0 {
		*computed = true
		return
	}
	*r.budget--
	l := split(text, r.depth+1, r.budget)
	if n := len(l.Commands); !whole && n > 0 {
		last := &l.Commands[n-1]
		last.Opaque = true
		last.Partial = last.Partial || len(last.Words) > 0 && !strings.HasSuffix(text, " ") && !strings.HasSuffix(text, "\t")
	}
	r.out = append(r.out, l.Commands...)
}

// words are the words of args after brace expansion.
func words(args []*syntax.Word) []word {
	var out []word
	for _, a := range args {
		start := int(a.Pos().Offset())
		expanded := braces(a)
		if expanded == nil {
			out = append(out, word{"", false, start}) // too many to read
			continue
		}
		if len(expanded) > 1 {
			start = -1
		}
		for _, w := range expanded {
			text, whole := literal(w)
			out = append(out, word{text, whole, start})
		}
	}
	return out
}

// braces is w brace-expanded (`{rm,-rf}` → rm -rf; w itself when it
// holds no brace expansion), nil when it expands to more than maxBraces
// words. What braces are left are literal (`{}`, `{a}`).
func braces(w *syntax.Word) []*syntax.Word {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) {
		return []*syntax.Word{w}
	}
	var out []*syntax.Word
	for e, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) == maxBraces {
			return nil
		}
		out = append(out, e)
	}
	return out
}

// joined is the words of eval: joined by spaces as far as known.
func joined(ws []word) (string, bool) {
	var texts []string
	for _, w := range ws {
		texts = append(texts, w.text)
		if !w.whole {
			return strings.Join(texts, " "), false
		}
	}
	return strings.Join(texts, " "), true
}

// hdoc is the text of a here-document as far as it is known: an
// unquoted delimiter lets it expand.
func hdoc(rd *syntax.Redirect) (string, bool) {
	if rd.Hdoc == nil {
		return "", true
	}
	_, plain := rd.Word.Parts[0].(*syntax.Lit)
	plain = plain && len(rd.Word.Parts) == 1 && !strings.Contains(rd.Word.Lit(), `\`)
	var b strings.Builder
	for _, p := range rd.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return b.String(), false
		}
		if plain {
			b.WriteString(inDoubleQuotes(lit.Value))
		} else {
			b.WriteString(lit.Value)
		}
	}
	return b.String(), true
}

// literal is the text of w after quote removal as far as it is known
// before the line runs; whole says that is all of w.
func literal(w *syntax.Word) (text string, whole bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s, ok := unquoted(p.Value, i == 0)
			b.WriteString(s)
			if !ok {
				return b.String(), false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				s, ok := ansiC(p.Value)
				b.WriteString(s)
				if !ok {
					return b.String(), false
				}
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar { // $"…" is translated
				return b.String(), false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return b.String(), false
				}
				b.WriteString(inDoubleQuotes(lit.Value))
			}
		default: // an expansion, a substitution, an extended glob
			return b.String(), false
		}
	}
	return b.String(), true
}

// unquoted removes the backslashes of an unquoted literal, stopping
// before what the shell expands: a glob character, or a tilde starting
// the word (first). Braces are expanded before (braces).
func unquoted(s string, first bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
		case strings.IndexByte("*?[", c) >= 0, c == '~' && first && i == 0:
			return b.String(), false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// inDoubleQuotes removes the backslashes that escape in double quotes.
func inDoubleQuotes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// roughSeparators are what may separate or splice commands in a line
// that does not parse, in any shell, and = (an alias's or assignment's
// value may be a command).
const roughSeparators = ";&|()<>{}`$=\n\r\t "

// rough reads a line that does not parse: its words split at blanks and
// at every character that may separate commands, quotes and backslashes
// dropped, and an opaque command starting at each word.
func rough(line string) Line {
	words := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(roughSeparators, r) })
	var out Line
	for i := range words {
		words[i] = strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(words[i])
	}
	for i := range words {
		out.Commands = append(out.Commands, Command{Words: words[i:], Opaque: true})
	}
	return out
}

// Package shell reads a command line as a shell would: a command line →
// its simple commands and opaque parts (protocol section 10). It parses
// with mvdan.cc/sh's grammar of the line's dialect (bash, POSIX sh, zsh;
// fish is not parsed) and keeps, for each simple command
// anywhere in the line (after ; && || & |, newlines, in subshells,
// blocks, compound commands and substitutions), the words known before
// the line runs, after quote removal, brace expansion and the decoding of
// $'…'. Lines a command hands a shell (`bash -c STRING`, `eval ARGS`, a
// here-string or here-document fed to a shell, an alias defined in the
// line) are read too, their commands listed after it. What cannot be
// known before the line runs (an expansion, a glob, a tilde, code the
// line defines or hands over, a line that does not parse) makes a command
// opaque, with the reason in words. Allowed (allow.go) says when an allow
// covers a line, each command judged word by word (Glob, ScopeCovers),
// Denied (deny.go) how far a deny reaches it.
package shell

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/askperm/askperm/decision"
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
	// (assignments and redirections left out); for a command of
	// redirections only, its redirections as written; the whole line in
	// a rough reading.
	Text string
	// Assigns are the assignments before the command (`FOO=1 go test`),
	// as written: shown, never hiding the command.
	Assigns []string
	// Redirects are the command's output redirections to files, part of
	// what an allow must cover (`echo x > ~/.bashrc`); not those to
	// /dev/null nor copies of descriptors (`2>&1`).
	Redirects []Redirect
	// Inner says the command was read from a line handed to a shell in a
	// way section 10 calls opaque (eval, an alias, a here-document or
	// here-string, su/flock/script -c, env -S, watch, the -c string of a
	// shell askperm does not read): a deny reads it, an allow never
	// covers it.
	Inner bool
	// Why says in words, for a person, what makes the command not wholly
	// known ("runs the output of `curl x`", "a computed command"); "" for
	// a command that is. Phrases are joined by "; ". It may hold text of
	// the line: it reaches a person only through the display's escaping.
	Why string
	// Wrapper says the command only hands its literal -c string to bash,
	// sh, dash or zsh (`bash -c 'a && b'`, `env FOO=1 sh -c '…'`), whose
	// commands follow it, with its redirections. An allow and a deny
	// judge it as any command besides those.
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
	// command holding them. A `[[ … ]]` or `(( … ))` test, a declaration
	// (export, declare…), an assignment alone of a variable that is not
	// harmless (PAGER=…) and a statement of redirections only (`>f`) are
	// listed as commands too. When the line does
	// not parse, Commands is its rough reading: one opaque command of all
	// its words, since what runs cannot be known and a deny must cover
	// its words wherever they stand (Line.Denied reads a command from
	// each of its words).
	Commands []Command
	// Parsed says the line parses in its dialect (bash for Split). A
	// fish line is never parsed.
	Parsed bool
	// Why says, when the line is not parsed, why ("does not parse as
	// bash", "a fish line, which askperm does not read"); shown for the
	// line as one opaque command.
	Why string
}

// dialect is a shell whose lines are read.
type dialect int

const (
	bash dialect = iota
	posix
	zsh
	fish // or any shell askperm does not read
)

var dialectNames = [...]string{"bash", "sh", "zsh", "fish"}

func dialectOf(d decision.Dialect) dialect {
	switch d {
	case decision.DialectBash, "":
		return bash
	case decision.DialectSh, "dash":
		return posix
	case decision.DialectZsh:
		return zsh
	}
	return fish
}

var langs = [...]syntax.LangVariant{bash: syntax.LangBash, posix: syntax.LangPOSIX, zsh: syntax.LangZsh}

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

// Of reads the value of dimension d in d's dialect: every reader of a
// dimension's command line goes through it, so that each numbers the
// same commands.
func Of(d decision.Dimension) Line { return SplitDialect(d.Value, d.Shell) }

// SplitDialect reads line as shell d runs it: bash ("" too), sh (POSIX;
// "dash" too), zsh, or fish, which is not parsed (and any other: one
// opaque command). It never fails: a line that does not parse is read
// roughly (Line.Parsed false).
func SplitDialect(line string, d decision.Dialect) Line {
	budget := maxInner
	return split(line, dialectOf(d), 0, &budget)
}

func split(line string, d dialect, depth int, budget *int) Line {
	if d == fish {
		return rough(line, "a "+string(decision.DialectFish)+" line, which askperm does not read")
	}
	f, err := syntax.NewParser(syntax.Variant(langs[d])).Parse(strings.NewReader(line), "")
	if d != bash && (err != nil || d == posix && dollarQuote(f)) {
		return asBash(line, d, err == nil, depth, budget)
	}
	if err != nil {
		return rough(line, "does not parse as "+dialectNames[d])
	}
	r := &reader{src: line, dialect: d, depth: depth, budget: budget, piped: map[*syntax.Stmt]bool{},
		aliases: map[string]string{}, funcs: map[string]bool{}}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil {
				r.funcs[n.Name.Value] = true
			}
			for _, name := range n.Names {
				r.funcs[name.Value] = true
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				r.piped[n.Y] = true
			}
		}
		return true
	})
	// outer are the statements holding the one visited, up to the
	// nearest substitution: their redirections are its too.
	var stack []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if st, ok := n.(*syntax.Stmt); ok {
			r.statement(st, outerRedirs(stack))
		}
		stack = append(stack, n)
		return true
	})
	r.expandAliases()
	return Line{Commands: r.out, Parsed: true}
}

// asBash reads a line that dialect d does not parse, or that sh may
// read otherwise than bash (`$'…'`, which some sh leave as written), as
// bash, for a deny to read widest; every command is opaque, and the line
// not parsed.
func asBash(line string, d dialect, parsed bool, depth int, budget *int) Line {
	l := split(line, bash, depth, budget)
	l.Parsed, l.Why = false, "does not parse as "+dialectNames[d]
	if parsed {
		l.Why = "`$'…'` quoting, which not every sh reads"
	}
	for i := range l.Commands {
		l.Commands[i].Opaque = true
		l.Commands[i].Why = joinWhy(l.Commands[i].Why, l.Why)
	}
	return l
}

// dollarQuote reports whether f, read as POSIX sh, holds `$'…'`: a `$`
// ending a literal before a single-quoted string.
func dollarQuote(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			for i := 1; i < len(w.Parts); i++ {
				lit, ok := w.Parts[i-1].(*syntax.Lit)
				_, sgl := w.Parts[i].(*syntax.SglQuoted)
				found = found || ok && sgl && strings.HasSuffix(lit.Value, "$") && !strings.HasSuffix(lit.Value, `\$`)
			}
		}
		return !found
	})
	return found
}

// outerRedirs are the redirections of the statements in stack (the
// nodes holding a statement), up to the nearest substitution.
func outerRedirs(stack []syntax.Node) []*syntax.Redirect {
	var out []*syntax.Redirect
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return out
		case *syntax.Stmt:
			out = append(out, n.Redirs...)
		}
	}
	return out
}

// reader reads one parsed line.
type reader struct {
	src     string
	dialect dialect
	depth   int
	budget  *int // lines left to read (maxInner)
	out     []Command
	// piped are the statements whose standard input is a pipe.
	piped map[*syntax.Stmt]bool
	// aliases are the aliases the line defines: name → value.
	aliases map[string]string
	// funcs are the functions the line defines.
	funcs map[string]bool
}

// text is the source of node n; "" for a node made by brace expansion,
// which has no place in the line.
func (r *reader) text(n syntax.Node) string {
	begin, end := n.Pos().Offset(), n.End().Offset()
	if !n.Pos().IsValid() || !n.End().IsValid() || begin > end || int(end) > len(r.src) {
		return ""
	}
	return r.src[begin:end]
}

// statement reads st when it is a simple command, or another command
// listed as one: a test, arithmetic, a declaration, an assignment of a
// variable that is not harmless, a statement of redirections only.
func (r *reader) statement(st *syntax.Stmt, outer []*syntax.Redirect) {
	switch cmd := st.Cmd.(type) {
	case nil: // redirections only
		r.redirectionAlone(st, outer, nil, nil)
	case *syntax.CallExpr:
		if len(cmd.Args) > 0 {
			r.stmt(st, cmd, outer)
			return
		}
		var why reasons
		assigns := r.assigns(cmd.Assigns, &why)
		if len(st.Redirs)+len(outer) > 0 {
			r.redirectionAlone(st, outer, assigns, why)
		} else if len(why) > 0 {
			r.out = append(r.out, Command{Text: r.text(cmd), Assigns: assigns, Opaque: true, Why: why.String()})
		}
	case *syntax.TestClause:
		r.out = append(r.out, Command{Text: r.text(cmd), Opaque: true, Why: "a test `[[ … ]]`, which may run arithmetic"})
	case *syntax.ArithmCmd:
		r.out = append(r.out, Command{Text: r.text(cmd), Opaque: true, Why: "arithmetic `(( … ))`"})
	case *syntax.LetClause:
		r.out = append(r.out, Command{Text: r.text(cmd), Opaque: true, Why: "arithmetic (let)"})
	case *syntax.DeclClause:
		r.decl(st, cmd, outer)
	}
}

// redirectionAlone lists a statement of redirections and assignments
// only (`>f`, `{ x=1; } > f`): the shell still opens each file, so `>f`
// empties it, and zsh runs cat for it (NULLCMD, `>f <<<text` writes
// text). It is opaque, and its writes are listed, as written from its
// first redirection.
func (r *reader) redirectionAlone(st *syntax.Stmt, outer []*syntax.Redirect, assigns []string, why reasons) {
	c := Command{Assigns: assigns, Opaque: true}
	if len(st.Redirs) > 0 {
		c.Text = r.src[st.Redirs[0].Pos().Offset():st.Redirs[len(st.Redirs)-1].End().Offset()]
	}
	r.redirects(&c, st.Redirs, outer, &why)
	why.add("a redirection with no command, which still opens its file (`>f` empties it)")
	c.Why = why.String()
	r.out = append(r.out, c)
}

// decl reads a declaration (export, declare, local, readonly, typeset):
// its words are its assignments as the shell reads them.
func (r *reader) decl(st *syntax.Stmt, d *syntax.DeclClause, outer []*syntax.Redirect) {
	c := Command{Text: r.text(d), Words: []string{d.Variant.Value}}
	var why reasons
	for _, a := range d.Args {
		w, ok := r.assignWord(a, &why)
		c.Words = append(c.Words, w)
		if !ok {
			c.Opaque, c.Partial = true, w != ""
			if w == "" {
				c.Words = c.Words[:len(c.Words)-1]
			}
			break
		}
	}
	r.redirects(&c, st.Redirs, outer, &why)
	c.Opaque = c.Opaque || len(why) > 0
	c.Why = why.String()
	r.out = append(r.out, c)
}

// assignWord is assignment a as a declaration's word after quote
// removal, and whether it is wholly known and sets a harmless variable.
func (r *reader) assignWord(a *syntax.Assign, why *reasons) (string, bool) {
	if a.Name == nil { // an option, as -x
		text, whole, because := r.literal(a.Value)
		why.add(because)
		return text, whole
	}
	name := a.Name.Value
	if a.Index != nil || a.Array != nil {
		why.add("assigns an array " + name)
		return name, false
	}
	op := "="
	if a.Append {
		op = "+="
	}
	text, whole, because := "", true, ""
	if a.Value != nil {
		text, whole, because = r.literal(a.Value)
	}
	why.add(because)
	ok := harmless(name, text)
	if !ok {
		why.add("sets " + name)
	}
	if a.Naked {
		return name, ok
	}
	return name + op + text, whole && ok
}

// assigns are the assignments before a command as written; why gets a
// reason for each that is not wholly known or sets a variable that is
// not harmless.
func (r *reader) assigns(as []*syntax.Assign, why *reasons) []string {
	var out []string
	for _, a := range as {
		out = append(out, r.text(a))
		r.assignWord(a, why)
	}
	return out
}

// harmless reports whether setting the variable name to value leaves
// what a command runs as shown: the name says a language, a time zone, a
// terminal's kind or size, colour, or a CI run, and the value names no
// file. Any other variable may: GIT_PAGER, GIT_SSH_COMMAND, GIT_CONFIG_*,
// PAGER, EDITOR, LESSOPEN, GOFLAGS=-toolexec=… run a program under a
// command that looks the same, PATH, LD_*, BASH_ENV choose what runs or
// loads; and an exported one keeps its effect on later commands.
func harmless(name, value string) bool {
	return (slices.Contains(harmlessVars, name) || strings.HasPrefix(name, "LC_")) && !strings.Contains(value, "/")
}

var harmlessVars = []string{"LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
	"CLICOLOR_FORCE", "CI"}

// reasons are the phrases of Command.Why.
type reasons []string

func (w *reasons) add(phrase string) {
	if phrase != "" && !slices.Contains(*w, phrase) {
		*w = append(*w, phrase)
	}
}

func (w reasons) String() string { return strings.Join(w, "; ") }

// word is one word of a command after brace expansion: its known text
// and whether that is all of it.
type word struct {
	text  string
	whole bool
	start int // offset in the line of the argument it comes from; -1 within a brace expansion
	// why says what is not known of it, or, for a whole word, what
	// makes it doubtful (read as bash would, which the dialect may not).
	why string
	// code says it may run code of its own (a zsh glob qualifier).
	code bool
}

// stmt reads a simple command, and the lines it hands a shell.
func (r *reader) stmt(st *syntax.Stmt, call *syntax.CallExpr, outer []*syntax.Redirect) {
	ws := r.words(call.Args)
	var why reasons
	named := len(ws) > 0 && !ws[0].whole && ws[0].start >= 0
	if base, ok := knownBase(call.Args[0]); named && ok {
		why.add(ws[0].why)
		ws[0].text, ws[0].whole = base, true // "$d"/rm, ~/bin/rm: rm
		why.add("a computed command")
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
		why.add(w.why)
		if !w.whole {
			c.Opaque, c.Partial = true, w.text != ""
			break
		}
	}
	c.Computed = computed(ws)
	if c.Computed {
		why.add("a computed command")
	}
	c.Computed = c.Computed || slices.ContainsFunc(ws, func(w word) bool { return w.code })
	c.Assigns = r.assigns(call.Assigns, &why)
	r.redirects(&c, st.Redirs, outer, &why)
	if len(c.Words) > 0 {
		name := c.Words[ranAt(c.Words)]
		switch {
		case c.Words[0] == "":
			why.add("an empty command name")
		case c.Words[0] == "exec":
			why.add("replaces the shell (exec)")
		case r.funcs[name]:
			why.add("defined in this line (function)")
		case codeRunners()[name] != "":
			why.add(codeRunners()[name])
		}
	}
	c.Opaque = c.Opaque || named || len(why) > 0
	c.Why = why.String()
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
		case isShell(name):
			r.shellArgs(ws, k, st, i)
		case lineOptions()[name] != nil:
			r.optionLine(ws[k+1:], lineOptions()[name], i)
		case name == "watch": // runs its words with sh -c
			j := k + 1
			for j < len(ws) && ws[j].whole && strings.HasPrefix(ws[j].text, "-") {
				if ws[j].text == "-n" {
					j++
				}
				j++
			}
			text, whole := joined(ws[min(j, len(ws)):])
			r.inner(text, whole, i, handOff{d: posix, inner: "run by watch"})
		case name == "eval":
			text, whole := joined(ws[k+1:])
			r.inner(text, whole, i, handOff{d: r.dialect, inner: "run by eval"})
		case name == "alias":
			r.alias(ws[k+1:], i)
		}
	}
	if r.out[i].Computed && r.out[i].Why == "" {
		r.out[i].Opaque = true
		r.out[i].Why = joinWhy(r.out[i].Why, "runs a line that is not wholly known")
	}
}

// joinWhy adds the phrase b to the reasons a, once.
func joinWhy(a, b string) string {
	switch {
	case a == "":
		return b
	case slices.Contains(strings.Split(a, "; "), b):
		return a
	}
	return a + "; " + b
}

// codeRunners are the builtins that run code the line does not show, or
// change how later commands run, and why in words.
var codeRunners = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"eval": "eval", "source": "source", ".": "source", "trap": "runs a line later (trap)", "alias": "defines an alias",
		"enable": "loads a builtin (enable)", "fc": "runs history (fc)", "unalias": "changes aliases", "set": "changes shell options",
		"shopt": "changes shell options", "setopt": "changes shell options", "unsetopt": "changes shell options",
		"hash": "changes the command table (hash)", "autoload": "loads functions (autoload)", "zmodload": "loads a module (zmodload)",
		"repeat": "a loop (repeat)", "exec": "replaces the shell (exec)", "builtin": "a builtin by name",
		"command": "a command by name",
	}
})

// ranAt is the index in words of the command that runs: past the
// builtins that run the command their words name (command, builtin,
// exec, with their options).
func ranAt(words []string) int {
	i := 0
	for i+1 < len(words) && (words[i] == "command" || words[i] == "builtin" || words[i] == "exec") {
		i++
		for i+1 < len(words) && strings.HasPrefix(words[i], "-") {
			i++
		}
	}
	return i
}

// dataReaders are the commands that read a here-document as data, not
// code: one fed to any other command makes it opaque.
var dataReaders = []string{"cat", "tee", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "grep"}

// redirects fills c.Redirects from the output redirections of the
// statements holding it (outer) and its own, in the order the shell
// applies them, and why for each that is not wholly known, reaches the
// network (bash's /dev/tcp/, /dev/udp/), copies a descriptor the
// command did not get as a standard stream, writes to one opened for
// reading (`0<in >&0`), reads a file not known, or, a here-document or here-string, is
// fed to a command that is not a data reader.
func (r *reader) redirects(c *Command, own, outer []*syntax.Redirect, why *reasons) {
	// written says, for each descriptor an earlier redirection set, whether
	// it writes to a listed file (or /dev/null).
	written, kept := map[string]bool{}, map[*syntax.Redirect]Redirect{}
	for _, rd := range slices.Concat(outer, own) {
		fd := descriptor(rd)
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			written[fd] = false
			if len(c.Words) > 0 && !slices.Contains(dataReaders, Name(c.Words[0])) {
				what := "a here-document"
				if rd.Op == syntax.WordHdoc {
					what = "a here-string"
				}
				why.add(what + " fed to " + Name(c.Words[0]))
			}
			continue
		}
		target, whole, because := r.literal(rd.Word)
		if clean := path.Clean(target); whole && (strings.HasPrefix(clean, "/dev/tcp/") || strings.HasPrefix(clean, "/dev/udp/")) {
			why.add("opens a network connection `" + target + "`")
			continue
		}
		if (rd.Op == syntax.DplOut || rd.Op == syntax.DplIn) && whole && target == "-" {
			delete(written, fd) // N>&-: closed
			continue
		}
		if (rd.Op == syntax.DplOut || rd.Op == syntax.DplIn) && whole && target != "" && strings.Trim(target, "0123456789") == "" {
			listed, set := written[target]
			switch {
			case rd.Op == syntax.DplOut && set && !listed:
				why.add("writes to descriptor " + target + ", opened for reading")
			case !set && !slices.Contains([]string{"0", "1", "2"}, target):
				why.add("uses descriptor " + target + ", opened outside the command")
			}
			written[fd] = !set || listed
			continue
		}
		if rd.Op == syntax.RdrIn || rd.Op == syntax.DplIn {
			written[fd] = false
			if !whole || because != "" || rd.Op == syntax.DplIn {
				why.add(joinWhy("reads a file not known", because))
			}
			continue
		}
		written[fd] = true
		if rd.Op == syntax.RdrAll || rd.Op == syntax.AppAll || rd.Op == syntax.DplOut {
			written["2"] = true
		}
		if !whole || because != "" {
			why.add(joinWhy("writes to a file not known", because))
			continue
		}
		if target == "/dev/null" {
			continue
		}
		op := rd.Op.String()
		if rd.N != nil {
			op = rd.N.Value + op
		}
		kept[rd] = Redirect{Op: op, Target: target}
	}
	for _, rd := range slices.Concat(own, outer) { // listed as written: its own, then those around it
		if k, ok := kept[rd]; ok {
			c.Redirects = append(c.Redirects, k)
		}
	}
}

// descriptor is the descriptor redirection rd sets: its number, else
// 0 for an input, 1 for an output.
func descriptor(rd *syntax.Redirect) string {
	switch {
	case rd.N != nil:
		return rd.N.Value
	case rd.Op == syntax.RdrIn || rd.Op == syntax.DplIn || rd.Op == syntax.RdrInOut || rd.Op == syntax.Hdoc ||
		rd.Op == syntax.DashHdoc || rd.Op == syntax.WordHdoc:
		return "0"
	}
	return "1"
}

// wrappers are commands known to run the command their words name: one
// of their words that is not known may name any command. (A wrapper not
// listed still never hides a command whose name is known: Line.Denied
// reads a command from each of its words.)
var wrappers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"sudo": true, "doas": true, "env": true, "command": true, "builtin": true, "exec": true, "nohup": true, "nice": true,
		"timeout": true, "time": true, "xargs": true, "stdbuf": true, "setsid": true, "ionice": true, "taskset": true, "chroot": true,
		"su": true, "runuser": true, "unbuffer": true, "watch": true, "strace": true, "ltrace": true, "flock": true, "chrt": true,
		"systemd-run": true, "parallel": true, "find": true,
	}
})

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
		if wrappers()[Name(w.text)] {
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
	return base, base != "" && !strings.ContainsAny(base, "*?[{~\\(")
}

// lineOptions are the options after which a command takes a command
// line, which it hands a shell (su -c, flock -c, script -c) or splits
// into words (env -S).
var lineOptions = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"su": {"-c", "--command"}, "runuser": {"-c", "--command"}, "flock": {"-c", "--command"}, "script": {"-c", "--command"},
		"env": {"-S", "--split-string"},
	}
})

// handsALine reports whether the command name may run a command line
// among its words.
func handsALine(name string) bool {
	return isShell(name) || name == "eval" || name == "alias" || name == "watch" || lineOptions()[name] != nil
}

// optionLine reads the line that follows one of options in args.
func (r *reader) optionLine(args []word, options []string, i int) {
	for j := 0; j+1 < len(args) && args[j].whole; j++ {
		if slices.Contains(options, args[j].text) {
			r.inner(args[j+1].text, args[j+1].whole, i, handOff{d: bash, inner: "run by " + Name(r.out[i].Words[0]) + " " + args[j].text})
			return
		}
	}
}

// shells are the interpreters whose -c string, here-string or
// here-document, or standard input, is a command line, and the dialect
// each is read in: a shell askperm does not read (fish) is read as bash
// for a deny, and its commands are Inner.
var shells = sync.OnceValue(func() map[string]dialect {
	return map[string]dialect{"sh": posix, "bash": bash, "dash": posix, "zsh": zsh, "ksh": fish, "mksh": fish, "ash": fish,
		"busybox": fish, "yash": fish, "posh": fish}
})

func isShell(name string) bool {
	_, ok := shells()[name]
	return ok
}

// plainShellOptions are the option letters of a shell that change
// nothing of what its -c string runs but how it stops or traces: with
// only these, the shell is a Wrapper. A login shell (-l, --login) runs
// the login scripts before its string: not plain.
const plainShellOptions = "ceuxvno"

// shellArgs reads what the shell ws[k] runs: its -c string, else, when
// no script is named, its standard input (a here-string or
// here-document of st, or a pipe: not known). i is the command's index.
func (r *reader) shellArgs(ws []word, k int, st *syntax.Stmt, i int) {
	args := ws[k+1:]
	d, plain := shells()[Name(ws[k].text)], envOnly(ws[:k])
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
			plain = plain && slices.Contains([]string{"--norc", "--noprofile", "--posix"}, a.text)
			continue
		}
		if strings.ContainsAny(a.text[1:], "oO") {
			j++ // -o option takes a word
		}
		plain = plain && strings.Trim(a.text[1:], plainShellOptions) == ""
		dashC = dashC || a.text[0] == '-' && strings.Contains(a.text, "c")
		stdin = stdin || a.text[0] == '-' && strings.Contains(a.text, "s")
	}
	switch {
	case dashC && j < len(args):
		rd := handOff{d: d, redirects: r.out[i].Redirects}
		if d == fish {
			rd = handOff{d: bash, inner: "run by " + Name(ws[k].text) + ", which askperm does not read"}
		}
		r.out[i].Wrapper = plain && d != fish && args[j].whole && r.out[i].Why == ""
		r.inner(args[j].text, args[j].whole, i, rd)
		return
	case dashC:
		return // no string: an error
	case j < len(args) && !stdin:
		return // runs a script file, as any program does
	}
	if d == fish {
		d = bash
	}
	for _, rd := range st.Redirs {
		switch rd.Op {
		case syntax.WordHdoc:
			text, whole, _ := r.literal(rd.Word)
			r.inner(text, whole, i, handOff{d: d, inner: "read from a here-string"})
		case syntax.Hdoc, syntax.DashHdoc:
			text, whole := r.hdoc(rd)
			r.inner(text, whole, i, handOff{d: d, inner: "read from a here-document"})
		}
	}
	if r.piped[st] {
		r.out[i].Computed, r.out[i].Opaque = true, true
		r.out[i].Why = joinWhy(r.out[i].Why, "runs what another command prints")
	}
}

// envOnly reports whether ws, the words before a shell, are nothing or
// env with only options that take nothing and assignments.
func envOnly(ws []word) bool {
	if len(ws) == 0 {
		return true
	}
	if Name(ws[0].text) != "env" {
		return false
	}
	for _, w := range ws[1:] {
		name, value, assign := strings.Cut(w.text, "=")
		if !w.whole || !(w.text == "-i" || w.text == "-" || w.text == "--ignore-environment" || assign && harmless(name, value)) {
			return false
		}
	}
	return true
}

// alias records the aliases defined by args (name=value): each value is
// also read as a line.
func (r *reader) alias(args []word, i int) {
	for _, a := range args {
		name, value, ok := strings.Cut(a.text, "=")
		if !ok {
			continue
		}
		if a.whole {
			r.aliases[name] = value
		}
		r.inner(value, a.whole, i, handOff{d: r.dialect, inner: "defined in this line (alias)"})
	}
}

// expandAliases reads again, with the alias's value for its name, each
// command named by an alias the line defines, and makes it opaque.
func (r *reader) expandAliases() {
	if len(r.aliases) == 0 {
		return
	}
	for i := range r.out {
		c := r.out[i]
		if len(c.Words) == 0 || c.Partial && len(c.Words) == 1 || c.Text == "" {
			continue
		}
		if value, ok := r.aliases[c.Words[0]]; ok {
			r.out[i].Opaque = true
			r.out[i].Why = joinWhy(c.Why, "defined in this line (alias)")
			r.inner(value+c.rest, true, i, handOff{d: r.dialect, inner: "defined in this line (alias)"})
		}
	}
}

// handOff is how a line handed to a shell is read: in dialect d; its
// commands Inner, for the reason inner, unless it is ""; with the
// output redirections of the command handing it.
type handOff struct {
	d         dialect
	inner     string
	redirects []Redirect
}

// inner reads text, a line the command at i hands a shell, whole or only
// its known start (whole false: what it runs is then not known, computed,
// and its last command may go on past the start).
func (r *reader) inner(text string, whole bool, i int, how handOff) {
	if !whole {
		r.out[i].Computed = true
	}
	if r.depth >= maxDepth || *r.budget <= 0 {
		r.out[i].Computed = true
		return
	}
	*r.budget--
	l := split(text, how.d, r.depth+1, r.budget)
	if n := len(l.Commands); !whole && n > 0 {
		last := &l.Commands[n-1]
		last.Opaque = true
		last.Partial = last.Partial || len(last.Words) > 0 && !strings.HasSuffix(text, " ") && !strings.HasSuffix(text, "\t")
		last.Why = joinWhy(last.Why, "its end is not known")
	}
	for k := range l.Commands {
		c := &l.Commands[k]
		c.Redirects = append(c.Redirects, how.redirects...)
		if how.inner != "" {
			c.Inner = true
			c.Why = joinWhy(c.Why, how.inner)
		}
	}
	r.out = append(r.out, l.Commands...)
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

// roughSeparators are what may separate or splice commands in a line
// that does not parse, in any shell, and = (an alias's or assignment's
// value may be a command).
const roughSeparators = ";&|()<>{}`$=\n\r\t "

// rough reads a line that is not parsed: one opaque command, for the
// reason why, of its words split at blanks and at every character that
// may separate commands, quotes and backslashes dropped.
func rough(line, why string) Line {
	words := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(roughSeparators, r) })
	for i := range words {
		words[i] = strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(words[i])
	}
	return Line{Commands: []Command{{Words: words, Opaque: true, Text: line, Why: why}}, Why: why}
}

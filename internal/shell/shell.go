// Package shell reads a command line as a shell would: a command line →
// its simple commands and opaque parts (protocol section 10). It parses
// with mvdan.cc/sh's bash grammar and keeps, for each simple command
// anywhere in the line (after ; && || & |, newlines, in subshells,
// blocks, compound commands and substitutions), the words known before
// the line runs, after quote removal. What cannot be known (an expansion,
// a glob, a tilde, a line that does not parse) makes a command opaque.
package shell

import (
	"strings"

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
	// Opaque says the command holds more than its Words: its text is
	// not wholly known before it runs.
	Opaque bool
	// Text is the command as written, from its first word to its last
	// (assignments and redirections left out); "" in a rough reading.
	Text string
}

// Texts are the readings a deny matches a command by: Text, as written,
// and its known Words after quote removal, joined by spaces and followed
// by one when more follows (Opaque), so that a pattern such as `rm -rf *`
// covers `rm -rf ~`, `'rm' -rf "$HOME"` and `rm -rf $(ls)`. Empty
// readings are left out.
func (c Command) Texts() []string {
	var out []string
	if c.Text != "" {
		out = append(out, c.Text)
	}
	if known := strings.Join(c.Words, " "); known != "" {
		if c.Opaque {
			known += " "
		}
		out = append(out, known)
	}
	return out
}

// Line is a command line read as a shell reads it.
type Line struct {
	// Commands are the line's simple commands in the order they appear,
	// nested ones (in a substitution) after the command holding them.
	// When the line does not parse, they are its rough reading: one
	// opaque command starting at each word, since what runs cannot be
	// known and a deny must cover its words wherever they stand.
	Commands []Command
	// Parsed says the line parses as bash.
	Parsed bool
}

// Split reads line. It never fails: a line that does not parse is read
// roughly (Line.Parsed false).
func Split(line string) Line {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return rough(line)
	}
	out := Line{Parsed: true}
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			c := command(call.Args)
			c.Text = line[call.Args[0].Pos().Offset():call.Args[len(call.Args)-1].End().Offset()]
			out.Commands = append(out.Commands, c)
		}
		return true
	})
	return out
}

// command is the known leading words of args.
func command(args []*syntax.Word) Command {
	var c Command
	for _, w := range args {
		text, whole := literal(w)
		if !whole {
			if text != "" {
				c.Words = append(c.Words, text)
			}
			c.Opaque = true
			return c
		}
		c.Words = append(c.Words, text)
	}
	return c
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
			if p.Dollar { // $'…' has escapes of its own
				return b.String(), false
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
// before what the shell expands: a glob character, a brace, or a tilde
// starting the word (first).
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
		case strings.IndexByte("*?[{", c) >= 0, c == '~' && first && i == 0:
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
// that does not parse, in any shell.
const roughSeparators = ";&|()<>{}`$\n\r\t "

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

// Denied reports whether a deny covers some command of l: a deny of
// leading words (words non-empty) one whose Words start with them,
// another one that covers (a glob, an exact value) one of its Texts.
func (l Line) Denied(words []string, covers func(text string) bool) bool {
	for _, c := range l.Commands {
		if len(words) > 0 {
			if c.StartsWith(words) {
				return true
			}
			continue
		}
		for _, t := range c.Texts() {
			if covers(t) {
				return true
			}
		}
	}
	return false
}

// StartsWith reports whether c's words start with want; an empty want
// starts nothing.
func (c Command) StartsWith(want []string) bool {
	if len(want) == 0 || len(c.Words) < len(want) {
		return false
	}
	for i, w := range want {
		if c.Words[i] != w {
			return false
		}
	}
	return true
}

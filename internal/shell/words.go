package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// words are the words of args after brace expansion.
func (r *reader) words(args []*syntax.Word) []word {
	var out []word
	for _, a := range args {
		start := int(a.Pos().Offset())
		expanded, doubt := r.braces(a)
		if expanded == nil {
			out = append(out, word{"", false, start, "a brace expansion of too many words", false})
			continue
		}
		if len(expanded) > 1 {
			start = -1
		}
		_, _, orig := r.literal(a) // names the parts as written
		for _, w := range expanded {
			text, whole, why := r.literal(w)
			switch {
			case why == "":
				why = doubt
			case orig != "":
				why = orig
			}
			// A zsh glob qualifier may run code: (e:…:), (+fn).
			code := r.dialect == zsh && !whole && qualified(a)
			out = append(out, word{text, whole, start, why, code})
		}
	}
	return out
}

// braces is w brace-expanded (`{rm,-rf}` → rm -rf; w itself when it
// holds no brace expansion), nil when it expands to more than maxBraces
// words. What braces are left are literal (`{}`, `{a}`). doubt is why
// the dialect may not expand them so: sh does not expand braces, zsh
// reads some ranges otherwise; they are still expanded, as a deny reads
// widest.
func (r *reader) braces(w *syntax.Word) (out []*syntax.Word, doubt string) {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) {
		return []*syntax.Word{w}, ""
	}
	for e, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) == maxBraces {
			return nil, ""
		}
		out = append(out, e)
	}
	switch {
	case r.dialect == posix && len(out) > 1:
		doubt = "braces `" + r.text(w) + "`, which sh does not expand"
	case r.dialect == zsh:
		for _, p := range cp.Parts {
			if b, ok := p.(*syntax.BraceExp); ok && b.Sequence {
				doubt = "a range `" + r.text(w) + "`, which zsh may read otherwise"
			}
		}
	}
	return out, doubt
}

// literal is the text of w after quote removal as far as it is known
// before the line runs, whether that is all of w, and, in words, what is
// not known, or, for a whole word, what the dialect may make of it
// otherwise (zsh's `=cmd`).
func (r *reader) literal(w *syntax.Word) (string, bool, string) {
	var b strings.Builder
	doubt := ""
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && r.dialect == zsh && strings.HasPrefix(lit.Value, "=") && len(lit.Value) > 1 {
		doubt = "zsh's `" + r.text(w) + "` (a path search)" // a deny reads =rm as rm (Name)
	}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s, ok := unquoted(p.Value, i == 0, r.dialect)
			b.WriteString(s)
			if !ok {
				if r.dialect == zsh && qualified(w) {
					return b.String(), false, "a zsh glob qualifier `" + r.text(w) + "`"
				}
				if i == 0 && strings.HasPrefix(p.Value, "~") {
					return b.String(), false, "a home directory `" + r.text(w) + "`"
				}
				return b.String(), false, "a glob `" + r.text(w) + "`"
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				s, ok := ansiC(p.Value)
				b.WriteString(s)
				if !ok {
					return b.String(), false, "an invalid character in `" + r.text(p) + "`"
				}
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return b.String(), false, "a translated string `" + r.text(p) + "`"
			}
			for _, q := range p.Parts {
				if out, ok := r.catOutput(q); ok {
					b.WriteString(out)
					continue
				}
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return b.String(), false, r.part(q)
				}
				b.WriteString(inDoubleQuotes(lit.Value))
			}
		default:
			return b.String(), false, r.part(part)
		}
	}
	return b.String(), true, doubt
}

// catOutput is what a command substitution prints when it is only `cat`
// of a here-document wholly known (`"$(cat <<'EOF' … EOF)"`, how agents
// write a commit message): the document without its trailing newlines.
// Its cat is listed as a command of its own.
func (r *reader) catOutput(p syntax.WordPart) (string, bool) {
	cs, ok := p.(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 {
		return "", false
	}
	st := cs.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(call.Assigns) > 0 || len(call.Args) != 1 ||
		call.Args[0].Lit() != "cat" || len(st.Redirs) != 1 || st.Redirs[0].Op != syntax.Hdoc || st.Redirs[0].N != nil {
		return "", false
	}
	text, whole := r.hdoc(st.Redirs[0])
	return strings.TrimRight(text, "\n"), whole
}

// qualified reports whether an unquoted part of w holds a '(': in zsh,
// a glob qualifier.
func qualified(w *syntax.Word) bool {
	return slices.ContainsFunc(w.Parts, func(p syntax.WordPart) bool {
		lit, ok := p.(*syntax.Lit)
		return ok && strings.Contains(lit.Value, "(")
	})
}

// part says in words what an expansion or substitution is.
func (r *reader) part(p syntax.WordPart) string {
	switch p := p.(type) {
	case *syntax.CmdSubst:
		if len(p.Stmts) == 0 {
			return "a command substitution"
		}
		return "runs the output of `" + r.src[p.Stmts[0].Pos().Offset():p.Stmts[len(p.Stmts)-1].End().Offset()] + "`"
	case *syntax.ParamExp:
		if p.Param != nil {
			return "uses $" + p.Param.Value
		}
		return "uses `" + r.text(p) + "`"
	case *syntax.ArithmExp:
		return "arithmetic `" + r.text(p) + "`"
	case *syntax.ProcSubst:
		return "process substitution `" + r.text(p) + "`"
	case *syntax.ExtGlob:
		return "a glob `" + r.text(p) + "`"
	}
	return "`" + r.text(p) + "`"
}

// globs are the characters that make an unquoted word a pattern, in
// each dialect (zsh's qualifiers and extended forms too, as if
// EXTENDED_GLOB were set).
var globs = [...]string{bash: "*?[", posix: "*?[", zsh: "*?[(^#~<|"}

// unquoted removes the backslashes of an unquoted literal, stopping
// before what the shell expands: a glob character, or a tilde starting
// the word (first) or following = or : (bash expands it in words shaped
// as assignments). Braces are expanded before (braces).
func unquoted(s string, first bool, d dialect) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
		case strings.IndexByte(globs[d], c) >= 0,
			c == '~' && (first && i == 0 || i > 0 && (s[i-1] == '=' || s[i-1] == ':')):
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

// hdoc is the text of a here-document as far as it is known: an
// unquoted delimiter lets it expand.
func (r *reader) hdoc(rd *syntax.Redirect) (string, bool) {
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

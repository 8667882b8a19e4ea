package form

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
)

// HeadlineValueRunes caps how much of the first dimension's value the
// headline quotes; the facts below it show the value in full.
const HeadlineValueRunes = 120

// HeadlineNameRunes caps the tool's and the server's names in the
// headline: the agent chooses them, and an uncut one would push the facts
// and the buttons off a phone's screen and read as askperm's own words.
const HeadlineNameRunes = 60

// Headline is the question in one line, the first thing every frontend
// shows: who wants to do what to which value, e.g. `write_file
// (fs-default) wants to write /home/a/p/report.md`. askperm builds it from
// the request's structure (tool, server, action, the first dimension's
// value), never from the agent's prose, and renders each part with Line.
// A value longer than HeadlineValueRunes is cut, and the cut says so. A
// command line of several commands (Options.Commands) is named by them:
// `Bash wants to run 3 commands: go test ./..., git status, curl x`.
func (f *Form) Headline() string {
	r := f.Req
	var who string
	switch {
	case r.Tool != "" && r.Server != "":
		who = headlineCut(r.Tool, HeadlineNameRunes, "") + " (" + headlineCut(r.Server, HeadlineNameRunes, "") + ")"
	case r.Tool != "":
		who = headlineCut(r.Tool, HeadlineNameRunes, "")
	case r.Server != "":
		who = "A tool of " + headlineCut(r.Server, HeadlineNameRunes, "")
	default:
		who = "An agent"
	}
	s := who + " wants to " + actionPhrase(r, len(r.Dimensions) > 0)
	if len(r.Dimensions) > 0 {
		if cs := f.headlineCommands(r.Dimensions[0]); cs != "" {
			return s + " " + cs
		}
		s += " " + headlineCut(r.Dimensions[0].Value, HeadlineValueRunes, ", in full below")
	}
	return s
}

// headlineCut renders v, cut after max runes of the raw value (never
// inside an escape), saying how much more there is, then where.
func headlineCut(v string, max int, where string) string {
	n := utf8.RuneCountInString(v)
	if n <= max {
		return Line(v)
	}
	cut := 0
	for i := range v {
		if cut == max {
			return Line(v[:i]) + " … (" + plural(n-max, "more character") + where + ")"
		}
		cut++
	}
	return Line(v)
}

// argumentsText shows arguments in their canonical form, so a person sees
// what the digest binds, with each string rendered once by Line (and `"`
// as `\"`), not JSON-escaped and then rendered: `C:\Users` shows as
// "C:\\Users", not "C:\\\\Users". The raw bytes are rendered if the
// arguments have no canonical form.
func argumentsText(raw []byte) string {
	c, err := decision.Canonical(raw)
	if err != nil {
		return Line(string(raw))
	}
	var b strings.Builder
	for i := 0; i < len(c); {
		if c[i] != '"' {
			b.WriteByte(c[i])
			i++
			continue
		}
		end := stringEnd(c, i)
		var s string
		if json.Unmarshal(c[i:end], &s) != nil {
			return Line(string(c))
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(Line(s), `"`, `\"`))
		b.WriteByte('"')
		i = end
	}
	return b.String()
}

// stringEnd returns the index just past the JSON string starting at c[i],
// or len(c) when it does not end.
func stringEnd(c []byte, i int) int {
	for j := i + 1; j < len(c); j++ {
		switch c[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(c)
}

package tui

import (
	"regexp"
	"strings"
	"sync"
)

// A detail whose text is a unified diff is drawn with its added lines
// green, its removed lines red and its hunk headers cyan; its file headers
// bold. The text is rendered safe first, as every detail is, and cut into
// lines and wrapped by askperm; the colour goes around each wrapped piece,
// after the gutter, so it never touches the request's own characters.
// Without colour (NO_COLOR, read from the caller's environment by the
// prompt's renderer, which then draws no colour at all) nothing changes
// but the colour.

// diffKind is what a line of a unified diff is.
type diffKind uint8

const (
	diffContext diffKind = iota // also every line of text that is no diff
	diffAdd
	diffDel
	diffHunk
	diffHeader
)

// hunkHeader matches the start of a hunk header, "@@ -1,3 +1,4 @@";
// compiled on first use, not in every process's start-up.
var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`) })

// isFileHeader reports whether lines i and i+1 are a diff's file headers.
func isFileHeader(lines []string, i int) bool {
	return i+1 < len(lines) && strings.HasPrefix(lines[i], "--- ") && strings.HasPrefix(lines[i+1], "+++ ")
}

// diffKinds returns the kind of each of lines when they are a unified
// diff: file headers ("--- " then "+++ ") or a hunk header; nil when they
// are not.
func diffKinds(lines []string) []diffKind {
	diff := false
	for i, l := range lines {
		if hunkHeader().MatchString(l) || isFileHeader(lines, i) {
			diff = true
			break
		}
	}
	if !diff {
		return nil
	}
	kinds := make([]diffKind, len(lines))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case isFileHeader(lines, i):
			kinds[i], kinds[i+1] = diffHeader, diffHeader
			i++
		case hunkHeader().MatchString(l):
			kinds[i] = diffHunk
		case strings.HasPrefix(l, "+"):
			kinds[i] = diffAdd
		case strings.HasPrefix(l, "-"):
			kinds[i] = diffDel
		}
	}
	return kinds
}

// paint draws a wrapped piece of a line of kind k in its colour.
func (st tuiStyles) paint(k diffKind, piece string) string {
	if k == diffContext || piece == "" {
		return piece
	}
	return st.diff[k].Render(piece)
}

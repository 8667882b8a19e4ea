package line

import (
	"fmt"

	"github.com/askperm/askperm/form"
)

// What the line prompt shows of a request. The facts are what a rule
// matches or the decision binds: server, tool, source, action, every
// dimension's value, the workdir, the grants. Everything else the request
// says of itself (title, descriptions, hints, the stated reason, details)
// is the agent's words, and each is marked so.

// factsHeading opens the facts shown again right above each question of
// stage "choice".
const factsHeading = "Key facts:"

// facts writes the facts, one labelled line each, and each item of a
// list (the commands of a command line) on a line of its own under it.
func (pg *page) facts(f *form.Form) {
	for _, fl := range f.Facts() {
		pg.list(fl)
	}
}

// list writes a field and its items.
func (pg *page) list(fl form.Field) {
	pg.field(fl.Label, fl.Value)
	for _, it := range fl.Items {
		pg.listItem(it)
	}
}

// headlineLabel opens the request: the question in one line follows it,
// so that column 0 stays askperm's.
const headlineLabel = "Request"

// request writes the whole request: the question in one line, a warning
// when it hides characters, the facts, the arguments, then the agent's
// words.
func (pg *page) request(f *form.Form) {
	pg.field(headlineLabel, f.Headline())
	if f.HasHidden() {
		pg.own("WARNING: " + form.HiddenWarning + "\n")
	}
	pg.facts(f)
	for _, fl := range f.AgentWords() {
		if fl.Multiline {
			pg.own(fl.Label + ":\n")
			pg.block(fl.Value)
			continue
		}
		pg.field(fl.Label, fl.Value)
	}
	for _, p := range f.Details() {
		pg.field("Detail"+form.AgentsWords, p.Heading())
		pg.block(p.Text)
		if w := p.Warning(); w != "" {
			pg.own(w + "\n")
		}
	}
}

// commands writes every command of each command line, and the line as
// written, for v.
func (pg *page) commands(f *form.Form) {
	for _, fl := range f.CommandLists() {
		pg.list(fl)
	}
	pg.own("End of the commands.\n")
}

// cutDetail is a detail the request view shows cut short, with its whole
// text.
type cutDetail struct {
	form.DetailPreview
	full string // the raw text, rendered only when shown
}

// cutDetails returns the details the request view shows cut short
// (form.PreviewChars); v shows them whole.
func cutDetails(f *form.Form) []cutDetail {
	var cut []cutDetail
	for i, p := range f.Details() {
		if p.Truncated {
			cut = append(cut, cutDetail{p, f.Req.Details[i].Text})
		}
	}
	return cut
}

// details writes the cut details whole, rendered and behind the gutter as
// the request view writes them, each closed by a line of askperm's.
func (pg *page) details(cut []cutDetail) {
	for _, d := range cut {
		pg.field("Detail"+form.AgentsWords+", in full", fmt.Sprintf("%s (all %d characters)", d.Label, d.Chars))
		pg.block(form.Block(d.full))
		pg.own("End of the detail " + d.Label + ".\n")
	}
}

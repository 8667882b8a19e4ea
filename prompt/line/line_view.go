package line

import (
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

// facts writes the facts, one labelled line each.
func (pg *page) facts(f *form.Form) {
	for _, fl := range f.Facts() {
		pg.field(fl.Label, fl.Value)
	}
}

// request writes the whole request: a warning when it hides characters, the
// facts, the arguments, then the agent's words.
func (pg *page) request(f *form.Form) {
	pg.own("An agent asks for permission.\n")
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

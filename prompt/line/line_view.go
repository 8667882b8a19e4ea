package line

import (
	"strings"

	"github.com/askperm/askperm/decision"
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
func (pg *page) facts(r *decision.Request) {
	pg.field("Server", summaryOf(decision.Request{Server: r.Server, Alias: r.Alias}, "Server"))
	pg.field("Tool", summaryOf(decision.Request{Tool: r.Tool, Source: r.Source}, "Tool"))
	pg.field("Action", form.Line(r.Action))
	for _, d := range r.Dimensions {
		pg.field("Value of "+form.DimensionLabel(d), form.Line(d.Value))
	}
	if r.Workdir != nil {
		pg.field("Workdir", form.Line(r.Workdir.Value))
	}
	grants := make([]string, len(r.Grants))
	for i, g := range r.Grants {
		grants[i] = form.Line(g.Name)
		if len(g.Implies) > 0 {
			grants[i] += " (includes " + lines(g.Implies) + ")"
		}
	}
	pg.field("Grants", strings.Join(grants, ", "))
}

// request writes the whole request: a warning when it hides characters, the
// facts, the arguments, then the agent's words.
func (pg *page) request(f *form.Form) {
	r := f.Req
	pg.own("An agent asks for permission.\n")
	if f.HasHidden() {
		pg.own("WARNING: " + form.HiddenWarning + "\n")
	}
	pg.facts(r)
	if r.Arguments != nil {
		pg.field("Arguments", summaryOf(decision.Request{Arguments: r.Arguments}, "Arguments"))
	}
	if r.Annotations != nil {
		pg.agent("Title", form.Line(r.Annotations.Title))
	}
	pg.agent("Action description", form.Line(r.ActionDescription))
	pg.agent("Tool hints", summaryOf(decision.Request{Annotations: r.Annotations}, "Tool hints"))
	if r.Workdir != nil {
		pg.agent("Workdir label", form.Line(r.Workdir.Label))
	}
	for _, g := range r.Grants {
		pg.agent("Description of grant "+form.Line(g.Name), form.Line(g.Description))
	}
	if r.Reason != "" {
		pg.own("Stated reason (agent's words, unverified):\n")
		pg.block(form.Block(r.Reason))
	}
	for _, p := range f.Details() {
		pg.agent("Detail", p.Heading())
		pg.block(p.Text)
		if w := p.Warning(); w != "" {
			pg.own(w + "\n")
		}
	}
}

// summaryOf is the value form's summary gives label for a request that
// holds only part of one: form words these fields, and no other field (a
// dimension named "Tool") can pass for them.
func summaryOf(part decision.Request, label string) string {
	for _, fl := range form.New(&part, form.Options{}).Summary() {
		if fl.Label == label {
			return fl.Value
		}
	}
	return ""
}

func lines(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = form.Line(s)
	}
	return strings.Join(out, ", ")
}

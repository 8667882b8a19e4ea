package form

import (
	"fmt"
	"strings"

	"github.com/askperm/askperm/decision"
)

// Field is one labelled part of a request as a person sees it. Labels are
// askperm's own words; values are untrusted text already rendered safe.
type Field struct {
	Label     string
	Value     string
	Multiline bool // Value may hold newlines and tabs (rendered with Block)
	// Items are the rows of a list (the commands of a command line), each
	// shown on a row of its own under the label after ItemIndent, with
	// every further row of a wrapped item behind a gutter. Each is
	// askperm's marks, then request text rendered safe.
	Items []string
}

// Facts are what a person must see before deciding, in order: who asks,
// the tool and where it runs, the action, every dimension's value, the
// workdir, each grant with what it implies. They are the request's own
// structure, which askperm lays out; every frontend keeps them in view
// whatever the agent's words hold. A command line the caller read
// (Options.Commands) is listed command by command, the first
// MaxFactCommands of it.
func (f *Form) Facts() []Field { return f.FactsUpTo(MaxFactCommands) }

// FactsUpTo are the facts listing the first n commands of each command
// line, for a frontend with less room; all of them when n < 0, each list
// followed by the line as written.
func (f *Form) FactsUpTo(n int) []Field {
	r := f.Req
	var fs []Field
	add := func(label, value string) {
		if value != "" {
			fs = append(fs, Field{Label: label, Value: value})
		}
	}
	add("Server", joinNonEmpty(Line(r.Server), parens("alias", r.Alias)))
	add("Tool", joinNonEmpty(Line(r.Tool), parens("from", r.Source)))
	add("Action", Line(r.Action))
	for _, d := range r.Dimensions {
		if cs, ok := f.commandsOf(d); ok {
			fs = append(fs, commandField(d, cs, n))
			if n < 0 {
				fs = append(fs, writtenField(d))
			}
			continue
		}
		fs = append(fs, Field{Label: "Value of " + DimensionLabel(d), Value: Line(d.Value)})
	}
	if r.Workdir != nil {
		add("Workdir", Line(r.Workdir.Value))
	}
	for _, g := range r.Grants {
		add("Grant", f.GrantName(g))
	}
	return fs
}

// AgentsWords marks a label of what the agent says of its request.
const AgentsWords = " (agent's words)"

// AgentWords is everything the request says of itself, which only the
// agent vouches for: the title, the stated reason, the arguments, the
// action's description, the tool's hints, the workdir's label and the
// grants' descriptions, each under a label that says whose words they
// are. Details come apart, from Details.
func (f *Form) AgentWords() []Field {
	r := f.Req
	var fs []Field
	add := func(label, value string, multiline bool) {
		if value != "" {
			fs = append(fs, Field{Label: label, Value: value, Multiline: multiline})
		}
	}
	if r.Annotations != nil {
		add("Title"+AgentsWords, Line(r.Annotations.Title), false)
	}
	add("Stated reason (agent's words, unverified)", Block(r.Reason), true)
	if r.Arguments != nil {
		add("Arguments"+AgentsWords, argumentsText(r.Arguments), false)
	}
	add("Action description"+AgentsWords, Line(r.ActionDescription), false)
	add("Tool hints"+AgentsWords, annotationWords(r.Annotations), false)
	if r.Workdir != nil {
		add("Workdir label"+AgentsWords, Line(r.Workdir.Label), false)
	}
	for _, g := range r.Grants {
		add("Description of grant "+Line(g.Name)+AgentsWords, Line(g.Description), false)
	}
	return fs
}

// Details returns the previews of the request's details.
func (f *Form) Details() []DetailPreview {
	ps := make([]DetailPreview, len(f.Req.Details))
	for i, d := range f.Req.Details {
		ps[i] = Preview(d)
	}
	return ps
}

// HiddenWarning is the warning frontends show when HasHidden.
const HiddenWarning = "This request contains hidden or reordering characters, or characters of uncertain width; they are shown as \\u{...} escapes."

// HasHidden reports whether any text of the request, or of the commands
// read from it, holds characters that hide or reorder text.
func (f *Form) HasHidden() bool {
	r := f.Req
	texts := []string{r.Server, r.Alias, r.Tool, r.Source, r.Action, r.ActionDescription, r.Reason, string(r.Arguments)}
	if r.Annotations != nil {
		texts = append(texts, r.Annotations.Title)
	}
	if r.Workdir != nil {
		texts = append(texts, r.Workdir.Value, r.Workdir.Label)
	}
	for _, d := range r.Dimensions {
		texts = append(texts, d.Name, d.Label, d.Value)
		for _, s := range d.Scopes {
			texts = append(texts, s.Label, s.Match)
		}
	}
	for _, g := range r.Grants {
		texts = append(texts, g.Name, g.Description)
	}
	for _, d := range r.Details {
		texts = append(texts, d.Label, d.Text)
	}
	for _, cs := range f.commands {
		for _, c := range cs {
			texts = append(texts, c.Text, c.Opaque, c.DecidedBy)
		}
	}
	for _, t := range texts {
		if Hidden(t) {
			return true
		}
	}
	return false
}

// DimensionLabel names a dimension safely: "File [path]", or its name.
func DimensionLabel(d decision.Dimension) string {
	if d.Label != "" {
		return Line(d.Label) + " [" + Line(d.Name) + "]"
	}
	return Line(d.Name)
}

// annotationWords turns MCP annotations into plain words. They are the
// tool's own claims, so they are labelled hints.
func annotationWords(a *decision.Annotations) string {
	if a == nil {
		return ""
	}
	var w []string
	hint := func(v *bool, yes, no string) {
		switch {
		case v == nil:
		case *v && yes != "":
			w = append(w, yes)
		case !*v && no != "":
			w = append(w, no)
		}
	}
	hint(a.ReadOnlyHint, "read-only", "")
	hint(a.DestructiveHint, "destructive", "not destructive")
	hint(a.IdempotentHint, "idempotent", "")
	hint(a.OpenWorldHint, "reaches the outside world", "stays local")
	return strings.Join(w, ", ")
}

// ScopeText says exactly what a scope covers, e.g. `anything under
// "/home/a/p/"`.
func ScopeText(s decision.Scope) string {
	m := `"` + Line(s.Match) + `"`
	switch s.Kind {
	case decision.KindPrefix:
		if strings.HasPrefix(s.Match, "/") {
			return "anything under " + m
		}
		return "anything starting with " + m
	case decision.KindGlob:
		return "anything matching " + m
	case decision.KindWords:
		return "commands starting with the words " + m + " (without shell syntax)"
	case decision.KindAny:
		return "any value"
	default:
		return "exactly " + m
	}
}

// ScopeOption is the text of one scope in a selector: its label and what
// it covers.
func ScopeOption(s decision.Scope) string {
	return Line(s.Label) + ": " + ScopeText(s)
}

// ChoiceLabel is the button or option text of a choice.
func ChoiceLabel(c Choice) string {
	switch c {
	case AllowOnce:
		return "Allow once"
	case AllowSession:
		return "Allow for this session"
	case AllowAlways:
		return "Allow always…"
	case DenyAlways:
		return "Deny always…"
	default:
		return "Deny once"
	}
}

// LifetimeText says how long a rule lives: "for 15 minutes", "for 16
// hours", "until removed".
func LifetimeText(l string) string {
	switch l {
	case "900":
		return "for 15 minutes"
	case "57600":
		return "for 16 hours"
	default:
		return "until removed"
	}
}

// WorkdirScopeText says which workdirs a rule covers.
func (f *Form) WorkdirScopeText(ws string) string {
	switch {
	case f.Req.Workdir == nil:
		return ""
	case ws == decision.WorkdirAll:
		return "in any workdir"
	default:
		return `in workdir "` + Line(f.Req.Workdir.Value) + `"`
	}
}

// RuleSummary states the exact rule an always-answer saves, e.g. `allow
// write_file, with File [path] anything under "/home/a/p/", in any
// workdir, granting fs.create, fs.write (implied by fs.create), for 15
// minutes`: the grants chosen, then each grant they imply that was not
// chosen (Decide adds them) with the chosen grants that imply it; then,
// when the form has one, the note of who keeps the rule. A scope over a
// command line says that it covers the line command by command.
func (f *Form) RuleSummary(a Answer) string {
	verb := "deny"
	if a.Choice.IsAllow() {
		verb = "allow"
	}
	what := Line(f.Req.Tool)
	if what == "" {
		what = "action " + Line(f.Req.Action)
	}
	parts := []string{verb + " " + what}
	for _, d := range f.Req.Dimensions {
		match := a.Scopes[d.Name]
		for _, s := range d.Scopes {
			if s.Match == match {
				text := "with " + DimensionLabel(d) + " " + ScopeText(s)
				if d.Syntax == decision.SyntaxShell {
					text += shellCover(a.Choice.IsAllow(), s)
				}
				parts = append(parts, text)
			}
		}
	}
	if ws := f.WorkdirScopeText(a.WorkdirScope); ws != "" {
		parts = append(parts, ws)
	}
	if a.Choice == AllowAlways && len(a.Grants) > 0 {
		parts = append(parts, "granting "+f.grantsText(a.Grants))
	}
	parts = append(parts, LifetimeText(a.Lifetime))
	s := strings.Join(parts, ", ")
	if f.ruleNote != nil {
		s += " — " + f.ruleNote(a)
	}
	return s
}

// grantsText names the chosen grants, then, in request order, each grant
// they imply that was not chosen: `fs.create, fs.write (implied by
// fs.create)`.
func (f *Form) grantsText(chosen []string) string {
	isChosen := map[string]bool{}
	for _, c := range chosen {
		isChosen[c] = true
	}
	by := map[string][]string{} // an added grant → the chosen ones implying it
	for _, c := range chosen {
		for _, n := range f.implied[c] {
			if !isChosen[n] {
				by[n] = append(by[n], c)
			}
		}
	}
	text := lineList(chosen)
	for _, g := range f.Req.Grants {
		if len(by[g.Name]) > 0 {
			text += ", " + Line(g.Name) + " (implied by " + lineList(by[g.Name]) + ")"
		}
	}
	return text
}

// Message is the text of a stage as one block, for frontends that show the
// request as plain text (dialogs, the line prompt) and for the stage as
// data. Stage "rule" includes the rule the current answer would save.
// Command lines are listed in full, each followed by the line as written
// (FactsUpTo): dialogs have no other view.
func (f *Form) Message(stage Stage, a Answer) string {
	var b strings.Builder
	if stage == StageRule {
		fmt.Fprintf(&b, "%s: the rule to save\n", ChoiceLabel(a.Choice))
		fmt.Fprintf(&b, "Rule: %s\n", f.RuleSummary(a))
		for _, l := range f.FixedScopes() {
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	b.WriteString(f.Headline() + "\n")
	if f.HasHidden() {
		b.WriteString("WARNING: " + HiddenWarning + "\n")
	}
	for _, fl := range f.FactsUpTo(-1) {
		fmt.Fprintf(&b, "%s: %s\n", fl.Label, fl.Value)
		for _, it := range fl.Items {
			b.WriteString(ItemIndent + it + "\n")
		}
	}
	for _, fl := range f.AgentWords() {
		if fl.Multiline {
			fmt.Fprintf(&b, "%s:\n%s\n", fl.Label, Gutter(fl.Value))
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", fl.Label, fl.Value)
	}
	for _, p := range f.Details() {
		fmt.Fprintf(&b, "Detail%s %s:\n%s\n", AgentsWords, p.Heading(), Gutter(p.Text))
		if w := p.Warning(); w != "" {
			b.WriteString(w + "\n")
		}
	}
	return b.String()
}

// Gutter starts every line of untrusted multi-line text with "│ ", so it
// can never pass for one of askperm's labels.
func Gutter(s string) string {
	return "│ " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n│ ")
}

func parens(prefix, s string) string {
	if s == "" {
		return ""
	}
	if prefix == "" {
		return "(" + Line(s) + ")"
	}
	return "(" + prefix + " " + Line(s) + ")"
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

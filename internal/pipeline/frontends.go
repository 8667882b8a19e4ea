package pipeline

import (
	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/prompt"
	"github.com/askperm/askperm/prompt/dialog"
	"github.com/askperm/askperm/prompt/line"
	"github.com/askperm/askperm/prompt/tui"
)

// chain builds the frontends of c named, in order. Names come from
// prompt.ParseList or prompt.DefaultOrder; frontends keep no state between
// requests, so one chain serves every request of a pipeline.
func chain(c Config) []prompt.Frontend {
	names, o := c.Frontends, c.Prompt
	fs := make([]prompt.Frontend, 0, len(names))
	for _, n := range names {
		switch n {
		case decision.FrontendTUI:
			fs = append(fs, tui.New(o))
		case decision.FrontendLine:
			fs = append(fs, line.New(o))
		case decision.FrontendYad, decision.FrontendZenity:
			fs = append(fs, dialog.New(n, o))
		case decision.FrontendTeam:
			fs = append(fs, team.New(c.Team, c.Warn))
		case decision.FrontendNone:
			fs = append(fs, prompt.None{})
		}
	}
	return fs
}

package settings

import (
	"fmt"

	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/userfile"
)

// Reviewer is one [[reviewer]] table of config.toml (protocol section
// 12).
type Reviewer struct {
	Name    string   `toml:"name"`
	Command []string `toml:"command"`
	Timeout Duration `toml:"timeout"`
	Tool    *string  `toml:"tool"`
	Server  *string  `toml:"server"`
	Action  *string  `toml:"action"`
}

// checkReviewers checks what config.toml says of reviewers: each named,
// once, with a command whose program the user may trust as a dialog
// program (userfile.Program), since a reviewer may allow.
func checkReviewers(rs []Reviewer) error {
	seen := map[string]bool{}
	for i, r := range rs {
		at := fmt.Sprintf("reviewer[%d]", i)
		switch {
		case r.Name == "":
			return fmt.Errorf("%s: name: missing", at)
		case seen[r.Name]:
			return fmt.Errorf("%s: name: %q given twice", at, r.Name)
		case len(r.Command) == 0:
			return fmt.Errorf("%s (%s): command: missing", at, r.Name)
		}
		seen[r.Name] = true
		if err := userfile.Program(r.Command[0]); err != nil {
			return fmt.Errorf("%s (%s): command: %w", at, r.Name, err)
		}
	}
	return nil
}

// reviewers is the chain of the config file's reviewers (at names the
// file), nil when there are none.
func reviewers(at string, rs []Reviewer) (*reviewer.Chain, error) {
	specs := make([]reviewer.Spec, len(rs))
	for i, r := range rs {
		specs[i] = reviewer.Spec{Name: r.Name, Command: r.Command, Tool: r.Tool, Server: r.Server, Action: r.Action}
		if r.Timeout != "" {
			d, err := ParseDuration(string(r.Timeout))
			if err != nil {
				return nil, fmt.Errorf("%s: reviewer[%d] (%s): timeout: %w", at, i, r.Name, err)
			}
			specs[i].Timeout = d
		}
	}
	c, err := reviewer.New(specs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return c, nil
}

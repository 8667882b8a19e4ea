package cmd

import (
	"fmt"
	"os"
	"syscall"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/team"
)

// execProgram replaces askperm with a program (syscall.Exec).
var execProgram = syscall.Exec

// forwardToTeam runs askperm-team with args in askperm's place: the team
// commands a person runs (the approver's inbox, the team's rules and
// audit) live in askperm-team, which links the NATS client askperm does
// not. askperm is replaced (syscall.Exec), so that signals, the terminal
// and the exit status are askperm-team's. config is the --config given,
// if any: [team] program there names askperm-team (team.FindProgram).
// It returns only when askperm-team cannot be run.
func forwardToTeam(s cli.Streams, config string, args []string) error {
	set, err := settings.Resolve(settings.Flags{Config: config}, s.Getenv)
	if err != nil {
		return cli.Usage("%v", err)
	}
	configured := ""
	if set.Team != nil {
		configured = set.Team.Program
	}
	program, err := team.FindProgram(configured)
	if err != nil {
		return cli.Usage("%v", err)
	}
	err = execProgram(program, append([]string{team.ProgramName}, args...), os.Environ())
	return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("%s: %w", program, err)}
}

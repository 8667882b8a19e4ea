package cmd

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// newInbox is askperm inbox, which askperm-team runs: its arguments and
// flags are askperm-team's, given on as they are.
func newInbox(s cli.Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "inbox",
		Short: "Answer the team's pending requests (runs askperm-team inbox)",
		Long: `askperm inbox runs askperm-team inbox, the approver's side of team mode,
with the same arguments: askperm-team(1) is installed beside askperm, and
askperm-team inbox --help (or man askperm-team-inbox) says more.`,
		Example: `  # Once: create your approver key, and give its public half to the hosts
  askperm inbox key
  # The live list; Enter opens a request in the terminal UI's form
  askperm inbox
  # The same as a web page for a phone, allows confirmed with a passkey
  askperm inbox --web 127.0.0.1:8765`,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return forwardToTeam(s, configArg(args), append([]string{"inbox"}, args...))
		},
	}
}

// configArg is the value of --config in args, unparsed: "" when none.
func configArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
		if a == "--config" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// teamArgs are the arguments that run c (parsed, with args) as
// askperm-team: its path below the root, the flags given, and args.
func teamArgs(c *cobra.Command, args []string) []string {
	out := strings.Fields(c.CommandPath())[1:]
	c.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return append(append(out, "--"), args...)
}

// withTeam gives rules list and rules forget their --team flag: the team
// rules (protocol section 11), which askperm-team lists and forgets,
// instead of this machine's.
func withTeam(s cli.Streams, o *memoryOptions, list, forget *cobra.Command) {
	var on bool
	list.Flags().BoolVar(&on, "team", false, "the team's rules, from its server, or from this machine's cache when the server cannot be reached (runs askperm-team)")
	forget.Flags().BoolVar(&on, "team", false, "forget the team rule ID, one of your own as an approver (runs askperm-team)")
	for _, c := range []*cobra.Command{list, forget} {
		run := c.RunE
		c.RunE = func(c *cobra.Command, args []string) error {
			if !on {
				return run(c, args)
			}
			return forwardToTeam(s, o.config, teamArgs(c, args))
		}
	}
}

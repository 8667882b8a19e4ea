package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
)

// completeDeciding completes the values of the deciding flags
// (registerDeciding): the canned choices, the frontend list, --tty auto.
func completeDeciding(c *cobra.Command) {
	cli.Must(c.RegisterFlagCompletionFunc("answer", cli.Fixed(settings.ChoiceNames()...)))
	cli.Must(c.RegisterFlagCompletionFunc("frontend", completeFrontends))
	cli.Must(c.RegisterFlagCompletionFunc("tty", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// auto, or a terminal's path.
		return []cobra.Completion{cobra.CompletionWithDesc(ttyAuto, "the pane kept for approvals, when one runs")}, cobra.ShellCompDirectiveDefault
	}))
	for _, file := range []string{"answers", "config", "rules"} {
		cli.Must(c.MarkFlagFilename(file, "toml"))
	}
	cli.Must(c.MarkFlagDirname("state-dir"))
}

// completeFrontends completes the last name of a comma-separated frontend
// list with the names not listed yet.
func completeFrontends(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	i := strings.LastIndex(toComplete, ",")
	listed := strings.Split(toComplete[:max(i, 0)], ",")
	var out []cobra.Completion
	for _, f := range settings.FrontendNames() {
		if !slices.Contains(listed, f) {
			out = append(out, toComplete[:i+1]+f)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

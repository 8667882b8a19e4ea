package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/settings"
)

// completeDeciding completes the values of the deciding flags
// (registerDeciding): the canned choices, the frontend list, --tty auto.
func completeDeciding(c *cobra.Command) {
	must(c.RegisterFlagCompletionFunc("answer", fixed(settings.ChoiceNames()...)))
	must(c.RegisterFlagCompletionFunc("frontend", completeFrontends))
	must(c.RegisterFlagCompletionFunc("tty", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// auto, or a terminal's path.
		return []cobra.Completion{cobra.CompletionWithDesc(ttyAuto, "the pane kept for approvals, when one runs")}, cobra.ShellCompDirectiveDefault
	}))
	for _, file := range []string{"answers", "config", "rules"} {
		must(c.MarkFlagFilename(file, "toml"))
	}
	must(c.MarkFlagDirname("state-dir"))
}

// fixed completes a flag from a fixed list of values.
func fixed(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
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

// must panics on an error of a flag's registration: a misspelt flag name,
// a programming error every test run finds.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

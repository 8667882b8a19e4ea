package cmd

import (
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
)

// version is askperm's version as its build info gives it: the module's
// version (a release, or the pseudo-version go build derives from a
// checkout), then the commit it was built from, when it was made, and
// whether the tree had changes. "(devel)" when nothing is known.
func version(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "(devel)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var revision, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return v
	}
	details := []string{"commit " + revision[:min(len(revision), 12)]}
	if at != "" {
		details = append(details, at)
	}
	if modified {
		details = append(details, "modified")
	}
	return v + " (" + strings.Join(details, ", ") + ")"
}

// buildVersion is the running binary's version.
func buildVersion() string { return version(debug.ReadBuildInfo()) }

func newVersion(s cli.Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print askperm's version (as --version)",
		Example: versionExample,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := s.Decision.WriteString("askperm " + buildVersion() + "\n")
			return err
		},
	}
}

package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/docs"
)

// exactlyOne takes one argument, and names what it is when it is missing.
func exactlyOne(command, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usage("%s: name %s", command, what)
		case len(args) > 1:
			return usage("%s: one argument, %s; got %d", command, what, len(args))
		}
		return nil
	}
}

func newSchema(s streams) *cobra.Command {
	return &cobra.Command{
		Use:       "schema NAME",
		Short:     "Print a JSON Schema: " + strings.Join(docs.SchemaNames(), ", "),
		Args:      exactlyOne("schema", "the schema: "+strings.Join(docs.SchemaNames(), ", ")),
		ValidArgs: docs.SchemaNames(),
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := docs.Schema(args[0])
			if err != nil {
				return usage("%v", err)
			}
			_, err = s.decision.Write(b)
			return err
		},
	}
}

package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/docs"
	"github.com/askperm/askperm/internal/cli"
)

// exactlyOne takes one argument, and names what it is when it is missing.
func exactlyOne(command, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return cli.Usage("%s: name %s", command, what)
		case len(args) > 1:
			return cli.Usage("%s: one argument, %s; got %d", command, what, len(args))
		}
		return nil
	}
}

func newSchema(s cli.Streams) *cobra.Command {
	return &cobra.Command{
		Use:       "schema NAME",
		Short:     "Print a JSON Schema: " + strings.Join(docs.SchemaNames(), ", "),
		Args:      exactlyOne("schema", "the schema: "+strings.Join(docs.SchemaNames(), ", ")),
		ValidArgs: docs.SchemaNames(),
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := docs.Schema(args[0])
			if err != nil {
				return cli.Usage("%v", err)
			}
			_, err = s.Decision.Write(b)
			return err
		},
	}
}

package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/docs"
)

func newSchema(s streams) *cobra.Command {
	return &cobra.Command{
		Use:       "schema NAME",
		Short:     "Print a JSON Schema: " + strings.Join(docs.SchemaNames(), ", "),
		Args:      cobra.ExactArgs(1),
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

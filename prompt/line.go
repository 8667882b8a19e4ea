package prompt

import (
	"context"
	"fmt"

	"github.com/askperm/askperm/form"
)

// Placeholder until the line frontend lands.
type lineFrontend struct{ o Options }

func newLine(o Options) Frontend { return lineFrontend{o} }

func (lineFrontend) Name() string { return "line" }

func (lineFrontend) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{}, fmt.Errorf("not built yet: %w", ErrUnavailable)
}

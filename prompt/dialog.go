package prompt

import (
	"context"
	"fmt"

	"github.com/askperm/askperm/form"
)

// Placeholder until the dialog frontends land.
type dialog struct {
	name string
	o    Options
}

func newDialog(name string, o Options) Frontend { return dialog{name, o} }

func (d dialog) Name() string { return d.name }

func (dialog) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{}, fmt.Errorf("not built yet: %w", ErrUnavailable)
}

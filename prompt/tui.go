package prompt

import (
	"context"
	"fmt"

	"github.com/askperm/askperm/form"
)

// Placeholder until the tui frontend lands.
type tuiFrontend struct{ o Options }

func newTUI(o Options) Frontend { return tuiFrontend{o} }

func (tuiFrontend) Name() string { return "tui" }

func (tuiFrontend) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{}, fmt.Errorf("not built yet: %w", ErrUnavailable)
}

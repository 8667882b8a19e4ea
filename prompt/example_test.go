package prompt_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/prompt"
)

// noTerminal is a frontend that cannot start, as the terminal UI without a
// terminal.
type noTerminal struct{}

func (noTerminal) Name() decision.Frontend { return decision.FrontendTUI }

func (noTerminal) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{}, fmt.Errorf("/dev/tty: no such device: %w", prompt.ErrUnavailable)
}

// denier answers deny once with a reason, as a person would.
type denier struct{}

func (denier) Name() decision.Frontend { return decision.FrontendLine }

func (denier) Ask(_ context.Context, f *form.Form) (form.Answer, error) {
	a := f.Defaults()
	a.Message = "not now"
	return a, nil
}

func ExampleAsk() {
	req, _ := decision.Parse([]byte(`{"tool":"write_file","action":"write"}`))
	f := form.New(req, form.Options{})

	// A frontend that cannot start passes to the next.
	a, by, err := prompt.Ask(context.Background(), []prompt.Frontend{noTerminal{}, denier{}}, f)
	fmt.Println(a.Choice, a.Message, by, err)

	// With none able to start, the error says why for each.
	_, by, err = prompt.Ask(context.Background(), []prompt.Frontend{noTerminal{}, prompt.None{}}, f)
	fmt.Println(by, errors.Is(err, prompt.ErrUnavailable))
	fmt.Println(err)
	// Output:
	// deny-once not now line <nil>
	// none true
	// tui: /dev/tty: no such device: unavailable; none: chosen: unavailable
}

func ExampleParseList() {
	fmt.Println(prompt.ParseList("tui, zenity"))
	fmt.Println(prompt.ParseList("tui,kdialog"))
	// Output:
	// [tui zenity] <nil>
	// [] unknown frontend "kdialog" (known: tui, line, yad, zenity, team, none)
}

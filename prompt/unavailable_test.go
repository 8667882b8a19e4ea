package prompt

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
)

// own is a frontend failing with err, which saw whether its context had a
// deadline.
type own struct {
	err         error
	hadDeadline bool
}

func (*own) Name() decision.Frontend { return decision.FrontendTeam }

func (o *own) Ask(ctx context.Context, _ *form.Form) (form.Answer, error) {
	_, o.hadDeadline = ctx.Deadline()
	return form.Answer{}, o.err
}

type answering struct{}

func (answering) Name() decision.Frontend { return decision.FrontendLine }

func (answering) Ask(context.Context, *form.Form) (form.Answer, error) {
	return form.Answer{Choice: form.DenyOnce}, nil
}

// A frontend's own unavailable error, wrapped or not, is ErrUnavailable
// through Unavailable (the chain asks the next, saying it as the frontend
// did); any other error ends the chain; the frontend asks under a
// deadline.
func TestUnavailable(t *testing.T) {
	mine := errors.New("unavailable")
	req, err := decision.Parse([]byte(`{"action":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		next bool
	}{
		{mine, true},
		{fmt.Errorf("no server: %w", mine), true},
		{errors.New("unavailable"), false},
		{context.Canceled, false},
	} {
		o := &own{err: tc.err}
		_, by, err := Ask(context.Background(), []Frontend{Unavailable(o, mine), answering{}}, form.New(req, form.Options{}))
		if got := by == decision.FrontendLine && err == nil; got != tc.next {
			t.Errorf("%v: by %s, %v; the next asked %v, want %v", tc.err, by, err, got, tc.next)
		}
		_, _, err = Ask(context.Background(), []Frontend{Unavailable(o, mine)}, form.New(req, form.Options{}))
		if errors.Is(err, ErrUnavailable) != tc.next || !errors.Is(err, tc.err) || !o.hadDeadline {
			t.Errorf("%v alone: %v (deadline %v)", tc.err, err, o.hadDeadline)
		}
	}
}

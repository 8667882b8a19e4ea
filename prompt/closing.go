package prompt

import (
	"context"
	"errors"

	"github.com/askperm/askperm/form"
)

// ClosingLine is what a terminal frontend leaves on the terminal once its
// prompt is gone, so that nobody is left guessing what was decided:
// `askperm: allowed once: write_file (fs-default) wants to write
// /home/a/p/report.md`, `askperm: denied: timed out: …`. err is the
// frontend's error, if it ended in one; the line ends in a newline.
func ClosingLine(f *form.Form, a form.Answer, err error) string {
	var what string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		what = "denied: timed out"
	case errors.Is(err, ErrCancelled), errors.Is(err, context.Canceled):
		what = "denied: cancelled"
	case err != nil:
		what = "denied: error"
	case a.Choice == form.AllowOnce:
		what = "allowed once"
	case a.Choice == form.AllowSession:
		what = "allowed for this session"
	case a.Choice == form.AllowAlways:
		what = "allowed always"
	case a.Choice == form.DenyAlways:
		what = "denied always"
	default:
		what = "denied"
	}
	return "askperm: " + what + ": " + f.Headline() + "\n"
}

package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/reviewer"
	"github.com/askperm/askperm/internal/reviewer/model"
	"github.com/askperm/askperm/internal/settings"
)

// reviewOptions are the flags of askperm review.
type reviewOptions struct {
	endpoint, model, apiKeyEnv, timeout, maxRequest string
}

// defaultReviewTimeout is askperm review's deadline: under a reviewer's
// default timeout, so that it abstains before it is killed.
const defaultReviewTimeout = "8s"

func newReview(s cli.Streams) *cobra.Command {
	o := &reviewOptions{}
	c := &cobra.Command{
		Use:     "review",
		Short:   "A reviewer program: ask a model behind an OpenAI-compatible endpoint about the request on stdin",
		Long:    reviewLong,
		Example: reviewExample,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return runReview(s, o) },
	}
	f := c.Flags()
	f.StringVar(&o.endpoint, "endpoint", "", "the API's base URL, ending in /v1 (e.g. http://127.0.0.1:11434/v1 for Ollama)")
	f.StringVar(&o.model, "model", "", "the model to ask")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "the environment variable holding the API key, sent as a bearer token")
	f.StringVar(&o.timeout, "timeout", defaultReviewTimeout, "deadline for the review, reading the request included (the request's own timeout shortens it)")
	f.StringVar(&o.maxRequest, "max-request", "", "largest request accepted (bytes, or with a KiB/MiB suffix; default 1MiB)")
	return c
}

// runReview reviews one request: the decision on stdout and exit 0, or
// nothing on stdout and exit 3, an abstention, saying why on stderr.
func runReview(s cli.Streams, o *reviewOptions) error {
	opts, timeout, maxRequest, err := o.resolve(s.Getenv)
	if err != nil {
		return err
	}
	if isatty.IsTerminal(s.In.Fd()) {
		return cli.Usage("stdin is a terminal: askperm review is a reviewer program; askperm runs it with the request on stdin")
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), timeout, pipeline.ErrTimeout)
	defer cancel()
	raw, err := pipeline.Read(ctx, s.In, maxRequest)
	if err != nil {
		return &cli.ExitError{Code: reviewer.ExitAbstain, Err: fmt.Errorf("review abstains: %w", err)}
	}
	out, err := model.Review(ctx, raw, opts)
	if errors.Is(err, model.ErrAbstain) {
		return &cli.ExitError{Code: reviewer.ExitAbstain, Err: fmt.Errorf("review %w", err)}
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	if _, err := s.Decision.Write(out); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("writing the decision: %w", err)}
	}
	return nil
}

// resolve checks the flags and reads the API key's variable.
func (o *reviewOptions) resolve(getenv func(string) string) (model.Options, time.Duration, int64, error) {
	u, err := url.Parse(o.endpoint)
	switch {
	case o.endpoint == "":
		return model.Options{}, 0, 0, cli.Usage("--endpoint: missing (the API's base URL, ending in /v1)")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return model.Options{}, 0, 0, cli.Usage("--endpoint: %q is not an http or https URL", o.endpoint)
	case o.model == "":
		return model.Options{}, 0, 0, cli.Usage("--model: missing")
	}
	opts := model.Options{Endpoint: o.endpoint, Model: o.model}
	if o.apiKeyEnv != "" {
		if opts.APIKey = getenv(o.apiKeyEnv); opts.APIKey == "" {
			return model.Options{}, 0, 0, cli.Usage("--api-key-env: %s is not set", o.apiKeyEnv)
		}
	}
	timeout, err := settings.ParseTimeout(o.timeout)
	if err != nil {
		return model.Options{}, 0, 0, cli.Usage("--timeout: %v", err)
	}
	maxRequest := int64(settings.DefaultMaxRequest)
	if o.maxRequest != "" {
		if maxRequest, err = settings.ParseSize(o.maxRequest); err != nil {
			return model.Options{}, 0, 0, cli.Usage("--max-request: %v", err)
		}
	}
	return opts, timeout, maxRequest, nil
}

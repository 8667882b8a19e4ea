package cmd

import (
	"context"
	"fmt"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/settings"
)

// digestOptions are the flags of askperm digest: the read rules of a
// request, nothing that decides one.
type digestOptions struct {
	timeout, maxRequest string
}

func newDigest(s cli.Streams) *cobra.Command {
	o := &digestOptions{}
	c := &cobra.Command{
		Use:     "digest",
		Short:   "Print the request_sha256 a decision for the request on stdin must carry",
		Long:    digestLong,
		Example: digestExample,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return runDigest(s, o) },
	}
	c.Flags().StringVar(&o.maxRequest, "max-request", "", "largest request accepted (bytes, or with a KiB/MiB suffix; default 1MiB)")
	c.Flags().StringVar(&o.timeout, "timeout", "", "deadline for reading the request (30s, 5m, or seconds; default 300s)")
	return c
}

// runDigest reads one request as askperm ask does, refuses what ask would
// refuse, and prints its request_sha256.
func runDigest(s cli.Streams, o *digestOptions) error {
	timeout, maxRequest := settings.DefaultTimeout, int64(settings.DefaultMaxRequest)
	var err error
	if o.timeout != "" {
		if timeout, err = settings.ParseTimeout(o.timeout); err != nil {
			return cli.Usage("--timeout: %v", err)
		}
	}
	if o.maxRequest != "" {
		if maxRequest, err = settings.ParseSize(o.maxRequest); err != nil {
			return cli.Usage("--max-request: %v", err)
		}
	}
	if isatty.IsTerminal(s.In.Fd()) {
		return cli.Usage("stdin is a terminal: pipe one JSON request into askperm digest")
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), timeout, pipeline.ErrTimeout)
	defer cancel()
	raw, err := pipeline.Read(ctx, s.In, maxRequest)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitRequest, Err: err}
	}
	req, err := decision.Parse(raw) // the digest comes from the same parse
	if err != nil {
		return &cli.ExitError{Code: cli.ExitRequest, Err: fmt.Errorf("askperm would refuse this request, so no decision carries its digest: %w", err)}
	}
	_, err = s.Decision.WriteString(req.SHA256 + "\n")
	return err
}

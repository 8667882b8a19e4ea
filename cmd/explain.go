package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/gate"
	"github.com/askperm/askperm/internal/hook"
	"github.com/askperm/askperm/internal/pipeline"
	"github.com/askperm/askperm/internal/settings"
)

// explainOptions are the flags of askperm explain.
type explainOptions struct {
	settings.Flags
	json, verbose bool
	// mcp-call: the server's name as the gate knows it, and the tool's
	// annotations (a file or a JSON object).
	name, annotations string
}

// explainJSON is askperm explain --json: the request built, its
// question, and what check says of it.
type explainJSON struct {
	Request  json.RawMessage `json:"request"`
	Question string          `json:"question"`
	checkJSON
	// Misses are, with --verbose and a question, the rules that did not
	// match and why.
	Misses []missJSON `json:"misses,omitempty"`
}

type missJSON struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// builder makes the request askperm builds from what is on stdin.
type builder func(in []byte) (*decision.Request, error)

const explainLong = `Read on stdin what a hook, the gate or a caller would get, and print the
request askperm builds from it (JSON), its question in one line, and what
rules and memory would decide, with each opinion, as askperm check does.
It decides nothing, asks no one and records nothing. A rule that never
matches what a hook or the gate sends shows here: --verbose names, when
the result is a question, every rule that did not match and the first of
its matchers that failed.

Exit status: 0 explained, 64 usage, 65 what is on stdin is not what the
source sends (or builds no request), 70 internal error.`

const explainExample = `  askperm explain claude-code < payload.json
  askperm explain codex --rules team.toml --verbose < payload.json
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/tmp/x"}}}' |
    askperm explain mcp-call --name fs --annotations '{"destructiveHint":false}'
  askperm explain request --json < request.json`

func newExplain(s cli.Streams) *cobra.Command {
	o := &explainOptions{}
	c := &cobra.Command{
		Use:     "explain SOURCE",
		Short:   "Show the request askperm builds from a hook payload, a tools/call or a request, and what would decide it",
		Long:    explainLong,
		Example: explainExample,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return cli.Usage("explain: name the source: claude-code, codex, mcp-call or request")
		},
	}
	f := c.PersistentFlags()
	checkFlags(f, &o.Flags, &o.json, "one JSON object: request, question, result, message, opinions, commands (and misses)")
	f.BoolVar(&o.verbose, "verbose", false, "when the result is a question, name each rule that did not match and why")
	agent := func(a hook.Agent, what string) *cobra.Command {
		return &cobra.Command{
			Use:     a.Name,
			Short:   "Explain a " + what + " hook payload (as askperm hook " + a.Name + " reads it)",
			Example: "  askperm explain " + a.Name + " < payload.json",
			Args:    cobra.NoArgs,
			RunE:    func(*cobra.Command, []string) error { return runExplain(s, o, a.PayloadRequest) },
		}
	}
	call := &cobra.Command{
		Use:   "mcp-call [-- SERVER-COMMAND...]",
		Short: "Explain one MCP tools/call JSON-RPC line (as askperm gate reads it)",
		Long: `Explain one MCP tools/call JSON-RPC line as the gate reads it. The server
is known by --name (as gate --name), or by the name the gate gives the
command line after --; --annotations are what the server's tools/list
says of the tool (a JSON object or a file holding one): without them the
tool is taken as MCP's default, destructive and open-world.`,
		Example: `  echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/etc/hosts"}}}' |
    askperm explain mcp-call --annotations '{"readOnlyHint":true,"openWorldHint":false}' -- npx -y @modelcontextprotocol/server-filesystem /`,
		RunE: func(_ *cobra.Command, args []string) error {
			name := o.name
			if name == "" {
				name = gate.DefaultName(args)
			}
			if name == "" {
				return cli.Usage("explain mcp-call: give the server's name: --name NAME, or its command line after --")
			}
			ann, err := readAnnotations(o.annotations)
			if err != nil {
				return cli.Usage("explain mcp-call: --annotations: %v", err)
			}
			return runExplain(s, o, func(in []byte) (*decision.Request, error) { return gate.CallRequest(in, name, ann) })
		},
	}
	call.Flags().StringVar(&o.name, "name", "", "the server's name, as gate --name (default: from the command line after --)")
	call.Flags().StringVar(&o.annotations, "annotations", "", "the tool's annotations: a JSON object or a file holding one")
	c.AddCommand(agent(hook.ClaudeCode, "Claude Code"), agent(hook.Codex, "Codex"), call, &cobra.Command{
		Use:     "request",
		Short:   "Explain a request as a caller sends it to askperm",
		Example: "  askperm explain request < request.json",
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return runExplain(s, o, nil) },
	})
	return c
}

// readAnnotations reads --annotations: a JSON object, or a file.
func readAnnotations(arg string) (*decision.Annotations, error) {
	if arg == "" {
		return nil, nil
	}
	b := []byte(arg)
	if !strings.HasPrefix(strings.TrimSpace(arg), "{") {
		var err error
		if b, err = os.ReadFile(arg); err != nil {
			return nil, err
		}
	}
	var a decision.Annotations
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("not a JSON object of MCP tool annotations: %v", err)
	}
	return &a, nil
}

// runExplain builds the request of what is on stdin (build nil: it is a
// request) and says what would decide it.
func runExplain(s cli.Streams, o *explainOptions, build builder) error {
	p, set, err := checker(s, o.Flags, "explain")
	if err != nil {
		return err
	}
	// Read under askperm's deadline, as check reads: a caller that never
	// closes stdin ends in exit 65, never a hang.
	ctx, cancel := context.WithTimeoutCause(context.Background(), set.Timeout, pipeline.ErrTimeout)
	defer cancel()
	in, err := pipeline.ReadRequest(ctx, s.In, set.MaxRequest)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitRequest, Err: err}
	}
	raw := in
	if build != nil {
		req, err := build(in)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitRequest, Err: fmt.Errorf("explain: %w", err)}
		}
		if raw, _, err = decision.EncodeRequest(req); err != nil {
			return &cli.ExitError{Code: cli.ExitRequest, Err: fmt.Errorf("explain: the call cannot be asked about: %w", err)}
		}
	}
	res, err := p.Check(ctx, bytes.NewReader(raw))
	if err != nil {
		return checkError(err)
	}
	out := explainJSON{checkJSON: checkResult(res), Question: question(res)}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, bytes.TrimSpace(raw), "", "  "); err != nil {
		return checkError(err)
	}
	out.Request = pretty.Bytes()
	if o.verbose && res.Verdict.String() == "prompt" && !set.Policy.Empty() {
		for _, m := range set.Policy.Misses(res.Request) {
			out.Misses = append(out.Misses, missJSON{Rule: m.Rule, Why: m.Why})
		}
	}
	if o.json {
		out.Request = bytes.TrimSpace(raw)
		return cli.WriteJSON(s.Decision, out)
	}
	fmt.Fprintf(s.Decision, "request:\n%s\n", asciiJSON(pretty.Bytes()))
	fmt.Fprintf(s.Decision, "\nquestion: %s\n\n", out.Question)
	w := tabwriter.NewWriter(s.Decision, 0, 4, 2, ' ', 0)
	writeCheck(w, out.checkJSON)
	if o.verbose && out.Result == "prompt" {
		if len(out.Misses) == 0 {
			fmt.Fprintln(w, "\nno rules file is loaded, or every rule matched")
		} else {
			fmt.Fprintln(w, "\nRULE NOT MATCHING\tWHY")
		}
		for _, m := range out.Misses {
			fmt.Fprintf(w, "%s\t%s\n", form.Line(m.Rule), form.Line(m.Why))
		}
	}
	return w.Flush()
}

// asciiJSON is JSON text b with every rune past ASCII escaped (\uXXXX,
// in surrogate pairs past the BMP): still the same JSON, and nothing in
// it a terminal could read as other than it is (bidi controls, look-alike
// letters), as untrusted text must reach a person.
func asciiJSON(b []byte) string {
	var out strings.Builder
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return out.String()
}

// question is the one-line question a person would be asked, its
// command lines named by their commands.
func question(res pipeline.Check) string {
	var cs map[string][]form.Command
	for name, list := range res.Commands {
		if cs == nil {
			cs = map[string][]form.Command{}
		}
		for _, c := range list {
			cs[name] = append(cs[name], form.Command{Text: c.Text, Opaque: c.Opaque})
		}
	}
	return form.New(res.Request, form.Options{Commands: cs}).Headline()
}

package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/internal/cli"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
	"github.com/askperm/askperm/internal/suggest"
)

// suggestOptions are the flags of askperm suggest.
type suggestOptions struct {
	memoryOptions
	since, write string
	min          int
}

const suggestLong = `Read the audit log (its rotated file too) and propose rules for what a
person keeps approving: the decisions a person made (not rules, memory,
canned answers or timeouts), grouped by server, tool, source, action and
the unit one dimension's values share: a file's folder (never a
dot-folder, / or the home directory whole), a command's first words as
"commands starting" scopes offer them (go test ./... and go test -run X
are "go test *"), a URL's origin; any other value exactly. A dimension
is widened only over two distinct values or more, to the narrowest
scope covering them: a folder's files but its dot-files (dir/[!.]*),
never its sub-folders. A group approved at least --min times and never
denied by a person in the window (--since) is a rule; one whose rule
would reach a request a person denied is narrowed (each value exactly)
or dropped. No rule leaves a dimension out or allows one more
(only_dimensions), names a secret, or lacks a tool or a server.

The rules are printed as a rules file: each with a comment of its counts
(approved N times, first and last, the prompts a day it would have
saved), its [[rule.match]] examples the requests it came from and its
[[rule.not_match]] the denied requests beside it. Nothing is written
unless --write FILE: the file is then loaded as any rules file is (its
examples checked), checked to allow every request it came from and none
a person denied, with no rule covering / or the home directory whole,
and written only if FILE does not exist. Load it with --rules FILE, or
copy the rules you want into rules.toml.`

const suggestExample = `  askperm suggest
  askperm suggest --since 7d --min 10
  askperm suggest --write ~/.config/askperm/suggested.toml
  askperm --rules ~/.config/askperm/suggested.toml < request.json`

func newSuggest(s cli.Streams) *cobra.Command {
	o := &suggestOptions{}
	c := &cobra.Command{
		Use:     "suggest",
		Short:   "Propose rules for what a person keeps approving, from the audit log",
		Long:    suggestLong,
		Example: suggestExample,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return o.run(s) },
	}
	o.register(c)
	f := c.Flags()
	f.StringVar(&o.since, "since", "30d", "read the decisions since this long ago (30d, 12h) or this time (RFC 3339)")
	f.IntVar(&o.min, "min", 5, "approvals a group needs to become a rule")
	f.StringVar(&o.write, "write", "", "write the rules to this new file, checked by loading it")
	f.BoolVar(&o.json, "json", false, "the rules as JSON, with their counts")
	return c
}

func (o *suggestOptions) run(s cli.Streams) error {
	now := time.Now()
	since, err := parseSince(o.since, now)
	if err != nil {
		return err
	}
	if o.min < 1 {
		return cli.Usage("--min: %d is not a count of approvals (1 or more)", o.min)
	}
	dir, err := stateDirOf(o.memoryOptions, s)
	if err != nil {
		return err
	}
	sg := suggest.New(suggest.Options{Min: o.min, Since: since, Now: now, Home: s.Getenv("HOME")})
	q := state.AuditQuery{Since: since, Skipped: func(err error) { fmt.Fprintf(s.ErrOut, "askperm: audit log: %v\n", err) }}
	add := func(e state.AuditEntry) error {
		sg.Add(suggest.Entry{Time: e.Time, Decision: e.Decision, ByPerson: e.ByPerson(), Inexact: len(e.Inexact) > 0,
			Tool: e.Tool, Server: e.Server, Source: e.Source, Action: e.Action, Dimensions: e.Dimensions, Shells: e.Shells})
		return nil
	}
	if err := state.ScanAudit(dir, q, add); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("audit log: %w", err)}
	}
	rules := sg.Rules()
	text := suggest.File(rules)
	if o.write != "" && len(rules) == 0 {
		fmt.Fprintf(s.ErrOut, "askperm: no rule to suggest; %s not written\n", o.write)
		return nil
	}
	if o.write != "" {
		if err := writeSuggested(sg, rules, o.write, text); err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("--write %s: %w", o.write, err)}
		}
		fmt.Fprintf(s.ErrOut, "askperm: %d rule(s) written to %s\n", len(rules), o.write)
		return nil
	}
	if o.json {
		return json.NewEncoder(s.Decision).Encode(suggestJSON(rules))
	}
	_, err = s.Decision.Write(text)
	return err
}

// writeSuggested writes text, the file of rules, to the new file path:
// written beside it first, checked by loading it (Suggester.Check), then
// linked into place, which fails if path exists.
func writeSuggested(sg *suggest.Suggester, rules []suggest.Rule, path string, text []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return errors.New("exists: give a new file")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".askperm-suggest-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := sg.Check(tmp.Name(), rules); err != nil {
		return fmt.Errorf("the rules do not hold: %w", err)
	}
	return os.Link(tmp.Name(), path)
}

// suggestedRule is a proposed rule as --json writes it.
type suggestedRule struct {
	Name       string            `json:"name"`
	Tool       string            `json:"tool,omitempty"`
	Server     string            `json:"server,omitempty"`
	Source     string            `json:"source,omitempty"`
	Action     string            `json:"action,omitempty"`
	Dimensions map[string]string `json:"dimensions"`
	Approved   int               `json:"approved"`
	Denied     int               `json:"denied_neighbours"`
	First      time.Time         `json:"first"`
	Last       time.Time         `json:"last"`
	PerDay     float64           `json:"prompts_per_day"`
}

func suggestJSON(rules []suggest.Rule) []suggestedRule {
	out := []suggestedRule{}
	for _, r := range rules {
		out = append(out, suggestedRule{r.Name, r.Tool, r.Server, r.Source, r.Action, r.Dimensions,
			r.Approved, len(r.Denied), r.First.UTC(), r.Last.UTC(), r.PerDay})
	}
	return out
}

// stateDirOf is the state directory the settings name.
func stateDirOf(o memoryOptions, s cli.Streams) (string, error) {
	set, err := settings.Resolve(settings.Flags{StateDir: o.stateDir, Config: o.config}, s.Getenv)
	if err != nil {
		return "", cli.Usage("%v", err)
	}
	if set.StateDir == "" {
		return "", cli.Usage("no state directory: set XDG_STATE_HOME or HOME, or give --state-dir")
	}
	return set.StateDir, nil
}

// parseSince is a --since: a number of days (30d), a duration (12h) or
// a time (RFC 3339), as the start of a window ending at now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.AddDate(0, 0, -days), nil
		}
	}
	q, err := (&cli.LogFilter{Since: s}).Query(now)
	return q.Since, err
}

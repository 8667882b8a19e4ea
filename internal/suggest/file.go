package suggest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/policy"
)

// maxExamples is how many distinct approved requests, and denied ones,
// a rule shows as its examples.
const maxExamples = 5

// File is rules as a rules file (protocol section 8): each rule with a
// comment of its counts, its [[rule.match]] examples the distinct
// requests it came from (the first maxExamples), its [[rule.not_match]]
// the last denied requests of its tool, server and action. Every string
// is written as a TOML basic string (a JSON string is one).
func File(rules []Rule) []byte {
	var b bytes.Buffer
	b.WriteString("# Rules suggested by askperm suggest from the requests a person approved.\n")
	b.WriteString("# Each allows what a person approved again and again and never denied;\n")
	b.WriteString("# read each before using it.\n")
	if len(rules) == 0 {
		b.WriteString("# None: no group of requests was approved often enough and never denied.\n")
	}
	for _, r := range rules {
		fmt.Fprintf(&b, "\n# %s: approved %d times by a person, first %s, last %s, never denied;\n",
			r.Name, r.Approved, r.First.UTC().Format(time.RFC3339), r.Last.UTC().Format(time.RFC3339))
		fmt.Fprintf(&b, "# it would have saved %.1f prompts a day.\n", r.PerDay)
		b.WriteString("[[rule]]\n")
		fmt.Fprintf(&b, "name = %s\n", quote(r.Name))
		writeFields(&b, r.Tool, r.Server, r.Source, r.Action)
		b.WriteString("dimensions = {")
		for i, name := range sortedKeys(r.Dimensions) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s = %s", quote(name), quote(r.Dimensions[name]))
		}
		b.WriteString(" }\n")
		b.WriteString("only_dimensions = true\n")
		for _, ex := range distinct(r.Sources, false) {
			b.WriteString("[[rule.match]]\n")
			writeExample(&b, ex)
		}
		for _, ex := range distinct(r.Denied, true) {
			b.WriteString("[[rule.not_match]]\n")
			writeExample(&b, ex)
		}
	}
	return b.Bytes()
}

// writeFields writes the fields given of a rule or an example.
func writeFields(b *bytes.Buffer, tool, server, source, action string) {
	for _, f := range []struct{ key, v string }{{"tool", tool}, {"server", server}, {"source", source}, {"action", action}} {
		if f.v != "" {
			fmt.Fprintf(b, "%s = %s\n", f.key, quote(f.v))
		}
	}
}

// writeExample writes req as an example's table (a request, section 1).
func writeExample(b *bytes.Buffer, req *decision.Request) {
	writeFields(b, req.Tool, req.Server, req.Source, req.Action)
	if len(req.Dimensions) == 0 {
		return
	}
	b.WriteString("dimensions = [")
	for i, d := range req.Dimensions {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, " { name = %s, value = %s", quote(d.Name), quote(d.Value))
		if d.IsShell() {
			b.WriteString(`, syntax = "shell"`)
			if d.Shell != "" && d.Shell != decision.DialectBash {
				fmt.Fprintf(b, ", shell = %s", quote(string(d.Shell)))
			}
		}
		b.WriteString(" }")
	}
	b.WriteString(" ]\n")
}

// distinct is the first (or last) maxExamples requests of reqs with
// distinct dimensions.
func distinct(reqs []*decision.Request, last bool) []*decision.Request {
	var out []*decision.Request
	seen := map[string]bool{}
	for i := range reqs {
		if last {
			i = len(reqs) - 1 - i
		}
		k := keyOf(reqs[i])
		if !seen[k] && len(out) < maxExamples {
			seen[k] = true
			out = append(out, reqs[i])
		}
	}
	return out
}

func keyOf(r *decision.Request) string {
	parts := []string{r.Tool, r.Server, r.Source, r.Action}
	for _, d := range r.Dimensions {
		parts = append(parts, d.Name, d.Value, string(d.Syntax), string(d.Shell))
	}
	return strings.Join(parts, "\x00")
}

// quote is s as a TOML basic string: a JSON string, which escapes every
// control character.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// probe is a file name no request is expected to name: a folder rule
// covering it in / or the home directory is wider than its requests. As
// a dimension's name, one no request is expected to have: a rule that
// allows a source with it added leaves dimensions open.
const probe = ".askperm-probe"

// Check loads the rules file at file with the rules loader (its examples
// checked as for any rules file) and checks it against what was read:
// the file allows every request each of rules came from, and allows no
// request a person denied; each rule names every dimension of its
// requests (no `any`) and allows none with a dimension more (a source
// with one added is not allowed), and none covers `/` or the home
// directory whole.
func (s *Suggester) Check(file string, rules []Rule) error {
	p, err := policy.Load("", []string{file}, "")
	if err != nil {
		return err
	}
	allowed := func(req *decision.Request) bool {
		v, _ := policy.Combine(p.Opinions(req))
		return v == policy.Allow
	}
	for _, r := range rules {
		for _, src := range r.Sources {
			if !allowed(src) {
				return fmt.Errorf("rule %q does not allow a request it came from: %s", r.Name, describeReq(src))
			}
			for _, d := range src.Dimensions {
				if _, ok := r.Dimensions[d.Name]; !ok {
					return fmt.Errorf("rule %q leaves dimension %q out: wider than the requests it came from", r.Name, d.Name)
				}
			}
			more := *src
			more.Dimensions = append(slices.Clip(src.Dimensions), decision.Dimension{Name: probe, Value: probe})
			if allowed(&more) {
				return fmt.Errorf("rule %q allows a request it came from with a dimension more: wider than the requests it came from", r.Name)
			}
		}
		if err := r.notWide(s.opt.Home); err != nil {
			return err
		}
	}
	for _, d := range s.denied {
		if allowed(d.req) {
			return fmt.Errorf("the rules allow a request a person denied: %s", describeReq(d.req))
		}
	}
	return nil
}

// notWide checks that no dimension of r allows a file named probe in
// `/` or in the home directory.
func (r *Rule) notWide(home string) error {
	m, err := match.NewCompiler().Matcher(r.spec())
	if err != nil {
		return fmt.Errorf("rule %q: %w", r.Name, err)
	}
	for _, dir := range []string{"/", home} {
		if dir == "" || len(r.Sources) == 0 {
			continue
		}
		for name := range r.Dimensions {
			req := *r.Sources[0]
			req.Dimensions = append([]decision.Dimension(nil), req.Dimensions...)
			for i := range req.Dimensions {
				if req.Dimensions[i].Name == name && !req.Dimensions[i].IsShell() {
					req.Dimensions[i].Value = path.Join(dir, probe)
				}
			}
			if m.Match(match.NewCache(&req)) && keyOf(&req) != keyOf(r.Sources[0]) {
				return fmt.Errorf("rule %q allows %s in %s: wider than the requests it came from", r.Name, name, dir)
			}
		}
	}
	return nil
}

// describeReq names req in a message: its fields and dimensions, as the
// log keeps them (rendered safe).
func describeReq(r *decision.Request) string {
	parts := []string{"tool " + quote(r.Tool), "action " + quote(r.Action)}
	if r.Server != "" {
		parts = append(parts, "server "+quote(r.Server))
	}
	for _, d := range r.Dimensions {
		parts = append(parts, d.Name+" "+quote(d.Value))
	}
	return strings.Join(parts, ", ")
}

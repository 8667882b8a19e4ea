package decision

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// This file maps a checked JSON tree onto a Request, with exact types and
// the protocol's limits.

var requestFields = []string{
	"version", "id", "server", "alias", "tool", "source", "action", "action_description",
	"reason", "dimensions", "workdir", "grants", "details", "arguments", "annotations",
	"persistent", "session_id", "run_id", "policy_revision", "role", "timeout", "_meta",
}

func mapRequest(root *node) (*Request, error) {
	f, err := object(root, "", requestFields, false)
	if err != nil {
		return nil, err
	}
	if v := f["version"]; v != nil {
		if err := checkVersion(v); err != nil {
			return nil, err
		}
	}
	if err := need(f, "", "action"); err != nil {
		return nil, err
	}
	r := &Request{}
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"server", &r.Server}, {"alias", &r.Alias}, {"tool", &r.Tool}, {"source", &r.Source},
		{"action", &r.Action}, {"action_description", &r.ActionDescription},
		{"session_id", &r.SessionID}, {"run_id", &r.RunID},
		{"policy_revision", &r.PolicyRevision}, {"role", &r.Role},
	} {
		if err := optLine(f, "", s.name, s.dst); err != nil {
			return nil, err
		}
	}
	if r.Action == "" {
		return nil, fail("action", "must not be empty")
	}
	if v := f["id"]; v != nil {
		id, err := line(v, "id")
		if err != nil {
			return nil, err
		}
		r.ID = &id
	}
	if v := f["reason"]; v != nil {
		if r.Reason, err = str(v, "reason", 0); err != nil {
			return nil, err
		}
	}
	if v := f["persistent"]; v != nil {
		p, err := boolean(v, "persistent")
		if err != nil {
			return nil, err
		}
		r.Persistent = &p
	}
	if v := f["timeout"]; v != nil {
		t, err := number(v, "timeout")
		if err != nil {
			return nil, err
		}
		if t <= 0 {
			return nil, fail("timeout", "must be a positive number of seconds")
		}
		r.Timeout = &t
	}
	if v := f["arguments"]; v != nil {
		r.Arguments = v.raw
	}
	if v := f["_meta"]; v != nil {
		if v.kind != '{' {
			return nil, fail("_meta", "expected an object, got %s", v.kindName())
		}
		r.Meta = v.raw
	}
	if v := f["annotations"]; v != nil {
		if r.Annotations, err = mapAnnotations(v); err != nil {
			return nil, err
		}
	}
	if v := f["workdir"]; v != nil {
		if r.Workdir, err = mapWorkdir(v); err != nil {
			return nil, err
		}
	}
	if v := f["dimensions"]; v != nil {
		if r.Dimensions, err = mapDimensions(v); err != nil {
			return nil, err
		}
	}
	if v := f["grants"]; v != nil {
		if r.Grants, err = mapGrants(v); err != nil {
			return nil, err
		}
	}
	if v := f["details"]; v != nil {
		if r.Details, err = mapDetails(v); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func mapAnnotations(n *node) (*Annotations, error) {
	// Other members are ignored: MCP adds hints over time.
	f, err := object(n, "annotations", []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}, true)
	if err != nil {
		return nil, err
	}
	a := &Annotations{}
	if err := optLine(f, "annotations", "title", &a.Title); err != nil {
		return nil, err
	}
	for _, h := range []struct {
		name string
		dst  **bool
	}{
		{"readOnlyHint", &a.ReadOnlyHint}, {"destructiveHint", &a.DestructiveHint},
		{"idempotentHint", &a.IdempotentHint}, {"openWorldHint", &a.OpenWorldHint},
	} {
		if v := f[h.name]; v != nil {
			b, err := boolean(v, "annotations."+h.name)
			if err != nil {
				return nil, err
			}
			*h.dst = &b
		}
	}
	return a, nil
}

func mapWorkdir(n *node) (*Workdir, error) {
	f, err := object(n, "workdir", []string{"value", "label"}, false)
	if err != nil {
		return nil, err
	}
	w := &Workdir{}
	if err := reqLine(f, "workdir", "value", &w.Value); err != nil {
		return nil, err
	}
	return w, optLine(f, "workdir", "label", &w.Label)
}

func mapDimensions(n *node) ([]Dimension, error) {
	elems, err := array(n, "dimensions")
	if err != nil {
		return nil, err
	}
	dims := make([]Dimension, len(elems))
	for i, e := range elems {
		path := "dimensions[" + strconv.Itoa(i) + "]"
		f, err := object(e, path, []string{"name", "label", "value", "scopes", "default", "syntax", "shell"}, false)
		if err != nil {
			return nil, err
		}
		d := &dims[i]
		if err := reqLine(f, path, "name", &d.Name); err != nil {
			return nil, err
		}
		if d.Name == "" {
			return nil, fail(path+".name", "must not be empty")
		}
		if slices.ContainsFunc(dims[:i], func(o Dimension) bool { return o.Name == d.Name }) {
			return nil, fail(path+".name", "dimension %q named twice", d.Name)
		}
		if err := reqLine(f, path, "value", &d.Value); err != nil {
			return nil, err
		}
		if err := optLine(f, path, "label", &d.Label); err != nil {
			return nil, err
		}
		if v := f["scopes"]; v != nil {
			if d.Scopes, err = mapScopes(v, path+".scopes"); err != nil {
				return nil, err
			}
		}
		if v := f["default"]; v != nil {
			if d.Default, err = integer(v, path+".default"); err != nil {
				return nil, err
			}
			if d.Default < 0 || d.Default >= len(d.Scopes) {
				return nil, fail(path+".default", "%d is not the index of one of its %d scopes", d.Default, len(d.Scopes))
			}
		}
		if err := mapSyntax(f, path, d); err != nil {
			return nil, err
		}
	}
	return dims, nil
}

var (
	syntaxes = []Syntax{SyntaxShell}
	dialects = []Dialect{DialectBash, DialectSh, DialectZsh, DialectFish}
)

// mapSyntax reads a dimension's syntax and shell: a shell only for a
// command line.
func mapSyntax(f map[string]*node, path string, d *Dimension) error {
	var syntax, shell string
	if err := optLine(f, path, "syntax", &syntax); err != nil {
		return err
	}
	if err := optLine(f, path, "shell", &shell); err != nil {
		return err
	}
	d.Syntax, d.Shell = Syntax(syntax), Dialect(shell)
	switch {
	case f["syntax"] != nil && !slices.Contains(syntaxes, d.Syntax):
		return fail(path+".syntax", "%q is not %q", syntax, SyntaxShell)
	case f["shell"] != nil && d.Syntax != SyntaxShell:
		return fail(path+".shell", "only a dimension of syntax %q has a shell", SyntaxShell)
	case f["shell"] != nil && !slices.Contains(dialects, d.Shell):
		return fail(path+".shell", "%q is none of bash, sh, zsh, fish", shell)
	}
	return nil
}

var scopeKinds = []ScopeKind{KindExact, KindPrefix, KindGlob, KindWords, KindAny}

func mapScopes(n *node, path string) ([]Scope, error) {
	elems, err := array(n, path)
	if err != nil {
		return nil, err
	}
	scopes := make([]Scope, len(elems))
	for i, e := range elems {
		p := path + "[" + strconv.Itoa(i) + "]"
		f, err := object(e, p, []string{"label", "match", "kind"}, false)
		if err != nil {
			return nil, err
		}
		s := &scopes[i]
		if err := reqLine(f, p, "label", &s.Label); err != nil {
			return nil, err
		}
		if err := reqLine(f, p, "match", &s.Match); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(scopes[:i], func(o Scope) bool { return o.Match == s.Match }) {
			return nil, fail(p+".match", "%q offered twice", s.Match)
		}
		s.Kind = KindExact
		if err := optOneOf(f, p, "kind", scopeKinds, &s.Kind); err != nil {
			return nil, err
		}
	}
	return scopes, nil
}

func mapGrants(n *node) ([]Grant, error) {
	elems, err := array(n, "grants")
	if err != nil {
		return nil, err
	}
	grants := make([]Grant, len(elems))
	for i, e := range elems {
		path := "grants[" + strconv.Itoa(i) + "]"
		f, err := object(e, path, []string{"name", "description", "implies"}, false)
		if err != nil {
			return nil, err
		}
		g := &grants[i]
		if err := reqLine(f, path, "name", &g.Name); err != nil {
			return nil, err
		}
		if g.Name == "" {
			return nil, fail(path+".name", "must not be empty")
		}
		if slices.ContainsFunc(grants[:i], func(o Grant) bool { return o.Name == g.Name }) {
			return nil, fail(path+".name", "grant %q named twice", g.Name)
		}
		if err := optLine(f, path, "description", &g.Description); err != nil {
			return nil, err
		}
		if v := f["implies"]; v != nil {
			if g.Implies, err = lines(v, path+".implies"); err != nil {
				return nil, err
			}
		}
	}
	return grants, checkImplies(grants)
}

// checkImplies: each name a grant implies is another grant of the request,
// named once. Implication may be circular: grants that imply each other
// are granted together.
func checkImplies(grants []Grant) error {
	names := make(map[string]bool, len(grants))
	for _, g := range grants {
		names[g.Name] = true
	}
	for i, g := range grants {
		seen := make(map[string]bool, len(g.Implies))
		for j, name := range g.Implies {
			path := "grants[" + strconv.Itoa(i) + "].implies[" + strconv.Itoa(j) + "]"
			switch {
			case name == g.Name:
				return fail(path, "%q is the grant itself, not another grant", name)
			case !names[name]:
				return fail(path, "%q is not a grant of this request", name)
			case seen[name]:
				return fail(path, "%q implied twice", name)
			}
			seen[name] = true
		}
	}
	return nil
}

func mapDetails(n *node) ([]Detail, error) {
	elems, err := array(n, "details")
	if err != nil {
		return nil, err
	}
	details := make([]Detail, len(elems))
	for i, e := range elems {
		path := "details[" + strconv.Itoa(i) + "]"
		f, err := object(e, path, []string{"label", "text"}, false)
		if err != nil {
			return nil, err
		}
		if err := reqLine(f, path, "label", &details[i].Label); err != nil {
			return nil, err
		}
		if err := need(f, path, "text"); err != nil {
			return nil, err
		}
		if details[i].Text, err = str(f["text"], path+".text", 0); err != nil {
			return nil, err
		}
	}
	return details, nil
}

// object returns an object's members by name. A name that is not known
// but equals a known one under case folding is always an error: another
// parser might take it for the known field. Other unknown names are errors
// unless open.
func object(n *node, path string, known []string, open bool) (map[string]*node, error) {
	if n.kind != '{' {
		return nil, fail(path, "expected an object, got %s", n.kindName())
	}
	out := make(map[string]*node, len(n.members))
	for _, m := range n.members {
		name := m.name()
		if slices.Contains(known, name) {
			out[name] = m.val
			continue
		}
		if i := slices.IndexFunc(known, func(k string) bool { return strings.EqualFold(k, name) }); i >= 0 {
			return nil, fail(join(path, name), "unknown field (field names are case-sensitive; did you mean %q?)", known[i])
		}
		if !open {
			return nil, fail(join(path, name), "unknown field")
		}
	}
	return out, nil
}

func array(n *node, path string) ([]*node, error) {
	if n.kind != '[' {
		return nil, fail(path, "expected an array, got %s", n.kindName())
	}
	if len(n.elems) > MaxListEntries {
		return nil, fail(path, "more than %d entries", MaxListEntries)
	}
	return n.elems, nil
}

// str returns a string value of at most max bytes (0: no limit).
func str(n *node, path string, max int) (string, error) {
	if n.kind != '"' {
		return "", fail(path, "expected a string, got %s", n.kindName())
	}
	text := n.str()
	if max > 0 && len(text) > max {
		return "", fail(path, "longer than %d bytes", max)
	}
	return text, nil
}

// line returns a single-line string field.
func line(n *node, path string) (string, error) { return str(n, path, MaxLineBytes) }

// lines returns an array of single-line strings, nil when it is empty.
func lines(n *node, path string) ([]string, error) {
	elems, err := array(n, path)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, e := range elems {
		s, err := line(e, path+"["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// optLine sets *dst from an optional single-line field of f; parent is the
// path of f.
func optLine(f map[string]*node, parent, name string, dst *string) error {
	v := f[name]
	if v == nil {
		return nil
	}
	s, err := line(v, join(parent, name))
	*dst = s
	return err
}

// reqLine is optLine for a required field.
func reqLine(f map[string]*node, parent, name string, dst *string) error {
	if err := need(f, parent, name); err != nil {
		return err
	}
	return optLine(f, parent, name, dst)
}

// need reports the first of the required names that f lacks.
func need(f map[string]*node, parent string, names ...string) error {
	for _, name := range names {
		if f[name] == nil {
			return fail(join(parent, name), "missing (required)")
		}
	}
	return nil
}

// optOneOf is optLine for a field that must be one of values.
func optOneOf[T ~string](f map[string]*node, parent, name string, values []T, dst *T) error {
	v := f[name]
	if v == nil {
		return nil
	}
	s, err := line(v, join(parent, name))
	if err != nil {
		return err
	}
	if !slices.Contains(values, T(s)) {
		names := make([]string, len(values))
		for i, v := range values {
			names[i] = string(v)
		}
		return fail(join(parent, name), "%q is not one of %s", s, strings.Join(names, ", "))
	}
	*dst = T(s)
	return nil
}

func boolean(n *node, path string) (bool, error) {
	switch n.kind {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return false, fail(path, "expected a boolean, got %s", n.kindName())
}

func number(n *node, path string) (float64, error) {
	if n.kind != '0' {
		return 0, fail(path, "expected a number, got %s", n.kindName())
	}
	return n.num, nil
}

// checkVersion accepts only the protocol version askperm speaks.
func checkVersion(n *node) error {
	v, err := integer(n, "version")
	if err != nil {
		return err
	}
	if v != Version {
		return fail("version", "unsupported protocol version %d (askperm speaks %d)", v, Version)
	}
	return nil
}

func integer(n *node, path string) (int, error) {
	f, err := number(n, path)
	if err != nil {
		return 0, fail(path, "expected an integer, got %s", n.kindName())
	}
	if f != float64(int(f)) || bytes.ContainsAny(n.raw, ".eE") {
		return 0, fail(path, "expected an integer, got %s", n.raw)
	}
	return int(f), nil
}

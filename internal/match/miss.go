package match

import (
	"fmt"
	"slices"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// Miss says, for a person reading why a rule did not match, the first
// matcher of m that does not hold for the cache's request, as an allow
// (allow) or as a deny reads it; "" when every one holds. Values are
// the request's as written, for the caller to render.
func (m Matcher) Miss(c *Cache, allow bool) string {
	for i, g := range m.fields {
		if g.p == nil || c.Field(Field(i), g) {
			continue
		}
		value := [4]string{c.req.Tool, c.req.Server, c.req.Source, c.req.Action}[i]
		if value == "" {
			return fmt.Sprintf("%s: the request has none (the rule wants %q)", fieldNames[i], g.src)
		}
		return fmt.Sprintf("%s %q does not match %q", fieldNames[i], value, g.src)
	}
	for _, d := range m.dims {
		one := Matcher{dims: []dimGlob{d}}
		if allow {
			if ok, _ := one.Allows(c); ok {
				continue
			}
		} else if one.Wide(c) != shell.Not {
			continue
		}
		i := slices.IndexFunc(c.req.Dimensions, func(x decision.Dimension) bool { return x.Name == d.name })
		switch {
		case i < 0:
			return fmt.Sprintf("dimensions.%s: the request has no such dimension (the rule wants %q)", d.name, d.src)
		case allow && c.req.Dimensions[i].IsShell():
			return fmt.Sprintf("dimensions.%s: %q is not matched by %q in every simple command (or a command is opaque)", d.name, c.req.Dimensions[i].Value, d.src)
		}
		return fmt.Sprintf("dimensions.%s: %q does not match %q", d.name, c.req.Dimensions[i].Value, d.src)
	}
	return ""
}

package decision

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// EncodeRequest returns the bytes a caller writes on askperm's stdin for r,
// and sent: those bytes as askperm will parse them, whose SHA256 is the
// request_sha256 the decision must carry (pass sent to ParseDecision).
//
// Optional fields are left out when zero (an empty string, Default 0, a
// nil pointer, slice or raw JSON), as Parse models absent ones; required
// ones are always written, and r.SHA256 is ignored. Arguments and Meta are
// copied byte for byte. The bytes are checked with Parse, so a request
// askperm would refuse is an error here rather than an exit 65 there; only
// askperm's --max-request cap is left for the caller to respect.
func EncodeRequest(r *Request) (b []byte, sent *Request, err error) {
	w := &jsonWriter{}
	w.request(r)
	err = w.err
	if err == nil {
		sent, err = Parse(w.buf)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the built request is invalid: %w", err)
	}
	return w.buf, sent, nil
}

// jsonWriter appends one compact JSON object. Strings are quoted by
// jsontext, raw JSON is copied after a check that it is exactly one value:
// `1,"tool":"x"` as arguments would otherwise add a member. The first error
// is kept, naming the field being written.
type jsonWriter struct {
	buf   []byte
	path  string // of the object or array being written
	field string // of the value being written
	comma bool   // a member or element precedes the next one
	err   error
}

func (w *jsonWriter) request(r *Request) {
	w.nest('{', '}', "", func() {
		w.member("version")
		w.buf = strconv.AppendInt(w.buf, Version, 10)
		w.optString("id", r.ID)
		w.str("server", r.Server)
		w.str("alias", r.Alias)
		w.str("tool", r.Tool)
		w.str("source", r.Source)
		w.member("action") // required: an empty one is Parse's to refuse
		w.quote(r.Action)
		w.str("action_description", r.ActionDescription)
		w.str("reason", r.Reason)
		writeArray(w, "dimensions", r.Dimensions, w.dimension)
		if r.Workdir != nil {
			w.object("workdir", func() {
				w.member("value")
				w.quote(r.Workdir.Value)
				w.str("label", r.Workdir.Label)
			})
		}
		writeArray(w, "grants", r.Grants, w.grant)
		writeArray(w, "details", r.Details, func(d *Detail) {
			w.member("label")
			w.quote(d.Label)
			w.member("text")
			w.quote(d.Text)
		})
		w.raw("arguments", r.Arguments)
		if r.Annotations != nil {
			w.object("annotations", func() { w.annotations(r.Annotations) })
		}
		w.optBool("persistent", r.Persistent)
		w.str("session_id", r.SessionID)
		w.str("run_id", r.RunID)
		w.str("policy_revision", r.PolicyRevision)
		w.str("role", r.Role)
		w.timeout(r.Timeout)
		w.raw("_meta", r.Meta)
	})
}

func (w *jsonWriter) dimension(d *Dimension) {
	w.member("name")
	w.quote(d.Name)
	w.str("label", d.Label)
	w.member("value")
	w.quote(d.Value)
	writeArray(w, "scopes", d.Scopes, func(s *Scope) {
		w.member("label")
		w.quote(s.Label)
		w.member("match")
		w.quote(s.Match)
		w.str("kind", string(s.Kind))
	})
	if d.Default != 0 {
		w.member("default")
		w.buf = strconv.AppendInt(w.buf, int64(d.Default), 10)
	}
	w.str("syntax", string(d.Syntax))
	w.str("shell", string(d.Shell))
}

func (w *jsonWriter) grant(g *Grant) {
	w.member("name")
	w.quote(g.Name)
	w.str("description", g.Description)
	if g.Implies != nil {
		w.member("implies")
		w.nest('[', ']', join(w.path, "implies"), func() {
			for i, name := range g.Implies {
				w.sep()
				w.field = w.path + "[" + strconv.Itoa(i) + "]"
				w.quote(name)
			}
		})
	}
}

func (w *jsonWriter) annotations(a *Annotations) {
	w.str("title", a.Title)
	w.optBool("readOnlyHint", a.ReadOnlyHint)
	w.optBool("destructiveHint", a.DestructiveHint)
	w.optBool("idempotentHint", a.IdempotentHint)
	w.optBool("openWorldHint", a.OpenWorldHint)
}

// timeout writes a number; NaN and infinities have no JSON form.
func (w *jsonWriter) timeout(t *float64) {
	if t == nil {
		return
	}
	w.member("timeout")
	if math.IsNaN(*t) || math.IsInf(*t, 0) {
		w.fail("%v is not a JSON number", *t)
	}
	w.buf = jsontext.AppendFloat(w.buf, *t, 64)
}

// writeArray writes the elements of a non-nil slice as objects.
func writeArray[T any](w *jsonWriter, name string, items []T, members func(*T)) {
	if items == nil {
		return
	}
	w.member(name)
	path := join(w.path, name)
	w.nest('[', ']', path, func() {
		for i := range items {
			w.sep()
			w.nest('{', '}', path+"["+strconv.Itoa(i)+"]", func() { members(&items[i]) })
		}
	})
}

// object writes a member whose value is an object.
func (w *jsonWriter) object(name string, members func()) {
	w.member(name)
	w.nest('{', '}', join(w.path, name), members)
}

// nest writes an object or array at path, its contents written by body.
func (w *jsonWriter) nest(open, close byte, path string, body func()) {
	outer := w.path
	w.buf = append(w.buf, open)
	w.path, w.comma = path, false
	body()
	w.buf = append(w.buf, close)
	w.path, w.comma = outer, true
}

// sep separates an element or member from the one before it.
func (w *jsonWriter) sep() {
	if w.comma {
		w.buf = append(w.buf, ',')
	}
	w.comma = true
}

// member writes a member's name; its value must follow.
func (w *jsonWriter) member(name string) {
	w.sep()
	w.buf = strconv.AppendQuote(w.buf, name) // names are ASCII constants
	w.buf = append(w.buf, ':')
	w.field = join(w.path, name)
}

func (w *jsonWriter) quote(s string) {
	var err error
	if w.buf, err = jsontext.AppendQuote(w.buf, s); err != nil {
		w.fail("invalid UTF-8") // the only error AppendQuote reports
	}
}

// str writes an optional string member, absent when empty.
func (w *jsonWriter) str(name, s string) {
	if s != "" {
		w.member(name)
		w.quote(s)
	}
}

func (w *jsonWriter) optString(name string, s *string) {
	if s != nil {
		w.member(name)
		w.quote(*s)
	}
}

func (w *jsonWriter) optBool(name string, b *bool) {
	if b != nil {
		w.member(name)
		w.buf = strconv.AppendBool(w.buf, *b)
	}
}

// raw writes JSON held as bytes, absent when nil.
func (w *jsonWriter) raw(name string, v []byte) {
	if v == nil {
		return
	}
	w.member(name)
	if !jsontext.Value(v).IsValid() {
		w.fail("not exactly one valid JSON value")
	}
	w.buf = append(w.buf, v...)
}

func (w *jsonWriter) fail(format string, args ...any) {
	if w.err == nil {
		w.err = errorIn("request", fail(w.field, format, args...))
	}
}

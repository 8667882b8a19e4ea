package decision

import (
	"slices"
	"strconv"
)

// Encode returns d as one line of JSON ending in a newline, ready for a
// single write: the members in Decision's field order, absent ones left
// out, as encoding/json writes it without HTML escaping (the tests hold it
// to that; invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 stay
// unescaped, as RFC 8785 writes them). Written by hand because a helper
// writes one decision per process, and encoding/json's first use of a type
// cost more than the rest of deciding a canned answer.
func Encode(d Decision) []byte {
	w := &jsonWriter{buf: make([]byte, 0, 256)}
	w.decision(&d)
	// w.err can only report invalid UTF-8, already replaced in w.buf.
	return append(w.buf, '\n')
}

func (w *jsonWriter) decision(d *Decision) {
	w.nest('{', '}', "", func() {
		w.member("version")
		w.buf = strconv.AppendInt(w.buf, int64(d.Version), 10)
		w.optString("id", d.ID)
		w.member("decision")
		w.quote(d.Decision)
		w.member("persist")
		w.quote(d.Persist)
		w.str("message", d.Message)
		if len(d.Grants) > 0 {
			w.member("grants")
			w.nest('[', ']', "grants", func() {
				for _, g := range d.Grants {
					w.sep()
					w.quote(g)
				}
			})
		}
		if d.Rule != nil {
			w.object("rule", func() { w.rule(d.Rule) })
		}
		w.member("cause")
		w.quote(string(d.Cause))
		w.member("frontend")
		w.quote(string(d.Frontend))
		if d.Stop {
			w.member("stop")
			w.buf = append(w.buf, "true"...)
		}
		w.member("request_sha256")
		w.quote(d.RequestSHA256)
	})
}

func (w *jsonWriter) rule(r *Rule) {
	w.member("scopes")
	if r.Scopes == nil {
		w.buf = append(w.buf, "null"...)
	} else {
		w.nest('{', '}', "rule.scopes", func() {
			names := make([]string, 0, len(r.Scopes))
			for name := range r.Scopes {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				w.sep()
				w.quote(name)
				w.buf = append(w.buf, ':')
				w.quote(r.Scopes[name])
			}
		})
	}
	w.str("workdir_scope", r.WorkdirScope)
	w.member("lifetime")
	w.quote(r.Lifetime)
	if r.Expires != 0 {
		w.member("expires")
		w.buf = strconv.AppendInt(w.buf, r.Expires, 10)
	}
}

package pipeline

import (
	"cmp"
	"time"
	"unicode/utf8"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/policy"
	"github.com/askperm/askperm/internal/state"
)

// maxAuditValue caps each request value in the audit log, in bytes of its
// safe rendering.
const maxAuditValue = 256

// auditEntry is the audit log's line for decision d of c's request, made
// at now.
func auditEntry(c *call, d *decision.Decision, ops []policy.Opinion, now time.Time) state.AuditEntry {
	r := c.req
	var inexact []string
	// logged is audited of s, noting in inexact what the log changed.
	logged := func(field, s string) string {
		a := audited(s)
		if a != s {
			inexact = append(inexact, audited(field))
		}
		return a
	}
	e := state.AuditEntry{
		Time: now.UTC(), RequestSHA256: d.RequestSHA256, ID: r.ID,
		Server: logged("server", r.Server), Alias: audited(r.Alias), Tool: logged("tool", r.Tool), Source: logged("source", r.Source),
		Action: logged("action", r.Action), SessionID: audited(r.SessionID),
		Decision: d.Decision, Persist: d.Persist, Rule: d.Rule, Cause: d.Cause, Frontend: d.Frontend, Stop: d.Stop,
		LatencyMS: now.Sub(c.start).Milliseconds(),
		Approver:  c.approver,
	}
	if c.asked != nil {
		ms := c.asked.Milliseconds()
		e.AskedMS = &ms
	}
	for _, why := range c.ignored {
		e.Ignored = append(e.Ignored, audited(why))
	}
	if len(r.Dimensions) > 0 {
		e.Dimensions = map[string]string{}
		for _, dim := range r.Dimensions {
			name := logged(dim.Name, dim.Name)
			e.Dimensions[name] = logged(dim.Name, dim.Value)
			if dim.IsShell() {
				if e.Shells == nil {
					e.Shells = map[string]string{}
				}
				e.Shells[name] = string(cmp.Or(dim.Shell, decision.DialectBash))
			}
		}
	}
	e.Inexact = inexact
	if d.Frontend == decision.FrontendRules || d.Frontend == decision.FrontendMemory {
		_, winners := policy.Combine(ops)
		for _, w := range winners {
			e.DecidedBy = append(e.DecidedBy, audited(w.Name))
		}
	}
	if by := reviewedBy(d, ops); by != nil {
		e.DecidedBy = by
	}
	return e
}

// audited is request text as the audit log keeps it: rendered safe, and
// cut to maxAuditValue bytes on a rune boundary.
func audited(s string) string {
	s = form.Line(s)
	if len(s) <= maxAuditValue {
		return s
	}
	cut := maxAuditValue
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

package cli

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/settings"
	"github.com/askperm/askperm/internal/state"
)

// The tables of askperm's records: its rules, local or the team's, and
// its audit log, local or the team's stream.

// LogFilter is the filter of askperm log's flags (Register).
type LogFilter struct {
	Session, Since, Decision, Tool string
}

// Register adds the filter's flags to c.
func (o *LogFilter) Register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.Session, "session", "", "only this session's decisions")
	f.StringVar(&o.Since, "since", "", "only decisions since this long ago (1h) or this time (RFC 3339)")
	f.StringVar(&o.Decision, "decision", "", "only allow or only deny")
	f.StringVar(&o.Tool, "tool", "", "only this tool's decisions")
	Must(c.RegisterFlagCompletionFunc("decision", Fixed("allow", "deny")))
}

// Query is the filter the flags describe, checked once.
func (o *LogFilter) Query(now time.Time) (state.AuditQuery, error) {
	var q state.AuditQuery
	if o.Since != "" {
		if d, err := settings.ParseDuration(o.Since); err == nil {
			q.Since = now.Add(-d)
		} else if q.Since, err = time.Parse(time.RFC3339, o.Since); err != nil {
			return q, Usage("--since: %q is neither a duration (1h, 30m) nor a time (2026-12-01T08:00:00Z)", o.Since)
		}
	}
	if o.Decision != "" && o.Decision != "allow" && o.Decision != "deny" {
		return q, Usage("--decision: %q is neither allow nor deny", o.Decision)
	}
	q.Keep = func(e state.AuditEntry) bool {
		return (o.Session == "" || e.SessionID == o.Session) &&
			(o.Decision == "" || e.Decision == o.Decision) && (o.Tool == "" || e.Tool == o.Tool)
	}
	return q, nil
}

// Run is what both log commands do around writing the log: it checks
// the filter at now, resolves the settings of flags, reports each
// skipped line on s.ErrOut, and buffers write's output to s.Decision.
func (o *LogFilter) Run(s Streams, flags settings.Flags, now time.Time, write func(out io.Writer, set settings.Settings, q state.AuditQuery) error) error {
	q, err := o.Query(now)
	if err != nil {
		return err
	}
	set, err := settings.Resolve(flags, s.Getenv)
	if err != nil {
		return Usage("%v", err)
	}
	q.Skipped = func(err error) { fmt.Fprintf(s.ErrOut, "askperm: audit log: %v\n", err) }
	out := bufio.NewWriterSize(s.Decision, 64<<10)
	if err := write(out, set, q); err != nil {
		return err
	}
	return out.Flush()
}

var RulesHeading = []string{"ID", "DECISION", "SERVER", "TOOL", "ACTION", "SCOPES", "WORKDIR", "GRANTS", "EXPIRES", "ORIGIN"}

// RuleRow is r's row of rules list; every text in it is rendered safe,
// the words of a rule's own too (its decision, kinds, workdir scope):
// a team rule comes from another machine.
func RuleRow(r state.Rule) []string {
	var scopes []string
	for _, d := range r.Dimensions {
		scopes = append(scopes, form.Line(d.Name)+"="+form.Line(string(d.Kind))+":"+form.Line(d.Match))
	}
	workdir := form.Line(r.WorkdirScope)
	if r.Workdir != "" {
		workdir = form.Line(r.Workdir)
	}
	grants := make([]string, len(r.Grants))
	for i, g := range r.Grants {
		grants[i] = form.Line(g)
	}
	expires := "never"
	if r.Expires != 0 {
		expires = time.Unix(r.Expires, 0).Format(time.DateTime)
	}
	return []string{strconv.FormatUint(r.ID, 10), form.Line(r.Decision), Dash(form.Line(r.Server)), Dash(form.Line(r.Tool)),
		form.Line(r.Action), Dash(strings.Join(scopes, " ")), Dash(workdir), Dash(strings.Join(grants, ",")), expires, originText(r.Origin)}
}

// Shown is text another machine wrote (a line of the team's audit
// stream) as askperm shows it: as is when it is text rendered safe
// already, as the audit log writes it (form.Line would change nothing
// but double its backslashes and escape its ⟨), else rendered by
// form.Line; false when it had to be.
func Shown(s string) (string, bool) {
	line := form.Line(s)
	if line == renderedAgain.Replace(s) {
		return s, true
	}
	return line, false
}

// ASCIIJSON is b, JSON, with every rune beyond ASCII and DEL written as
// a \u escape: the same JSON, of which a terminal shows every byte as
// is. For JSON of text from other machines (team rules), which JSON's
// own escapes leave raw when it is C1, bidi or other format characters.
func ASCIIJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf && b[i] != 0x7f {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		i += n
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// renderedAgain is what form.Line does to text it renders unchanged but
// for the two runes that start its escapes.
var renderedAgain = strings.NewReplacer(`\`, `\\`, "⟨", `\u{27e8}`)

// originText says who gave a rule: a person in a frontend, or a canned
// answer.
func originText(origin string) string {
	switch origin {
	case string(decision.FrontendAnswers):
		return "canned-answer"
	case state.OriginUnknown:
		return origin
	}
	return "person/" + form.Line(origin)
}

// LogColumns are the table's headings; every row has as many cells.
var LogColumns = []string{"TIME", "DECISION", "CAUSE", "BY", "SESSION", "TOOL", "ACTION", "VALUES"}

// LogRow is the table's row for e.
func LogRow(e state.AuditEntry) []string {
	var values []string
	for _, v := range e.Dimensions {
		values = append(values, v)
	}
	sort.Strings(values)
	by := string(e.Frontend)
	if len(e.DecidedBy) > 0 {
		by += " (" + strings.Join(e.DecidedBy, ", ") + ")"
	}
	verdict := e.Decision
	if e.Persist != "once" {
		verdict += " " + e.Persist
	}
	if e.Stop {
		verdict += " stop"
	}
	if e.NotRemembered != "" {
		verdict += " (not remembered)"
	}
	return []string{e.Time.Local().Format(time.DateTime), verdict, string(e.Cause), by,
		Dash(e.SessionID), Dash(e.Tool), e.Action, Dash(strings.Join(values, " "))}
}

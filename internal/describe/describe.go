// Package describe turns a tool call (a tool's name, its arguments and its
// MCP annotations) into a permission request whose dimensions let an
// always-rule cover no more than the person saw: the exact arguments by
// default; for an argument recognised as a path, the file, its folder and
// the workdir; for a URL, the URL and its origin; for a shell command, the
// command and, only when it holds no shell syntax, its leading words.
// Every argument is bound: those no dimension holds (other strings,
// numbers, booleans, arrays, objects) are one more exact dimension, so a
// rule saved for one query on a database covers no other; a value too
// long for a dimension is bound by its digest (see Exact), and a call
// none of whose arguments is recognised is pinned by all of them, `{}`
// included. A command is marked as a command line (syntax shell), never
// read as a path.
// The MCP proxy and the agents' hook adapters share it.
package describe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/shell"
)

// Call is one tool call to describe.
type Call struct {
	Server      string
	Tool        string
	Arguments   json.RawMessage // a JSON object, or nil
	Annotations *decision.Annotations
	// Workdir is the directory the agent works in, when known; paths under
	// it are offered a scope for all of it.
	Workdir string
}

// Argument names that hold a path or a shell command, besides values that
// show themselves (an absolute path, an http(s) URL).
var (
	pathNames    = []string{"path", "file", "file_path", "filepath", "filename", "directory", "dir", "source", "destination", "target", "repo_path", "cwd"}
	commandNames = []string{"command", "cmd", "script", "shell_command"}
)

// wordsKept is how many leading words of a command a words scope keeps,
// past the wrappers before it: the program and its subcommand (`git
// status`, `go test`, `timeout 60 go test`).
const wordsKept = 2

// Describe returns the request of c. Its action is network for a tool
// annotated open-world that would otherwise be read or write (it reaches
// past the machine, whatever it claims to leave alone), read for one
// annotated read-only, write for one annotated non-destructive, else
// destructive (MCP's defaults).
func Describe(c Call) (*decision.Request, error) {
	req := &decision.Request{Server: c.Server, Tool: c.Tool, Action: action(c.Annotations), Annotations: c.Annotations}
	if len(c.Arguments) > 0 {
		req.Arguments = c.Arguments
	}
	if c.Workdir != "" {
		req.Workdir = &decision.Workdir{Value: c.Workdir}
	}
	var args map[string]json.RawMessage
	if len(c.Arguments) > 0 {
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			return nil, fmt.Errorf("describe: arguments: not a JSON object: %w", err)
		}
	}
	rest := map[string]json.RawMessage{} // the members no dimension holds
	for _, name := range sortedKeys(args) {
		var s string
		d, ok := decision.Dimension{}, false
		if json.Unmarshal(args[name], &s) == nil && s != "" && name != "" && len(name) <= decision.MaxLineBytes {
			d, ok = dimension(name, s, c.Workdir)
		}
		switch {
		case !ok:
			rest[name] = args[name]
		case len(s) > decision.MaxLineBytes: // only its digest fits
			e := Exact(req, name, d.Label, s)
			e.Syntax = d.Syntax
			req.Dimensions = append(req.Dimensions, e)
		default:
			req.Dimensions = append(req.Dimensions, d)
		}
	}
	if len(rest) > 0 && len(req.Dimensions) > 0 {
		// Every argument is bound: those that are no dimension of their
		// own, exactly, as one more, so that a rule saved for a query on
		// a database never covers another query on it.
		canonical, err := canonicalOf(rest)
		if err != nil {
			return nil, err
		}
		req.Dimensions = append(req.Dimensions, Exact(req, unusedName(req.Dimensions, "other arguments"), "Other arguments", canonical))
	}
	if len(req.Dimensions) == 0 || len(req.Dimensions) > decision.MaxListEntries {
		// Nothing recognised, or more than a rule can hold: an always-rule
		// covers these exact arguments (no arguments are {}).
		req.Details = nil // the arguments' detail holds them all
		canonical := "{}"
		if len(args) > 0 {
			var err error
			if canonical, err = canonicalOf(args); err != nil {
				return nil, err
			}
		}
		req.Dimensions = []decision.Dimension{Exact(req, "arguments", "Arguments", canonical)}
	}
	return req, nil
}

// digestPrefix is how many characters of a value too long for a dimension
// its digest form shows.
const digestPrefix = 64

// Exact is a dimension whose only scope is exactly value. A value longer
// than a dimension may hold is bound by its SHA-256 instead, as
// `sha256:<hex> <its first characters>…`, and req gets a detail with the
// value in full, so the person can read all of what the rule pins.
func Exact(req *decision.Request, name, label, value string) decision.Dimension {
	if len(value) > decision.MaxLineBytes {
		sum := sha256.Sum256([]byte(value))
		short := []rune(value)
		if len(short) > digestPrefix {
			short = short[:digestPrefix]
		}
		req.Details = append(req.Details, decision.Detail{Label: label + " in full", Text: value})
		value = "sha256:" + hex.EncodeToString(sum[:]) + " " + string(short) + "…"
	}
	return decision.Dimension{Name: name, Label: label, Value: value,
		Scopes: []decision.Scope{{Label: "exactly this", Match: value, Kind: decision.KindExact}}}
}

func action(a *decision.Annotations) string {
	if a == nil {
		return "destructive"
	}
	readOnly := a.ReadOnlyHint != nil && *a.ReadOnlyHint
	harmless := readOnly || a.DestructiveHint != nil && !*a.DestructiveHint
	switch {
	case harmless && a.OpenWorldHint != nil && *a.OpenWorldHint:
		return "network"
	case readOnly:
		return "read"
	case harmless:
		return "write"
	}
	return "destructive"
}

// dimension is the dimension of argument name with value s, when it is a
// path, a URL or a command.
func dimension(name, s, workdir string) (decision.Dimension, bool) {
	d := decision.Dimension{Name: name, Label: name, Value: s}
	exact := decision.Scope{Label: "exactly this", Match: s, Kind: decision.KindExact}
	lower := strings.ToLower(name)
	switch {
	case slices.Contains(commandNames, lower):
		d.Syntax = decision.SyntaxShell // a command line, never a path
		d.Scopes = append([]decision.Scope{exact}, commandScopes(shell.Of(d))...)
	case isURL(s):
		d.Scopes = []decision.Scope{exact}
		if o := origin(s); o != "" && o != s {
			d.Scopes = append(d.Scopes, decision.Scope{Label: "anything on " + o, Match: o, Kind: decision.KindPrefix})
		}
	case path.IsAbs(s) || slices.Contains(pathNames, lower) && !strings.Contains(s, "://"):
		d.Scopes = []decision.Scope{exact}
		if path.IsAbs(s) {
			clean := path.Clean(s)
			if dir := path.Dir(clean); dir != "/" && dir != clean {
				d.Scopes = append(d.Scopes, decision.Scope{Label: "files in " + dir, Match: dir + "/", Kind: decision.KindPrefix})
			}
			if workdir != "" && path.IsAbs(workdir) && (decision.Scope{Match: workdir, Kind: decision.KindPrefix}).Covers(clean) &&
				path.Clean(workdir) != path.Dir(clean) {
				d.Scopes = append(d.Scopes, decision.Scope{Label: "anything in the workdir", Match: path.Clean(workdir) + "/", Kind: decision.KindPrefix})
			}
		}
	default:
		return decision.Dimension{}, false
	}
	// A scope the call itself is not in would be a rule about other calls;
	// a match offered twice is offered once.
	var kept []decision.Scope
	for _, sc := range d.Scopes {
		if Offerable(sc, d) && !slices.ContainsFunc(kept, func(k decision.Scope) bool { return k.Match == sc.Match }) {
			kept = append(kept, sc)
		}
	}
	d.Scopes = kept
	return d, true
}

// IsPath reports whether d is a dimension Describe makes of a path: not
// a command line nor a URL, not the arguments bound whole ("arguments",
// "other arguments"), and named as a path argument is (pathNames) or
// holding an absolute path. A dimension the caller wrote is judged the
// same way, by its name and value.
func IsPath(d decision.Dimension) bool {
	lower := strings.ToLower(d.Name)
	switch {
	case d.IsShell(), d.Value == "", strings.Contains(d.Value, "://"),
		lower == "arguments", strings.HasPrefix(lower, "other arguments"):
		return false
	}
	return path.IsAbs(d.Value) || slices.Contains(pathNames, lower)
}

// Offerable reports whether scope s of dimension d covers d's value for
// an allow, as a remembered rule will judge it: on a command line (syntax
// shell), an exact scope the whole line as written, any other kind each
// simple command (protocol section 10: shell.Line.Allowed); elsewhere the
// value as written.
func Offerable(s decision.Scope, d decision.Dimension) bool {
	if !d.IsShell() || s.Kind == decision.KindExact || s.Kind == "" || s.Kind == decision.KindAny {
		return s.Covers(d.Value)
	}
	return shell.Of(d).Allowed(shell.ScopeCovers(s))
}

// commandScopes are the per-command scopes offered for command line l
// (protocol section 10), besides the line exactly: these commands
// exactly, and commands starting with their first wordsKept words. A
// line of one command gets a words scope of its leading words; one of
// several, globs with one {alternative} per command, each read as a
// literal (a command is covered when one alternative covers it). None
// for a line holding a command that is not static (an opaque part: only
// the line exactly may be saved), or one whose words hold what could make
// two commands read alike (a blank in a word, a line break).
func commandScopes(l shell.Line) []decision.Scope {
	if !l.Parsed || len(l.Commands) == 0 {
		return nil
	}
	var texts, starts, shown []string
	for _, c := range l.Commands {
		text := c.MatchText()
		if !Plain(c) {
			return nil
		}
		texts = appendNew(texts, GlobLiteral(text))
		if lead, ok := Lead(c); ok {
			w := GlobLiteral(lead)
			starts = appendNew(appendNew(starts, w), w+" *")
			shown = appendNew(shown, lead)
		} else {
			starts = appendNew(starts, GlobLiteral(text))
		}
	}
	var out []decision.Scope
	if len(l.Commands) == 1 {
		if w, ok := Lead(l.Commands[0]); ok {
			out = append(out, decision.Scope{Label: "commands starting " + w, Match: w, Kind: decision.KindWords})
		}
		return fit(out)
	}
	var plain []string
	for _, c := range l.Commands {
		plain = appendNew(plain, c.MatchText())
	}
	out = append(out, decision.Scope{Label: "these commands exactly: " + strings.Join(plain, ", "), Match: alternatives(texts), Kind: decision.KindGlob})
	if len(shown) > 0 {
		var rest []string // the commands too short to start others, exactly
		for _, c := range l.Commands {
			if _, ok := Lead(c); !ok {
				rest = appendNew(rest, c.MatchText())
			}
		}
		label := "commands starting " + strings.Join(shown, ", ")
		if len(rest) > 0 {
			label += "; and exactly " + strings.Join(rest, ", ")
		}
		out = append(out, decision.Scope{Label: label, Match: alternatives(starts), Kind: decision.KindGlob})
	}
	return fit(out)
}

// Plain reports whether a scope of command c past the line exactly may
// be offered: c is static, and its words hold nothing that could make two
// commands read alike (a blank in a word, an empty word, a line break).
// The match text quotes a line break (shell.Command.MatchText): look for
// one in the words and targets themselves.
func Plain(c shell.Command) bool {
	return c.Static() && !slices.ContainsFunc(c.Words, func(w string) bool { return strings.ContainsAny(w, " \t\n\r") || w == "" }) &&
		!slices.ContainsFunc(c.Redirects, func(r shell.Redirect) bool { return strings.ContainsAny(r.Target, "\n\r") })
}

// Lead is the start of c a "commands starting with" scope keeps: its
// first wordsKept words past the wrappers before them (shell.Command.Lead);
// false for a command kept exactly: too short to start others, run by a
// runner (sudo, xargs, find), its words kept ending at an option (`git
// -C`), or with a redirection, which is its own.
func Lead(c shell.Command) (string, bool) {
	lead, ok := c.Lead(wordsKept)
	return strings.Join(lead, " "), ok && len(c.Redirects) == 0
}

// fit keeps the scopes whose match and label fit a request's line.
func fit(scopes []decision.Scope) []decision.Scope {
	var out []decision.Scope
	for _, s := range scopes {
		if len(s.Match) <= decision.MaxLineBytes && len(s.Label) <= decision.MaxLineBytes {
			out = append(out, s)
		}
	}
	return out
}

// alternatives is a glob matching any one of alts.
func alternatives(alts []string) string {
	if len(alts) == 1 {
		return alts[0]
	}
	return "{" + strings.Join(alts, ",") + "}"
}

// GlobLiteral is s as a glob matching s alone.
func GlobLiteral(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]{},`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Origin is an http(s) URL's origin (origin), "" for anything else.
func Origin(s string) string {
	if !isURL(s) {
		return ""
	}
	return origin(s)
}

// origin is the URL's scheme and host with a trailing slash: a prefix that
// ends at the host's boundary.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + "/"
}

// canonicalOf is the canonical JSON (RFC 8785) of the object members.
func canonicalOf(members map[string]json.RawMessage) (string, error) {
	b, err := json.Marshal(members)
	if err == nil {
		b, err = decision.Canonical(b)
	}
	if err != nil {
		return "", fmt.Errorf("describe: arguments: %w", err)
	}
	return string(b), nil
}

// unusedName is name, primed until no dimension of dims has it.
func unusedName(dims []decision.Dimension, name string) string {
	for slices.ContainsFunc(dims, func(d decision.Dimension) bool { return d.Name == name }) {
		name += "'"
	}
	return name
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

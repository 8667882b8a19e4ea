package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/shell"
)

// Rule is a remembered always-decision (protocol section 6): what it
// decides and everything a later request must match for it to decide.
type Rule struct {
	ID       uint64 `json:"id"`
	Decision string `json:"decision"` // allow or deny
	Server   string `json:"server,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Source   string `json:"source,omitempty"`
	Action   string `json:"action"`
	// Dimensions are the chosen scope of each of the request's dimensions,
	// with its kind.
	Dimensions []Dimension `json:"dimensions"`
	// WorkdirScope is "" (the request had no workdir), selected (Workdir
	// only) or all.
	WorkdirScope string   `json:"workdir_scope,omitempty"`
	Workdir      string   `json:"workdir,omitempty"`
	Grants       []string `json:"grants,omitempty"` // an allow covers no other grant
	// Origin is the frontend that answered: a person's (tui, line,
	// zenity, yad, pane…) or answers, a canned answer. Rules stored
	// before it was kept read as OriginUnknown.
	Origin  string `json:"origin"`
	Created int64  `json:"created"`
	Expires int64  `json:"expires,omitempty"` // Unix seconds; 0 never
}

// Dimension is a rule's scope for one dimension.
type Dimension struct {
	Name  string             `json:"name"`
	Match string             `json:"match"`
	Kind  decision.ScopeKind `json:"kind"`
}

// RuleOf is the rule an always-decision d of req saves; false when d is
// not one.
func RuleOf(req *decision.Request, d decision.Decision, now time.Time) (Rule, bool) {
	if d.Persist != decision.PersistAlways || d.Rule == nil {
		return Rule{}, false
	}
	r := Rule{
		Decision: d.Decision, Server: req.Server, Tool: req.Tool, Source: req.Source, Action: req.Action,
		Dimensions: []Dimension{}, WorkdirScope: d.Rule.WorkdirScope, Origin: string(d.Frontend), Created: now.Unix(), Expires: d.Rule.Expires,
	}
	for _, dim := range req.Dimensions {
		match, ok := d.Rule.Scopes[dim.Name]
		i := slices.IndexFunc(dim.Scopes, func(s decision.Scope) bool { return s.Match == match })
		if !ok || i < 0 {
			return Rule{}, false // a decision that does not fit its request saves nothing
		}
		r.Dimensions = append(r.Dimensions, Dimension{dim.Name, match, kindOf(dim.Scopes[i])})
	}
	if r.WorkdirScope == decision.WorkdirSelected && req.Workdir != nil {
		r.Workdir = req.Workdir.Value
	}
	if d.Decision == decision.Allow {
		r.Grants = slices.Clone(d.Grants)
	}
	return r, true
}

func kindOf(s decision.Scope) decision.ScopeKind {
	if s.Kind == "" {
		return decision.KindExact
	}
	return s.Kind
}

// OriginUnknown is the origin of a rule stored before origins were kept.
const OriginUnknown = "unknown"

// Covers reports how far r decides req at now: not expired; the same
// server, tool, source and action; the same dimensions, each value covered
// by the rule's scope; the same workdir when the rule's is selected (any
// workdir for all, none when the rule had none); and, for an allow, only
// grants the rule gives. An allow errs narrow and a deny wide: an allow
// covers a path only when it covers its resolved form too, a deny when it
// covers either, and a deny covers a command line when it covers any of
// its simple commands read any way the shell could run them
// (shell.Line.Denied; covers). A deny that cannot be shown not to cover a
// command line (a computed command) is shell.Maybe: it asks instead.
//
// An allow over a command line (a dimension of syntax shell) whose scope
// is not exact covers each static simple command its scope covers (its
// MatchText): Covers says Covered only when it covers them all; see
// Covering for a rule covering some.
func (r Rule) Covers(req *decision.Request, now time.Time) shell.Cover {
	c, part := r.covers(req, now, &readings{req: req})
	if part != nil {
		return shell.Not
	}
	return c
}

// readings reads each of a request's dimension values as a command line
// once, however many rules look.
type readings struct {
	req   *decision.Request
	lines map[int]shell.Line
}

func (rs *readings) of(i int) func() shell.Line {
	return func() shell.Line {
		l, ok := rs.lines[i]
		if !ok {
			if rs.lines == nil {
				rs.lines = map[int]shell.Line{}
			}
			l = shell.Of(rs.req.Dimensions[i])
			rs.lines[i] = l
		}
		return l
	}
}

// covers is how far r decides req: for an allow that covers only some
// simple commands of one command line, Covered and which (part); an
// allow covering some commands of two lines covers nothing (its allow of
// one line's command would hang on what runs in the other).
func (r Rule) covers(req *decision.Request, now time.Time, lines *readings) (shell.Cover, *match.Part) {
	if r.Expired(now) || r.Server != req.Server || r.Tool != req.Tool || r.Source != req.Source || r.Action != req.Action ||
		len(r.Dimensions) != len(req.Dimensions) {
		return shell.Not, nil
	}
	out := shell.Covered
	var part *match.Part
	for _, d := range r.Dimensions {
		i := slices.IndexFunc(req.Dimensions, func(rd decision.Dimension) bool { return rd.Name == d.Name })
		if i < 0 {
			return shell.Not, nil
		}
		s, dim := decision.Scope{Match: d.Match, Kind: d.Kind}, req.Dimensions[i]
		if r.Decision != decision.Deny && perCommand(s, dim) {
			// Static commands it covers (a glob word by word, another
			// kind on the match text); none of a line not parsed.
			covered := lines.of(i)().Covered(shell.ScopeCovers(s))
			switch n := count(covered); {
			case n == 0:
				return shell.Not, nil
			case n == len(covered) && lines.of(i)().Parsed:
				continue
			case part != nil:
				return shell.Not, nil
			}
			part = &match.Part{Dim: d.Name, Covered: covered}
			continue
		}
		out = min(out, covers(r.Decision == decision.Deny, s, dim, lines.of(i)))
	}
	switch r.WorkdirScope {
	case "":
		if req.Workdir != nil {
			return shell.Not, nil
		}
	case decision.WorkdirAll:
		if req.Workdir == nil {
			return shell.Not, nil
		}
	default:
		if req.Workdir == nil || decision.PathForm(req.Workdir.Value) != decision.PathForm(r.Workdir) {
			return shell.Not, nil
		}
	}
	if r.Decision == decision.Allow {
		for _, g := range req.GrantNames() {
			if !slices.Contains(r.Grants, g) {
				return shell.Not, nil
			}
		}
	}
	if out == shell.Not {
		return out, nil
	}
	return out, part
}

// perCommand reports whether scope s, in an allow, is applied to each
// simple command of d's value (protocol section 10): d is a command line
// and s is no exact scope (exact means the whole line as written) nor
// any.
func perCommand(s decision.Scope, d decision.Dimension) bool {
	return d.IsShell() && s.Kind != decision.KindExact && s.Kind != "" && s.Kind != decision.KindAny
}

// commandsDenied are the simple commands of l that scope s reaches for a
// deny, each read alone: what a remembered deny says of each command.
func commandsDenied(s decision.Scope, d decision.Dimension, l shell.Line) []bool {
	out := make([]bool, len(l.Commands))
	for k := range l.Commands {
		one := shell.Line{Commands: l.Commands[k : k+1], Parsed: l.Parsed}
		out[k] = covers(true, s, d, func() shell.Line { return one }) != shell.Not
	}
	return out
}

func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// covers reports how far scope s of a rule covers dimension d: for an
// allow (narrow) every reading of its value, for a deny (wide) any, where
// a value is also read as a command line (internal/shell), each simple
// command by its leading words (kind words) or its texts (other kinds),
// and as the allow of s reads it (shell.ScopeCovers). Maybe only where the value is a command line (shell.IsLine, or a words
// scope): elsewhere a deny covers or not. line reads d's value, once per
// request.
func covers(deny bool, s decision.Scope, d decision.Dimension, line func() shell.Line) shell.Cover {
	switch {
	case !deny && s.Allows(d), deny && s.Denies(d):
		return shell.Covered
	case !deny:
		return shell.Not
	}
	by := shell.Deny{Words: s.Words(), Each: shell.ScopeCovers(s)}
	if by.Words == nil {
		by.Covers, by.Lead = s.Covers, shell.LeadWords(s.Match)
	}
	c := line().Denied(by)
	if c == shell.Maybe && s.Kind != decision.KindWords && !shell.IsLine(d) {
		return shell.Not
	}
	return c
}

// commandsDenied are, for each command line deny r has a scope on, the
// commands it reaches.
func (r Rule) commandsDenied(req *decision.Request, lines *readings) []match.Part {
	var out []match.Part
	for _, d := range r.Dimensions {
		i := slices.IndexFunc(req.Dimensions, func(rd decision.Dimension) bool { return rd.Name == d.Name })
		if i >= 0 && req.Dimensions[i].IsShell() {
			s := decision.Scope{Match: d.Match, Kind: d.Kind}
			out = append(out, match.Part{Dim: d.Name, Covered: commandsDenied(s, req.Dimensions[i], lines.of(i)())})
		}
	}
	return out
}

// Expired reports whether r's lifetime ended by now.
func (r Rule) Expired(now time.Time) bool { return r.Expires != 0 && now.Unix() >= r.Expires }

// Remember is Store.Remember in tx.
func (tx *Tx) Remember(r Rule) (_ Rule, err error) {
	defer guard(&err)
	b := tx.bucket(rulesBucket)
	id, err := b.NextSequence()
	if err != nil {
		return r, err
	}
	r.ID = id
	v, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	idx := tx.bucket(ruleIndexBucket)
	if err := cmpErr(tx.put(b, ruleKey(id), v), tx.put(idx, ruleIndexSequenceKey, ruleKey(id))); err != nil {
		return r, err
	}
	return r, tx.put(idx, r.entry(), nil)
}

// Match is a rule that decides a request, or, Maybe, a deny that cannot
// be shown not to cover it (shell.Maybe): that one asks instead.
// Commands say which simple commands of a command line it speaks of when
// not all (policy.Opinion.Commands): an allow's one Part, the commands it
// covers, the others being another's to allow; a deny's, the commands it
// reaches.
type Match struct {
	Rule
	Maybe    bool
	Commands []match.Part
}

// Covering returns the rules that decide req at now, oldest first,
// reading only the candidates the rule index gives; in a read-write
// transaction it prunes the expired ones among them.
func (tx *Tx) Covering(req *decision.Request, now time.Time) (_ []Match, err error) {
	defer guard(&err)
	lines := &readings{req: req}
	keys, err := tx.candidates(req, lines)
	if err != nil {
		return nil, err
	}
	rules, err := tx.read(keys, now)
	if err != nil {
		return nil, err
	}
	return matching(rules, req, now, lines), nil
}

// Matching are the Matches of those of rules, held outside the store
// (a team's), that decide req at now: the same judgement as Covering's.
func Matching(rules []Rule, req *decision.Request, now time.Time) []Match {
	return matching(rules, req, now, &readings{req: req})
}

// matching are the Matches of those of rules that decide req at now.
func matching(rules []Rule, req *decision.Request, now time.Time, lines *readings) []Match {
	var out []Match
	for _, r := range rules {
		c, part := r.covers(req, now, lines)
		if c == shell.Not {
			continue
		}
		m := Match{Rule: r, Maybe: c == shell.Maybe}
		switch {
		case part != nil:
			m.Commands = []match.Part{*part}
		case r.Decision == decision.Deny:
			m.Commands = r.commandsDenied(req, lines)
		}
		out = append(out, m)
	}
	return out
}

// Rules returns every rule in force at now, oldest first. Expired rules
// are removed, in a write only when there are some: a look-up costs no
// write to disk.
func (s *Store) Rules(now time.Time) (rules []Rule, err error) {
	err = s.Do(func(tx *Tx) (err error) {
		rules, err = tx.Rules(now)
		return err
	})
	return rules, err
}

// Rules is Store.Rules in tx; a read-only tx leaves expired rules be.
func (tx *Tx) Rules(now time.Time) (rules []Rule, err error) {
	defer guard(&err)
	b := tx.bucket(rulesBucket)
	expired, err := keysWhere(b, func(k, v []byte) (bool, error) {
		r, err := decodeRule(k, v)
		if err != nil || r.Expired(now) {
			return err == nil, err
		}
		rules = append(rules, r)
		return false, nil
	})
	if err != nil {
		return rules, err
	}
	return rules, tx.prune(expired)
}

// read decodes the rules of keys in force at now; in a read-write tx it
// prunes the expired ones.
func (tx *Tx) read(keys [][]byte, now time.Time) ([]Rule, error) {
	b := tx.bucket(rulesBucket)
	var rules []Rule
	var expired [][]byte
	for _, k := range keys {
		v := b.Get(k)
		if v == nil {
			continue
		}
		r, err := decodeRule(k, v)
		switch {
		case err != nil:
			return nil, err
		case r.Expired(now):
			expired = append(expired, slices.Clone(k))
		default:
			rules = append(rules, r)
		}
	}
	return rules, tx.prune(expired)
}

// decodeRule is the rule stored under k as v.
func decodeRule(k, v []byte) (Rule, error) {
	var r Rule
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("%w: rule %x: %v", ErrCorrupt, k, err)
	}
	if r.Origin == "" {
		r.Origin = OriginUnknown
	}
	return r, nil
}

// prune removes the rules of keys and their index entries, in a
// read-write tx only.
func (tx *Tx) prune(keys [][]byte) error {
	if !tx.tx.Writable() || len(keys) == 0 {
		return nil
	}
	tx.dirty = true
	return removeRules(tx.tx, keys)
}

// removeRules removes the rules of keys and their index entries.
func removeRules(btx *bolt.Tx, keys [][]byte) error {
	b, idx := btx.Bucket(rulesBucket), btx.Bucket(ruleIndexBucket)
	for _, k := range keys {
		if v := b.Get(k); v != nil {
			if err := unindexRule(idx, k, v); err != nil {
				return err
			}
		}
	}
	return deleteKeys(b, keys)
}

// Forget removes the rule with id; false when there is none.
func (s *Store) Forget(id uint64) (bool, error) {
	found := false
	err := s.update(func(tx *bolt.Tx) error {
		found = tx.Bucket(rulesBucket).Get(ruleKey(id)) != nil
		return removeRules(tx, [][]byte{ruleKey(id)})
	})
	return found && err == nil, err
}

// ForgetAll removes every rule and returns how many there were.
func (s *Store) ForgetAll() (int, error) {
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		// Key by key, so that IDs are never given again.
		keys, err := keysWhere(tx.Bucket(rulesBucket), func(_, _ []byte) (bool, error) { return true, nil })
		n = len(keys)
		return cmpErr(err, removeRules(tx, keys))
	})
	return n, err
}

// ruleKey orders rules by ID.
func ruleKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// EachRule gives fn each rule in force at now, oldest first, as it reads
// them, one decoded at a time: a listing's memory does not grow with the
// rules. Then it removes the expired ones it passed over.
func (s *Store) EachRule(now time.Time, fn func(Rule) error) error {
	var expired [][]byte
	err := s.View(func(tx *Tx) (err error) {
		defer guard(&err)
		return tx.bucket(rulesBucket).ForEach(func(k, v []byte) error {
			r, err := decodeRule(k, v)
			switch {
			case err != nil:
				return err
			case r.Expired(now):
				expired = append(expired, slices.Clone(k))
				return nil
			}
			return fn(r)
		})
	})
	if err != nil || len(expired) == 0 {
		return err
	}
	return s.update(func(btx *bolt.Tx) error { return removeRules(btx, expired) })
}

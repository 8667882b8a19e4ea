package team

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/state"
)

// A host decides by the team rules of a cache file in its state
// directory, so that a decision never waits on the network while the
// cache is fresh, and the rules keep deciding offline. The cache holds
// the rules as the bucket gave them, signatures and all: each is checked
// when it is used (Verify), so a cache written by anyone decides nothing
// that a trusted approver did not sign, and removing an approver from
// [team] approvers revokes its rules at once, cached or not.
const (
	// RulesCacheName is the cache's file name in the state directory.
	RulesCacheName = "team-rules.json"
	// RulesFresh is how long a cache decides without asking the server
	// again: a rule written or forgotten reaches a host at most this late.
	RulesFresh = 10 * time.Second
	// RulesFetchBound bounds a refresh at the start of a request: a
	// server that does not answer by then leaves the cache as it is.
	RulesFetchBound = 500 * time.Millisecond
	// RulesAllowBound is how long after the last successful fetch a
	// cached allow rule still decides: a rule forgotten on the server
	// while a host cannot reach it would otherwise allow there for ever.
	// Deny rules keep deciding (deny wide).
	RulesAllowBound = time.Hour
	// maxRulesCache caps the cache file.
	maxRulesCache = 64 << 20
)

// RuleEntry is a team rule as the bucket holds it: its key and value;
// in the cache, with the rule the value derives (ReadRule).
type RuleEntry struct {
	Key   string         `json:"key"`
	Value jsontext.Value `json:"value"`
	// Rule is the rule ReadRule derived from Value when the cache was
	// saved (SaveRules), nil when it derived none: it only finds the rules
	// that may match a request, as deriving every rule at every request
	// would cost a parse of its request and decision. A rule that matches
	// is derived again, and must be this one, before it decides.
	Rule *state.Rule `json:"rule,omitempty"`
}

// derived is rules, each with the rule its value derives, whatever
// Rule they came with: askperm-team is not trusted with them.
func derived(rules []RuleEntry) []RuleEntry {
	out := make([]RuleEntry, len(rules))
	for i, e := range rules {
		out[i] = RuleEntry{Key: e.Key, Value: e.Value}
		if u, err := ReadRule(e.Key, e.Value); err == nil {
			out[i].Rule = &u.Rule
		}
	}
	return out
}

// RulesCache is the cache file: the rules of the team at URL with Prefix
// as fetched at Fetched (Unix milliseconds).
type RulesCache struct {
	URL     string `json:"url"`
	Prefix  string `json:"prefix"`
	Fetched int64  `json:"fetched"`
	// Stale says an approver has remembered a rule since (MarkStale): the
	// next request fetches again, however fresh the cache.
	Stale bool `json:"stale,omitempty"`
	// Tried is when a fetch last failed (Unix milliseconds): no request
	// tries again for RulesFresh, so that a server that does not answer
	// costs one request RulesFetchBound, not every one.
	Tried int64       `json:"tried,omitempty"`
	Rules []RuleEntry `json:"rules"`
}

// FetchedAt is when the cache was fetched.
func (rc RulesCache) FetchedAt() time.Time { return time.UnixMilli(rc.Fetched) }

// RefreshRules fetches the team's rules from the server of c, within
// ctx (askperm-team's hidden rules-fetch), writes them to the cache in dir and returns the cache.
func RefreshRules(ctx context.Context, c Config, dir string, now time.Time) (RulesCache, error) {
	in, err := json.Marshal(c)
	if err != nil {
		return RulesCache{}, err
	}
	out, err := runTeam(ctx, c, "rules-fetch", in, maxRulesCache)
	if err != nil {
		return RulesCache{}, err
	}
	// askperm-team is not trusted with the rules: each is verified when
	// it is used.
	var rules []RuleEntry
	if err := json.Unmarshal(out, &rules); err != nil {
		return RulesCache{}, fmt.Errorf("%s rules-fetch: %w", ProgramName, err)
	}
	return SaveRules(c, dir, rules, now)
}

// SaveRules writes rules, fetched from the server of c at now, each
// with the rule it derives, to the cache in dir and returns the cache.
func SaveRules(c Config, dir string, rules []RuleEntry, now time.Time) (RulesCache, error) {
	rc := RulesCache{URL: c.URL, Prefix: c.Prefix, Fetched: now.UnixMilli(), Rules: derived(rules)}
	b, err := json.Marshal(rc)
	if err != nil {
		return RulesCache{}, err
	}
	return rc, state.ReplaceOwned(dir, RulesCacheName, b)
}

// LoadRules reads the cache in dir. A cache of another team (URL or
// prefix), or none, is an empty cache fetched never.
func LoadRules(c Config, dir string) (RulesCache, error) {
	b, err := state.ReadOwned(dir, RulesCacheName, maxRulesCache)
	if errors.Is(err, fs.ErrNotExist) {
		return RulesCache{}, nil
	}
	if err != nil {
		return RulesCache{}, err
	}
	var rc RulesCache
	if err := json.Unmarshal(b, &rc); err != nil {
		return RulesCache{}, fmt.Errorf("%s: %w", RulesCacheName, err)
	}
	if rc.URL != c.URL || rc.Prefix != c.Prefix {
		return RulesCache{}, nil
	}
	return rc, nil
}

// due says whether a request at now fetches the rules again: the cache
// is older than RulesFresh (or from the future, or marked stale), and no
// fetch failed in the last RulesFresh.
func (rc RulesCache) due(now time.Time) bool {
	recent := func(ms int64) bool {
		at := time.UnixMilli(ms)
		return !now.Before(at) && now.Sub(at) < RulesFresh
	}
	return !recent(rc.Tried) && (rc.Stale || !recent(rc.Fetched))
}

// MarkStale marks the cache in dir stale, so that the next request
// fetches the rules again: a team answer to remember always was just
// taken, and its rule is to decide the next request alike. No cache, no
// mark.
func MarkStale(c Config, dir string) error {
	rc, err := LoadRules(c, dir)
	if err != nil || rc.Fetched == 0 || rc.Stale {
		return err
	}
	rc.Stale = true
	b, err := json.Marshal(rc)
	if err != nil {
		return err
	}
	return state.ReplaceOwned(dir, RulesCacheName, b)
}

// Memory is a host's team memory: the team rules of c, cached in the
// state directory Dir.
type Memory struct {
	Config Config
	Dir    string
	// Warn reports a diagnostic (one line, no prefix).
	Warn func(string)
}

// Match is a verified team rule that decides a request: local memory's
// Match (state.Matching), with the rule's id and approver.
type Match struct {
	state.Match
	ID, Approver string
}

// Name is how the audit log and diagnostics name the rule.
func (m Match) Name() string { return "team rule " + m.ID + " by " + m.Approver }

// allows says whether the cache's allow rules may decide at now: it was
// fetched at most RulesAllowBound before (and not in the future).
func (rc RulesCache) allows(now time.Time) bool {
	at := rc.FetchedAt()
	return !now.Before(at) && now.Sub(at) <= RulesAllowBound
}

// Matching returns the team rules that decide req at now, each verified
// (Unverified.Verify), by the same matching as local memory's. The cache
// is refreshed first when it is older than RulesFresh, within
// RulesFetchBound; a server that cannot be reached leaves the cache
// deciding, and says so on Warn, its allow rules only for
// RulesAllowBound after the last fetch. When the team's rules cannot be
// known (a cache that cannot be read, or none fetched and a server that
// cannot be reached), known is false: a team deny of req may be unseen,
// so the caller lets no allow stand by itself, as when local memory
// cannot be consulted.
func (m Memory) Matching(req *decision.Request, now time.Time) (out []Match, known bool) {
	rc, err := LoadRules(m.Config, m.Dir)
	if err != nil {
		m.Warn(fmt.Sprintf("team rules: %v; no allow stands by itself", err))
		return nil, false
	}
	if rc.due(now) {
		ctx, cancel := context.WithTimeout(context.Background(), RulesFetchBound)
		fresh, err := RefreshRules(ctx, m.Config, m.Dir, now)
		cancel()
		switch {
		case err == nil:
			rc = fresh
		case rc.Fetched == 0:
			m.Warn(fmt.Sprintf("team rules: %v; none cached, so no allow stands by itself", err))
		default:
			m.Warn(fmt.Sprintf("team rules: %v; deciding by those cached at %s", err, rc.FetchedAt().UTC().Format(time.RFC3339)))
		}
		if err != nil {
			rc.URL, rc.Prefix, rc.Tried = m.Config.URL, m.Config.Prefix, now.UnixMilli()
			if b, err := json.Marshal(rc); err == nil {
				state.ReplaceOwned(m.Dir, RulesCacheName, b) // best effort: at worst the next request tries again
			}
		}
	}
	out = m.match(rc.Rules, req, now)
	if rc.Fetched == 0 {
		return out, false
	}
	if rc.allows(now) {
		return out, true
	}
	kept := out[:0]
	for _, x := range out {
		if x.Decision == decision.Allow {
			m.Warn(fmt.Sprintf("team rules: %s not used: the rules were last fetched at %s, more than %s ago; allow rules decide again after a fetch", x.Name(), rc.FetchedAt().UTC().Format(time.RFC3339), RulesAllowBound))
			continue
		}
		kept = append(kept, x)
	}
	return kept, true
}

// match is Matching of the rules of entries: the rules cached with
// those of trusted approvers are matched as local memory matches, and
// each that would decide is derived again from its value and verified
// (ReadRule, Unverified.Verify), and must be the rule cached; a rule that
// fails is ignored and said.
func (m Memory) match(entries []RuleEntry, req *decision.Request, now time.Time) []Match {
	var found []RuleEntry
	var rules []state.Rule
	for _, e := range entries {
		if k, _, _ := strings.Cut(e.Key, "."); !m.Config.Trusts(k) || e.Rule == nil {
			continue // not a rule of this host's approvers, or none: it decides nothing here
		}
		r := *e.Rule
		r.ID = uint64(len(found)) // its place, to find it again among the matches
		found = append(found, e)
		rules = append(rules, r)
	}
	var out []Match
	for _, sm := range state.Matching(rules, req, now) {
		u, err := verified(found[sm.ID], m.Config, now)
		if err != nil {
			m.Warn(fmt.Sprintf("team rules: %v; ignored", err))
			continue
		}
		out = append(out, Match{Match: sm, ID: u.ID, Approver: u.Approver})
	}
	return out
}

// verified is cached rule e, derived again from its value and verified
// for host c at now, if it is the rule cached.
func verified(e RuleEntry, c Config, now time.Time) (Unverified, error) {
	u, err := ReadRule(e.Key, e.Value)
	if err != nil {
		return Unverified{}, err
	}
	if err := u.Verify(c, now); err != nil {
		return Unverified{}, err
	}
	a, err := json.Marshal(u.Rule)
	if err != nil {
		return Unverified{}, err
	}
	b, err := json.Marshal(e.Rule)
	if err != nil || !bytes.Equal(a, b) {
		return Unverified{}, fmt.Errorf("rule %q: the cache's rule is not the one its value derives", e.Key)
	}
	return u, nil
}

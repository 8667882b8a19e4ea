package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/askperm/askperm/decision"
)

// The rule index files each remembered rule under the literal keys a
// request must have for the rule to cover it, so that a look-up reads
// and decodes only those candidates. An entry's key is
//
//	'r' server tool source action workdir dimension class literal id
//
// each field but the last length-prefixed (so that no key is a prefix of
// another's field; the literal's length fixed-width) and the rule's ID
// last, with no value. Workdir is the
// rule's workdir class: "n" none, "a" all, "s"+path form selected. The
// class says how the literal is met: exact (the value), prefix (a byte
// prefix of it), words (its first word), or unindexed (every request of
// the same head meets it). An allow is filed by its first dimension of
// kind exact, prefix or words; every other rule is unindexed: a deny,
// which errs wide (it reaches commands of a line, paths in their other
// forms), and scopes no literal bounds (glob, any). A rule whose stored
// form cannot be read is filed as corrupt: every look-up then fails, as a
// scan of all rules would.
var ruleIndexBucket = []byte("rules-index")

// ruleIndexVersion is the index layout; a store whose index is of another
// (or has none) is re-indexed when opened.
const ruleIndexVersion = "1"

var ruleIndexVersionKey = []byte("version")

// ruleIndexSequenceKey holds the rules bucket's sequence the index was
// last kept at: a rule remembered by a release that kept no index moved
// it on, and the store is re-indexed when next opened (a deny missing from
// the index would go unseen).
var ruleIndexSequenceKey = []byte("sequence")

const (
	classUnindexed = 'u'
	classExact     = 'e'
	classPrefix    = 'p'
	classWords     = 'w'
	entryPrefix    = 'r'
	corruptPrefix  = 'c'
)

func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// indexHead is the key prefix of the rules of one server, tool, source,
// action and workdir class.
func indexHead(server, tool, source, action, workdir string) []byte {
	b := []byte{entryPrefix}
	for _, f := range []string{server, tool, source, action, workdir} {
		b = appendField(b, f)
	}
	return b
}

// slot is the key prefix of the rules filed under one dimension, class
// and literal within head. The literal's length is fixed-width, so that a
// class's literals sort by length: a look-up of a value's prefixes seeks
// only the lengths filed (prefixes).
func slot(head []byte, dim string, class byte, literal string) []byte {
	return append(lengthSlot(head, dim, class, len(literal)), literal...)
}

func lengthSlot(head []byte, dim string, class byte, n int) []byte {
	b := appendField(slices.Clone(head), dim)
	return binary.BigEndian.AppendUint32(append(b, class), uint32(n))
}

// entry is the index key of r.
func (r Rule) entry() []byte {
	wd := "n"
	switch r.WorkdirScope {
	case "":
	case decision.WorkdirAll:
		wd = "a"
	default:
		wd = "s" + decision.PathForm(r.Workdir)
	}
	head := indexHead(r.Server, r.Tool, r.Source, r.Action, wd)
	dim, class, literal := "", byte(classUnindexed), ""
	if r.Decision == decision.Allow {
		for _, d := range r.Dimensions {
			if c, l, ok := filing(d); ok {
				dim, class, literal = d.Name, c, l
				break
			}
		}
	}
	return append(slot(head, dim, class, literal), ruleKey(r.ID)...)
}

// filing is the class and literal an allow's scope d is filed under:
// one every value it covers (as written, or a simple command's MatchText)
// holds.
func filing(d Dimension) (byte, string, bool) {
	switch d.Kind {
	case decision.KindExact, "":
		return classExact, d.Match, true
	case decision.KindPrefix:
		// An absolute match covers itself without its trailing '/'.
		return classPrefix, strings.TrimSuffix(d.Match, "/"), true
	case decision.KindWords:
		if w := firstWord(d.Match); w != "" {
			return classWords, w, true
		}
	}
	return 0, "", false
}

func firstWord(s string) string {
	if w := (decision.Scope{Kind: decision.KindWords, Match: s}).Words(); len(w) > 0 {
		return w[0]
	}
	return ""
}

// indexKey is the index key of the rule stored under k as v: its entry,
// or a corrupt mark when v cannot be read.
func indexKey(k, v []byte) []byte {
	var r Rule
	if err := json.Unmarshal(v, &r); err != nil {
		return append([]byte{corruptPrefix}, k...)
	}
	return r.entry()
}

// unindexRule removes r's entry (and a corrupt mark of k) from b.
func unindexRule(b *bolt.Bucket, k, v []byte) error {
	var r Rule
	if err := json.Unmarshal(v, &r); err == nil {
		if err := b.Delete(r.entry()); err != nil {
			return err
		}
	}
	return b.Delete(append([]byte{corruptPrefix}, k...))
}

// ensureRuleIndex builds the rule index of a store that has none of this
// version, writing only then.
func (s *Store) ensureRuleIndex() error {
	current := false
	if err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(ruleIndexBucket)
		current = b != nil && string(b.Get(ruleIndexVersionKey)) == ruleIndexVersion &&
			bytes.Equal(b.Get(ruleIndexSequenceKey), ruleKey(tx.Bucket(rulesBucket).Sequence()))
		return nil
	}); err != nil || current {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		if tx.Bucket(ruleIndexBucket) != nil {
			if err := tx.DeleteBucket(ruleIndexBucket); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucket(ruleIndexBucket)
		if err != nil {
			return err
		}
		var keys [][]byte
		if err := tx.Bucket(rulesBucket).ForEach(func(k, v []byte) error {
			keys = append(keys, indexKey(k, v))
			return nil
		}); err != nil {
			return err
		}
		// In key order, a bbolt node grows at its end: a store of many
		// rules is indexed in linear time, in full pages.
		slices.SortFunc(keys, bytes.Compare)
		b.FillPercent = 1
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		if err := b.Put(ruleIndexSequenceKey, ruleKey(tx.Bucket(rulesBucket).Sequence())); err != nil {
			return err
		}
		return b.Put(ruleIndexVersionKey, []byte(ruleIndexVersion))
	})
}

// candidates are the keys, in ID order, of the rules the index says may
// cover req: every rule that can is among them.
func (tx *Tx) candidates(req *decision.Request, lines *readings) ([][]byte, error) {
	c := tx.bucket(ruleIndexBucket).Cursor()
	if k, _ := c.Seek([]byte{corruptPrefix}); k != nil && k[0] == corruptPrefix {
		return nil, fmt.Errorf("%w: rule %x", ErrCorrupt, k[1:])
	}
	wds := []string{"n"}
	if req.Workdir != nil {
		wds = []string{"a", "s" + decision.PathForm(req.Workdir.Value)}
	}
	var ids [][]byte
	scan := func(prefix []byte) {
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) == len(prefix)+8 {
				ids = append(ids, k[len(prefix):])
			}
		}
	}
	for _, wd := range wds {
		head := indexHead(req.Server, req.Tool, req.Source, req.Action, wd)
		scan(slot(head, "", classUnindexed, ""))
		for i, d := range req.Dimensions {
			texts := []string{d.Value}
			if d.IsShell() {
				for _, cmd := range lines.of(i)().Commands {
					if cmd.Static() {
						texts = append(texts, cmd.MatchText())
					}
				}
			}
			scan(slot(head, d.Name, classExact, d.Value))
			for _, t := range texts {
				if w := firstWord(t); w != "" {
					scan(slot(head, d.Name, classWords, w))
				}
				prefixes(c, head, d.Name, t, scan)
			}
		}
	}
	slices.SortFunc(ids, bytes.Compare)
	return slices.CompactFunc(ids, bytes.Equal), nil
}

// prefixes scans, with c, the prefix slots of head's dimension dim for
// each prefix of t whose length some rule is filed under.
func prefixes(c *bolt.Cursor, head []byte, dim, t string, scan func([]byte)) {
	class := lengthSlot(head, dim, classPrefix, 0)
	class = class[:len(class)-4]
	for n := 0; n <= len(t); n++ {
		k, _ := c.Seek(lengthSlot(head, dim, classPrefix, n))
		if k == nil || !bytes.HasPrefix(k, class) || len(k) < len(class)+4 {
			return
		}
		m := int(binary.BigEndian.Uint32(k[len(class):]))
		if m > len(t) {
			return
		}
		scan(slot(head, dim, classPrefix, t[:m]))
		n = m
	}
}

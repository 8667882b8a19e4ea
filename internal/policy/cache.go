package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/askperm/askperm/internal/userfile"
)

// A compiled cache spares a process that loads a big rules file its
// parse: decoding the TOML, compiling every glob and path, checking every
// example. It holds what a full load found, the rules' index and each rule
// as written (its examples left out, being checked already), and is used
// only for the very files it was built from (their paths and contents'
// digests, cacheKey); a process then compiles only the rules the index
// makes candidates of a request. A cache that cannot be read, is unsafe
// (userfile.Read), or does not decode is ignored and rebuilt: it never
// decides anything a full load would not.

// cacheVersion changes whenever cached's form or its meaning does.
const cacheVersion = 1

// cached is a cache file's contents.
type cached struct {
	Version         int
	Key             [sha256.Size]byte
	Rules           []cachedRule
	Verbs           *verbsTOML
	VerbsFile       string
	Annotations     []annotationTOML
	AnnotationsFile string
	Keyed           []cachedKeyed
	Heads           []cachedHead
	Rest            []int32
}

// cachedRule is one rule as written, as JSON, and where: its file and
// its number there (a rule without a name is named by them). rt is the
// rule as decoded, JSON once the cache is written.
type cachedRule struct {
	File string
	N    int
	JSON []byte
	rt   *ruleTOML
}

type cachedKeyed struct {
	Path  string
	First bool
	Rules map[string][]int32
}

type cachedHead struct {
	Dim   string
	Rules map[string][]int32
	All   []int32
}

// cacheKey is the digest of the files loaded, in order: their paths and
// contents. name is the cache's file name, of their paths alone: one
// cache for one list of files, rewritten when any of them changes.
func cacheKey(paths []string, contents [][]byte) (key [sha256.Size]byte, name string) {
	h := sha256.New()
	fmt.Fprintf(h, "askperm rules cache %d\n", cacheVersion)
	for _, p := range paths {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	name = fmt.Sprintf("rules-%x.cache", h.Sum(nil)[:8])
	for _, c := range contents {
		d := sha256.Sum256(c)
		h.Write(d[:])
	}
	return [sha256.Size]byte(h.Sum(nil)), name
}

// readCache is the policy the cache at path holds for key, or nil when
// there is none that can be used.
func readCache(path string, key [sha256.Size]byte) *Policy {
	b, err := userfile.Read(path)
	if err != nil {
		return nil
	}
	var cf cached
	if gob.NewDecoder(bytes.NewReader(b)).Decode(&cf) != nil || cf.Version != cacheVersion || cf.Key != key {
		return nil
	}
	p, err := cf.policy()
	if err != nil {
		return nil
	}
	return p
}

// policy is the policy of cf, its rules compiled on first use.
func (cf *cached) policy() (*Policy, error) {
	c := newCompiler()
	p := &Policy{rules: make([]*Rule, len(cf.Rules)), lazy: &lazyRules{c: c, src: cf.Rules}, index: &index{rest: cf.Rest}}
	if cf.Verbs != nil {
		v, err := compileVerbs(*cf.Verbs)
		if err != nil {
			return nil, err
		}
		p.verbs, p.verbsFile = v, cf.VerbsFile
	}
	for _, at := range cf.Annotations {
		a, err := c.annotation(at)
		if err != nil {
			return nil, err
		}
		p.annotations = append(p.annotations, a)
	}
	p.annotationsFile = cf.AnnotationsFile
	for _, k := range cf.Keyed {
		path, err := c.path(k.Path)
		if err != nil {
			return nil, err
		}
		p.index.keyed = append(p.index.keyed, keyedRules{path: path, first: k.First, rules: k.Rules})
	}
	for _, h := range cf.Heads {
		p.index.heads = append(p.index.heads, headRules{dim: h.Dim, rules: h.Rules, all: h.All})
	}
	n := int32(len(cf.Rules))
	for _, i := range p.index.all() {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("rule %d of %d", i, n)
		}
	}
	return p, nil
}

// all is every rule number the index files, each once or more.
func (ix *index) all() []int32 {
	out := ix.rest
	for _, k := range ix.keyed {
		for _, rs := range k.rules {
			out = append(out, rs...)
		}
	}
	for _, h := range ix.heads {
		out = append(out, h.all...)
		for _, rs := range h.rules {
			out = append(out, rs...)
		}
	}
	return out
}

// writeCache writes the cache of p, loaded from the files of key, to
// path; a failure only costs the next process a full load.
func writeCache(path string, key [sha256.Size]byte, p *Policy) {
	cf := *p.written
	cf.Version, cf.Key, cf.Rest = cacheVersion, key, p.index.rest
	cf.Rules = make([]cachedRule, len(p.written.Rules))
	for i, cr := range p.written.Rules {
		// The examples were checked; a rule compiled from a cache needs
		// none.
		bare := *cr.rt
		bare.Match, bare.NotMatch = nil, nil
		b, err := json.Marshal(&bare)
		if err != nil {
			return
		}
		cf.Rules[i] = cachedRule{File: cr.File, N: cr.N, JSON: b}
	}
	cf.VerbsFile, cf.AnnotationsFile = p.verbsFile, p.annotationsFile
	for _, k := range p.index.keyed {
		cf.Keyed = append(cf.Keyed, cachedKeyed{Path: k.path.src, First: k.first, Rules: k.rules})
	}
	for _, h := range p.index.heads {
		cf.Heads = append(cf.Heads, cachedHead{Dim: h.dim, Rules: h.rules, All: h.all})
	}
	var b bytes.Buffer
	dir := filepath.Dir(path)
	if gob.NewEncoder(&b).Encode(&cf) != nil || os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".rules-*.tmp")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err != nil || cerr != nil {
		return
	}
	_ = os.Rename(tmp.Name(), path)
}

// lazyRules compiles a cached policy's rules when first used; the rules
// were checked when the cache was built.
type lazyRules struct {
	mu  sync.Mutex
	c   *compiler
	src []cachedRule
}

// rule is rule i of p, compiled.
func (p *Policy) rule(i int) *Rule {
	if p.lazy == nil {
		return p.rules[i]
	}
	p.lazy.mu.Lock()
	defer p.lazy.mu.Unlock()
	if p.rules[i] == nil {
		p.rules[i] = p.lazy.compile(p.lazy.src[i])
	}
	return p.rules[i]
}

// compile compiles a cached rule. It compiled when the cache was built;
// should it not now, it denies every request, so that a cache can only
// ever decide more narrowly than its files.
func (l *lazyRules) compile(cr cachedRule) *Rule {
	var rt ruleTOML
	d := json.NewDecoder(bytes.NewReader(cr.JSON))
	d.UseNumber()
	err := d.Decode(&rt)
	var r *Rule
	if err == nil {
		r, _, err = l.c.rule(cr.File, cr.N, &rt)
	}
	if err != nil {
		// A matcher of nothing matches every request.
		return &Rule{Name: fmt.Sprintf("%s#%d", cr.File, cr.N), Verdict: Deny, Message: "the compiled rules cache is unusable: " + err.Error(), file: cr.File}
	}
	return r
}

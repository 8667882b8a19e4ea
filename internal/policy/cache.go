package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
const cacheVersion = 5

// cached is a cache file's contents.
type cached struct {
	Version         int
	Key             [sha256.Size]byte
	Rules           cachedRules
	Verbs           []byte // JSON, nil: none
	VerbsFile       string
	Annotations     []annotationTOML
	AnnotationsFile string
	Keyed           []cachedKeyed
	Heads           []cachedHead
	Rest            []int32
}

// cachedRules are the rules as written, as JSON, one after another in
// Blob (rule i ending at Ends[i]), and where: the files in load order,
// each with the number of its first rule (a rule without a name is named
// by its file and its number there). A few long slices decode fast.
type cachedRules struct {
	Files  []string
	Firsts []int32
	Blob   []byte
	Ends   []uint32
}

// n is how many rules there are.
func (cr *cachedRules) n() int { return len(cr.Ends) }

// at is rule i's JSON, file and number in its file.
func (cr *cachedRules) at(i int) ([]byte, string, int) {
	start := uint32(0)
	if i > 0 {
		start = cr.Ends[i-1]
	}
	f := len(cr.Firsts) - 1
	for cr.Firsts[f] > int32(i) {
		f--
	}
	return cr.Blob[start:cr.Ends[i]], cr.Files[f], i - int(cr.Firsts[f]) + 1
}

// valid reports whether every rule lies in Blob and in a file.
func (cr *cachedRules) valid() bool {
	if len(cr.Files) != len(cr.Firsts) || len(cr.Files) == 0 || cr.Firsts[0] != 0 {
		return false
	}
	for i := 1; i < len(cr.Firsts); i++ {
		if cr.Firsts[i] < cr.Firsts[i-1] {
			return false
		}
	}
	prev := uint32(0)
	for _, e := range cr.Ends {
		if e < prev || e > uint32(len(cr.Blob)) {
			return false
		}
		prev = e
	}
	return true
}

// written is what a cache of a policy holds of its files as decoded.
type written struct {
	rules       []writtenRule
	verbs       *verbsTOML
	annotations []annotationTOML
}

// writtenRule is one rule as decoded, for a cache.
type writtenRule struct {
	file string
	n    int
	rt   *ruleTOML
}

type cachedKeyed struct {
	Path  string
	First bool
	Rules filed
}

type cachedHead struct {
	Dim   string
	Rules filed
	All   []int32
}

// filed is an index's map of strings to rule numbers as a few long
// slices, which decode fast: key i is Keys[KeyEnds[i-1]:KeyEnds[i]], its
// rules Nos[NoEnds[i-1]:NoEnds[i]].
type filed struct {
	Keys    string
	KeyEnds []uint32
	Nos     []int32
	NoEnds  []uint32
}

func fileMap(m map[string][]int32) filed {
	var f filed
	var keys strings.Builder
	for k, nos := range m {
		keys.WriteString(k)
		f.KeyEnds = append(f.KeyEnds, uint32(keys.Len()))
		f.Nos = append(f.Nos, nos...)
		f.NoEnds = append(f.NoEnds, uint32(len(f.Nos)))
	}
	f.Keys = keys.String()
	return f
}

// unfile is f as a map, its keys and lists sharing f's memory; false
// when f is not well formed.
func (f filed) unfile() (map[string][]int32, bool) {
	if len(f.KeyEnds) != len(f.NoEnds) {
		return nil, false
	}
	m := make(map[string][]int32, len(f.KeyEnds))
	var k, n uint32
	for i, ke := range f.KeyEnds {
		ne := f.NoEnds[i]
		if ke < k || ke > uint32(len(f.Keys)) || ne < n || ne > uint32(len(f.Nos)) {
			return nil, false
		}
		m[f.Keys[k:ke]] = f.Nos[n:ne:ne]
		k, n = ke, ne
	}
	return m, true
}

// cacheKey is the digest of the files loaded, in order: their paths and
// contents' digests. name is the cache's file name, of their paths alone:
// one cache for one list of files, rewritten when any of them changes.
func cacheKey(paths []string, digests [][sha256.Size]byte) (key [sha256.Size]byte, name string) {
	h := sha256.New()
	fmt.Fprintf(h, "askperm rules cache %d\n", cacheVersion)
	for _, p := range paths {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	name = fmt.Sprintf("rules-%x.cache", h.Sum(nil)[:8])
	for _, d := range digests {
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
	cf, ok := decodeCached(b)
	if !ok || cf.Key != key {
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
	if !cf.Rules.valid() {
		return nil, errors.New("rules out of place")
	}
	if !cf.within() {
		return nil, errors.New("index out of place")
	}
	c := newCompiler()
	p := &Policy{rules: make([]*Rule, cf.Rules.n()), lazy: &lazyRules{c: c, src: &cf.Rules}, index: &index{rest: cf.Rest}}
	if cf.Verbs != nil {
		var vt verbsTOML
		if err := json.Unmarshal(cf.Verbs, &vt); err != nil {
			return nil, err
		}
		v, err := compileVerbs(vt)
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
		rules, ok := k.Rules.unfile()
		if !ok {
			return nil, errors.New("index out of place")
		}
		p.index.keyed = append(p.index.keyed, keyedRules{path: path, first: k.First, rules: rules})
	}
	for _, h := range cf.Heads {
		rules, ok := h.Rules.unfile()
		if !ok {
			return nil, errors.New("index out of place")
		}
		p.index.heads = append(p.index.heads, headRules{dim: h.Dim, rules: rules, all: h.All})
	}
	return p, nil
}

// within reports whether every rule number cf's index files is one of
// its rules. A map's lists share its filed's Nos, so checking those
// checks every list.
func (cf *cached) within() bool {
	n := int32(cf.Rules.n())
	ok := func(nos []int32) bool {
		for _, i := range nos {
			if i < 0 || i >= n {
				return false
			}
		}
		return true
	}
	if !ok(cf.Rest) {
		return false
	}
	for _, k := range cf.Keyed {
		if !ok(k.Rules.Nos) {
			return false
		}
	}
	for _, h := range cf.Heads {
		if !ok(h.Rules.Nos) || !ok(h.All) {
			return false
		}
	}
	return true
}

// writeCache writes the cache of p, loaded from the files of key, to
// path; a failure only costs the next process a full load.
func writeCache(path string, key [sha256.Size]byte, p *Policy) {
	cf := cached{Version: cacheVersion, Key: key, Rest: p.index.rest, Annotations: p.written.annotations,
		VerbsFile: p.verbsFile, AnnotationsFile: p.annotationsFile}
	if p.written.verbs != nil {
		b, err := json.Marshal(p.written.verbs)
		if err != nil {
			return
		}
		cf.Verbs = b
	}
	for i, w := range p.written.rules {
		if i == 0 || w.file != p.written.rules[i-1].file {
			cf.Rules.Files = append(cf.Rules.Files, w.file)
			cf.Rules.Firsts = append(cf.Rules.Firsts, int32(i))
		}
		// The examples were checked; a rule compiled from a cache needs
		// none.
		bare := *w.rt
		bare.Match, bare.NotMatch = nil, nil
		b, err := json.Marshal(&bare)
		if err != nil {
			return
		}
		cf.Rules.Blob = append(cf.Rules.Blob, b...)
		cf.Rules.Ends = append(cf.Rules.Ends, uint32(len(cf.Rules.Blob)))
	}
	for _, k := range p.index.keyed {
		cf.Keyed = append(cf.Keyed, cachedKeyed{Path: k.path.src, First: k.first, Rules: fileMap(k.rules)})
	}
	for _, h := range p.index.heads {
		cf.Heads = append(cf.Heads, cachedHead{Dim: h.dim, Rules: fileMap(h.rules), All: h.all})
	}
	b, err := cf.encode()
	dir := filepath.Dir(path)
	if err != nil || os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".rules-*.tmp")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
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
	src *cachedRules
}

// rule is rule i of p, compiled.
func (p *Policy) rule(i int) *Rule {
	if p.lazy == nil {
		return p.rules[i]
	}
	p.lazy.mu.Lock()
	defer p.lazy.mu.Unlock()
	if p.rules[i] == nil {
		p.rules[i] = p.lazy.compile(p.lazy.src.at(i))
	}
	return p.rules[i]
}

// compile compiles a cached rule. It compiled when the cache was built;
// should it not now, it denies every request, so that a cache can only
// ever decide more narrowly than its files.
func (l *lazyRules) compile(text []byte, file string, n int) *Rule {
	var rt ruleTOML
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	err := d.Decode(&rt)
	var r *Rule
	if err == nil {
		r, _, err = l.c.rule(file, n, &rt)
	}
	if err != nil {
		// A matcher of nothing matches every request.
		return &Rule{Name: fmt.Sprintf("%s#%d", file, n), Verdict: Deny, Message: "the compiled rules cache is unusable: " + err.Error(), file: file}
	}
	return r
}

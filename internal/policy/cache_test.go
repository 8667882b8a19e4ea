package policy

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// genRules is a rules file of n generated rules: globs on tool and a
// command line, predicates of every operation (numbers, nested values,
// regexes), every decision, rules with and without names; sometimes
// [verbs] and [[annotations]].
func genRules(r *rand.Rand, n int) string {
	var b strings.Builder
	words := []string{"git", "rm", "ls", "go", "cat"}
	for i := range n {
		b.WriteString("[[rule]]\n")
		if r.IntN(4) > 0 {
			fmt.Fprintf(&b, "name = \"r%d\"\n", i)
		}
		fmt.Fprintf(&b, "decision = %q\nmessage = \"m%d\"\n", []string{"allow", "prompt", "deny"}[r.IntN(3)], i)
		given := false
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, "tool = %q\n", []string{"shell", "sh*", "Bash", "{shell,Bash}"}[r.IntN(4)])
			given = true
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "dimensions = { command = \"%s *\" }\n", words[r.IntN(len(words))])
			given = true
		}
		for range r.IntN(3) {
			b.WriteString("[[rule.when]]\n")
			given = true
			switch r.IntN(8) {
			case 6:
				b.WriteString("path = \"$.mode\"\nin = []\n")
			case 7:
				b.WriteString("path = \"$.argv\"\nprefix = []\n")
			case 0:
				fmt.Fprintf(&b, "path = \"$.argv\"\nprefix = [%q, [\"-a\", \"-b\"]]\n", words[r.IntN(len(words))])
			case 1:
				fmt.Fprintf(&b, "path = \"$.mode\"\nin = [\"fast\", %d, 1.5]\n", r.IntN(3))
			case 2:
				fmt.Fprintf(&b, "path = \"$.n\"\nequals = %d\n", r.IntN(3))
			case 3:
				b.WriteString("path = \"$.opts\"\nequals = { deep = [1, \"x\", true] }\n")
			case 4:
				fmt.Fprintf(&b, "path = \"$.mode\"\nregex = \"^%s\"\n", []string{"f", "s", "x"}[r.IntN(3)])
			default:
				fmt.Fprintf(&b, "path = \"$.mode\"\nexists = %v\n", r.IntN(2) == 0)
			}
		}
		if !given {
			b.WriteString("match_all = true\n")
		}
	}
	if r.IntN(2) == 0 {
		// A list given empty is not one left out (its default).
		b.WriteString([]string{"[verbs]\nbulk_limit = 3\n", "[verbs]\nauto = []\nrequire = [\"exec\"]\n"}[r.IntN(2)])
	}
	if r.IntN(2) == 0 {
		b.WriteString("[[annotations]]\ntool = \"Bash\"\nmode = \"writes\"\n")
	}
	return b.String()
}

// genRequest is a request the rules of genRules may or may not match.
func genRequest(r *rand.Rand) string {
	words := []string{"git", "rm", "ls", "go", "cat", "-a", "-b", "x"}
	argv := fmt.Sprintf("[%q, %q]", words[r.IntN(len(words))], words[r.IntN(len(words))])
	mode := []string{`"fast"`, `"slow"`, `1`, `1.50`, `2`, `"x"`}[r.IntN(6)]
	args := fmt.Sprintf(`{"argv":%s,"mode":%s,"n":%d,"opts":{"deep":[1.0,"x",true]}}`, argv, mode, r.IntN(3))
	if r.IntN(8) == 0 {
		args = `[1]`
	}
	return fmt.Sprintf(`{"action":%q,"tool":%q,"dimensions":[{"name":"command","value":"%s %s"}],"arguments":%s}`,
		[]string{"exec", "read", "delete", "create"}[r.IntN(4)], []string{"shell", "Bash", "sh", "read_file", "delete_records"}[r.IntN(5)], words[r.IntN(len(words))], words[r.IntN(len(words))], args)
}

// A policy from the compiled cache decides as the files it was built from
// do, opinion for opinion (verdict, name, message, commands), and misses
// the same rules, for generated files and requests.
func TestCacheSameOpinions(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 5))
	for f := range 40 {
		dir := t.TempDir()
		path := filepath.Join(dir, "rules.toml")
		if err := os.WriteFile(path, []byte(genRules(r, 1+r.IntN(60))), 0o600); err != nil {
			t.Fatal(err)
		}
		full, err := Load("", []string{path}, "")
		if err != nil {
			t.Fatalf("file %d: %v", f, err)
		}
		state := filepath.Join(dir, "state")
		if _, err := Load("", []string{path}, state); err != nil {
			t.Fatal(err)
		}
		cached, err := Load("", []string{path}, state)
		if err != nil {
			t.Fatal(err)
		}
		if cached.lazy == nil {
			t.Fatalf("file %d: not loaded from its cache", f)
		}
		for range 100 {
			raw := genRequest(r)
			rq := req(t, raw)
			if got, want := cached.Opinions(rq), full.Opinions(rq); !reflect.DeepEqual(got, want) {
				t.Fatalf("file %d, %s: cached %v, full %v", f, raw, got, want)
			}
			if got, want := cached.Misses(rq), full.Misses(rq); !reflect.DeepEqual(got, want) {
				t.Fatalf("file %d, %s: cached misses %v, full %v", f, raw, got, want)
			}
		}
	}
}

// The cache serves only the very files it was built from: a file
// changed (even to the same size and mtime), one added, a corrupt, forged
// or unsafe cache, each gets a full load, whose errors are the file's.
func TestCacheUsedOnlyForItsFiles(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	verdict := func(p *Policy) string {
		return names(p.Opinions(req(t, `{"action":"exec","tool":"shell"}`)))
	}
	load := func(files ...string) *Policy {
		t.Helper()
		p, err := Load("", files, state)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.toml", "[[rule]]\nname = \"a\"\ntool = \"shell\"\n")
	fi, _ := os.Stat(a)
	load(a)
	if p := load(a); p.lazy == nil || verdict(p) != "a:allow" {
		t.Fatalf("not from the cache, or %q", verdict(p))
	}
	// The same size, the same mtime, another rule.
	write("a.toml", "[[rule]]\nname = \"b\"\ntool = \"shell\"\n")
	if err := os.Chtimes(a, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if p := load(a); p.lazy != nil || verdict(p) != "b:allow" {
		t.Fatalf("a changed file was served from the cache: %q", verdict(p))
	}
	if p := load(a); p.lazy == nil || verdict(p) != "b:allow" {
		t.Fatalf("the cache was not rebuilt, or %q", verdict(p))
	}
	// A file added is another list of files.
	c := write("c.toml", "[[rule]]\nname = \"c\"\ndecision = \"deny\"\ntool = \"shell\"\n")
	if p := load(a, c); p.lazy != nil || verdict(p) != "b:allow c:deny" {
		t.Fatalf("got %q", verdict(p))
	}
	// A bad file is refused whatever the cache holds.
	write("a.toml", "[[rule]]\nname = \"b\"\ntool = \"[\"\n")
	if _, err := Load("", []string{a}, state); err == nil || !strings.Contains(err.Error(), a+": rule \"b\"") {
		t.Fatalf("got %v", err)
	}
	write("a.toml", "[[rule]]\nname = \"b\"\ntool = \"shell\"\n")
	load(a)
	caches, _ := filepath.Glob(filepath.Join(state, "rules-*.cache"))
	if len(caches) != 2 {
		t.Fatalf("caches %v: one for each list of files", caches)
	}
	key, name := cacheKey([]string{a}, [][sha256.Size]byte{sha256.Sum256([]byte("[[rule]]\nname = \"b\"\ntool = \"shell\"\n"))})
	cache := filepath.Join(state, name)
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	remake := func(change func(*cached)) {
		cf, ok := decodeCached(bytes.Clone(good))
		if !ok {
			t.Fatal("the cache does not decode")
		}
		change(cf)
		b, err := cf.encode()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(cache, b, 0o600)
	}
	for what, mangle := range map[string]func(){
		"corrupt":            func() { os.WriteFile(cache, good[:len(good)/2], 0o600) },
		"garbage":            func() { os.WriteFile(cache, []byte("not a cache"), 0o600) },
		"unsafe":             func() { os.WriteFile(cache, good, 0o600); os.Chmod(cache, 0o666) },
		"not a file":         func() { os.Remove(cache); os.Mkdir(cache, 0o700) },
		"rules out of place": func() { remake(func(cf *cached) { cf.Rules.Ends[0] = 1 << 30 }) },
		"index out of place": func() { remake(func(cf *cached) { cf.Rest[0] = 1 }) },
		"forged": func() {
			// A cache of another file under this one's name.
			other := write("o.toml", "[[rule]]\nname = \"o\"\ntool = \"shell\"\n")
			Load("", []string{other}, state)
			_, oname := cacheKey([]string{other}, nil)
			b, _ := os.ReadFile(filepath.Join(state, oname))
			os.WriteFile(cache, b, 0o600)
		},
	} {
		mangle()
		if readCache(cache, key) != nil {
			t.Errorf("%s: the cache was used", what)
		}
		if p := load(a); verdict(p) != "b:allow" {
			t.Errorf("%s: %q", what, verdict(p))
		}
		os.Remove(cache)
		load(a)
		if readCache(cache, key) == nil {
			t.Errorf("%s: the cache was not rebuilt", what)
		}
	}
}

// A cached rule that does not compile now (a cache of another version's
// making) denies every request rather than dropping out.
func TestCacheRuleThatDoesNotCompileDenies(t *testing.T) {
	good, bad := `{"Tool":"x"}`, `{"Tool":"[","Decision":"allow"}`
	src := &cachedRules{Files: []string{"e.toml", "f.toml"}, Firsts: []int32{0, 1}, Blob: []byte(good + bad), Ends: []uint32{uint32(len(good)), uint32(len(good + bad))}}
	if !src.valid() {
		t.Fatal("not valid")
	}
	l := &lazyRules{c: newCompiler(), src: src}
	p := &Policy{rules: make([]*Rule, 2), lazy: l, index: &index{rest: []int32{0, 1}}}
	if got := names(p.Opinions(req(t, `{"action":"exec","tool":"x"}`))); got != "e.toml#1:allow f.toml#1:deny" {
		t.Fatalf("got %q", got)
	}
}

// An index's map survives the cache, and one out of place is refused.
func TestCacheFiledMap(t *testing.T) {
	m := map[string][]int32{"git": {1, 5}, "": {2}, "ls": nil, "rm": {0, 3, 4}}
	got, ok := fileMap(m).unfile()
	if !ok || len(got) != len(m) {
		t.Fatalf("got %v", got)
	}
	for k, v := range m {
		if !slices.Equal(got[k], v) {
			t.Errorf("%q: %v, not %v", k, got[k], v)
		}
	}
	for _, f := range []filed{
		{Keys: "ab", KeyEnds: []uint32{3}, Nos: []int32{1}, NoEnds: []uint32{1}},
		{Keys: "ab", KeyEnds: []uint32{1}, Nos: []int32{1}, NoEnds: []uint32{2}},
		{Keys: "ab", KeyEnds: []uint32{2, 1}, Nos: []int32{1}, NoEnds: []uint32{1, 1}},
		{Keys: "ab", KeyEnds: []uint32{1}, Nos: []int32{1}, NoEnds: nil},
	} {
		if _, ok := f.unfile(); ok {
			t.Errorf("%+v: taken", f)
		}
	}
}

// Files the user does not own (root's) are never decided from a cache in
// the user's state.
func TestCacheOnlyForFilesTheUserOwns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.toml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !ownAll([]string{path}, os.Geteuid()) || ownAll([]string{path}, os.Geteuid()+1) || ownAll([]string{path + "x"}, os.Geteuid()) {
		t.Fatal("ownAll")
	}
}

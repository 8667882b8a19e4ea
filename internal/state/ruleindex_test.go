package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/askperm/askperm/decision"
)

// Pools the generated stores and requests draw from, small so that rules
// and requests meet: command lines plain, with shell syntax, computed or
// opaque commands; paths in several spellings, resolved elsewhere or
// relative; matches of every kind over them.
var (
	genCommands = []string{"rm -rf build", "rm  -rf build", "ls -la", "ls", "git commit -m x", "git status > /tmp/x",
		"cd / && rm -rf ~", "echo $(rm -rf x)", "$CMD -rf x", `eval "$x"`, "ls; rmdir x", "bash -c 'rm -rf x'",
		"'rm' -rf x", `r\m -rf x`, "sudo rm -rf /", "x=rm; $x -rf b", "rm -rf 'x", "git", "", "FOO=1 git push"}
	genPaths = []string{"/p/sub/.env", "/p//sub/.env", "/p/sub/x/../.env", "/p", "/p/", "/pq", "/p/a", "src/a.go",
		"./src/a.go", "src/../../etc", "https://x.y/a", "/home/a/.bashrc", "/", ""}
	genMatches = []string{"rm", "rm -rf", "git", "git commit", "ls -la", "ls", "sudo", "/p/", "/p", "/p/sub", "src/",
		"src", "/", "*rm*", "rm *", "/p/**", "*.env", "", "r?", "git *", "/home/a/.bashrc", "/p/sub/.env",
		"rm -rf build", "ls; rmdir x", "https://x.y/", "cd", "bash"}
	genKinds = []decision.ScopeKind{decision.KindExact, decision.KindPrefix, decision.KindGlob, decision.KindWords,
		decision.KindAny, "", "weird"}
	genDims     = []string{"command", "path"}
	genWorkdirs = []string{"/w", "/w/", "/w/.", "/v"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func genRule(r *rand.Rand, now time.Time) Rule {
	rule := Rule{Decision: pick(r, []string{decision.Allow, decision.Deny}), Server: pick(r, []string{"", "srv"}),
		Tool: pick(r, []string{"Bash", "Read"}), Source: pick(r, []string{"", "src"}), Action: pick(r, []string{"exec", "read"}),
		Dimensions: []Dimension{}, WorkdirScope: pick(r, []string{"", decision.WorkdirAll, decision.WorkdirSelected}),
		Grants: pick(r, [][]string{nil, {"fs.write"}})}
	if rule.WorkdirScope == decision.WorkdirSelected {
		rule.Workdir = pick(r, genWorkdirs)
	}
	for _, name := range genDims[:r.IntN(3)] {
		m := pick(r, genMatches)
		if r.IntN(3) == 0 {
			m = pick(r, append(genCommands, genPaths...))
		}
		rule.Dimensions = append(rule.Dimensions, Dimension{Name: name, Match: m, Kind: pick(r, genKinds)})
	}
	if r.IntN(2) == 0 {
		slices.Reverse(rule.Dimensions)
	}
	switch r.IntN(4) {
	case 0:
		rule.Expires = now.Unix() - 1
	case 1:
		rule.Expires = now.Unix() + 60
	}
	return rule
}

func genRequest(r *rand.Rand) *decision.Request {
	req := &decision.Request{Server: pick(r, []string{"", "srv"}), Tool: pick(r, []string{"Bash", "Read"}),
		Source: pick(r, []string{"", "src"}), Action: pick(r, []string{"exec", "read"})}
	if r.IntN(3) > 0 {
		req.Workdir = &decision.Workdir{Value: pick(r, genWorkdirs)}
	}
	if r.IntN(3) == 0 {
		req.Grants = []decision.Grant{{Name: "fs.write"}}
	}
	for _, name := range genDims[:r.IntN(3)] {
		d := decision.Dimension{Name: name}
		if name == "command" && r.IntN(4) > 0 {
			d.Syntax, d.Value = decision.SyntaxShell, pick(r, genCommands)
		} else {
			d.Value = pick(r, append(genPaths, genCommands...))
			if r.IntN(3) == 0 {
				d.Resolved = pick(r, genPaths)
			}
			if r.IntN(4) == 0 {
				d.Anchored = pick(r, genPaths)
			}
		}
		req.Dimensions = append(req.Dimensions, d)
	}
	return req
}

// requestNear is a request a rule may well cover: its head, workdir and
// grants, and each dimension its match, as it is or lengthened.
func requestNear(r *rand.Rand, rule Rule) *decision.Request {
	req := &decision.Request{Server: rule.Server, Tool: rule.Tool, Source: rule.Source, Action: rule.Action}
	switch rule.WorkdirScope {
	case decision.WorkdirAll:
		req.Workdir = &decision.Workdir{Value: pick(r, genWorkdirs)}
	case decision.WorkdirSelected:
		req.Workdir = &decision.Workdir{Value: rule.Workdir}
	}
	for _, g := range rule.Grants {
		req.Grants = append(req.Grants, decision.Grant{Name: g})
	}
	for _, d := range rule.Dimensions {
		v := d.Match + pick(r, []string{"", "", " build", "/a", "x", "; ls", " && $CMD"})
		dim := decision.Dimension{Name: d.Name, Value: v}
		if d.Name == "command" && r.IntN(3) > 0 {
			dim.Syntax = decision.SyntaxShell
		}
		req.Dimensions = append(req.Dimensions, dim)
	}
	return req
}

// scanned is what Covering said before the index: every rule in force
// read and judged.
func scanned(st *Store, req *decision.Request, now time.Time) ([]Match, error) {
	rules, err := st.Rules(now)
	return matching(rules, req, now, &readings{req: req}), err
}

// indexAgrees reports where Covering through the index differs from a
// scan of every rule, on n generated requests.
func indexAgrees(st *Store, r *rand.Rand, now time.Time, n int) error {
	var rules []Rule
	if err := st.View(func(tx *Tx) (err error) { rules, err = tx.Rules(now); return err }); err != nil {
		return err
	}
	for range n {
		req := genRequest(r)
		if len(rules) > 0 && r.IntN(2) == 0 {
			req = requestNear(r, pick(r, rules))
		}
		want := matching(rules, req, now, &readings{req: req})
		var got []Match
		if err := st.View(func(tx *Tx) (err error) { got, err = tx.Covering(req, now); return err }); err != nil {
			return err
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("request %+v: the index gives %+v, a scan %+v", req, got, want)
		}
	}
	return nil
}

// Covering through the index equals a scan of all rules, on generated
// stores and requests, as rules are remembered, forgotten and pruned.
func TestRuleIndexAgreesWithScan(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 22))
		st := open(t, t.TempDir())
		var ids []uint64
		if err := st.Do(func(tx *Tx) error {
			for range 300 {
				rule, err := tx.Remember(genRule(r, now))
				if err != nil {
					return err
				}
				ids = append(ids, rule.ID)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := indexAgrees(st, r, now, 300); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for range 20 {
			if _, err := st.Forget(pick(r, ids)); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Do(func(tx *Tx) error { // read-write look-ups prune the expired candidates
			for range 100 {
				if _, err := tx.Covering(genRequest(r), now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := indexAgrees(st, r, now, 300); err != nil {
			t.Fatalf("seed %d, after forgetting and pruning: %v", seed, err)
		}
	}
}

// A rule missing from the index is seen missing: the property above can
// fail.
func TestRuleIndexBrokenDisagrees(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	st := open(t, t.TempDir())
	rule, err := st.Remember(commandRule(decision.Allow, "rm -rf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.update(func(btx *bolt.Tx) error { return btx.Bucket(ruleIndexBucket).Delete(rule.entry()) }); err != nil {
		t.Fatal(err)
	}
	got, err := st.Covering(commandRequest("rm -rf build"), now)
	want, _ := scanned(st, commandRequest("rm -rf build"), now)
	if err != nil || len(got) != 0 || len(want) != 1 {
		t.Fatalf("with its entry removed the rule is still found (%v, %v), or a scan misses it (%v)", got, err, want)
	}
}

// A store without an index (or of another version) is indexed when
// opened; a rule that cannot be read fails every look-up, as before.
func TestRuleIndexBuiltOnOpen(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	dir := t.TempDir()
	st := open(t, dir)
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		if _, err := st.Remember(genRule(r, now)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.update(func(btx *bolt.Tx) error {
		if err := btx.Bucket(rulesBucket).Put(ruleKey(1_000_000), []byte("{")); err != nil {
			return err
		}
		return btx.DeleteBucket(ruleIndexBucket)
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open(t, dir)
	if _, err := st.Covering(commandRequest("ls"), now); err == nil {
		t.Fatal("a corrupt rule goes unnoticed")
	}
	if err := st.update(func(btx *bolt.Tx) error {
		return removeRules(btx, [][]byte{ruleKey(1_000_000)})
	}); err != nil {
		t.Fatal(err)
	}
	if err := indexAgrees(st, r, now, 300); err != nil {
		t.Fatal(err)
	}
}

// EachRule gives what Rules returns, and prunes the expired rules as it
// does.
func TestEachRuleAgreesWithRules(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	r := rand.New(rand.NewPCG(3, 22))
	st := open(t, t.TempDir())
	if err := st.Do(func(tx *Tx) error {
		for range 200 {
			if _, err := tx.Remember(genRule(r, now)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var each []Rule
	if err := st.EachRule(now, func(r Rule) error { each = append(each, r); return nil }); err != nil {
		t.Fatal(err)
	}
	var kept []Rule // the expired ones too, if any were left
	if err := st.View(func(tx *Tx) (err error) { kept, err = tx.Rules(now.Add(-time.Hour)); return err }); err != nil {
		t.Fatal(err)
	}
	want, err := st.Rules(now)
	if err != nil || len(want) == 0 || !reflect.DeepEqual(each, want) || !reflect.DeepEqual(kept, want) {
		t.Fatalf("EachRule gives %d rules, Rules %d (%v); %d stored after", len(each), len(want), err, len(kept))
	}
	if err := indexAgrees(st, r, now, 100); err != nil {
		t.Fatal(err)
	}
}

// A rule remembered by a release that kept no index is indexed when the
// store is next opened.
func TestRuleIndexCatchesUpWithAnOlderRelease(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	dir := t.TempDir()
	st := open(t, dir)
	if _, err := st.Remember(commandRule(decision.Allow, "ls")); err != nil {
		t.Fatal(err)
	}
	if err := st.update(func(btx *bolt.Tx) error { // as a release without the index remembers
		b := btx.Bucket(rulesBucket)
		id, err := b.NextSequence()
		if err != nil {
			return err
		}
		r := commandRule(decision.Deny, "rm -rf")
		r.ID = id
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return b.Put(ruleKey(id), v)
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open(t, dir)
	got, err := st.Covering(commandRequest("rm -rf /"), now)
	if err != nil || len(got) != 1 || got[0].Decision != decision.Deny {
		t.Fatalf("the deny remembered without the index: %v, %v", got, err)
	}
}

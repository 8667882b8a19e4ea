package decision

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// grantsOf builds a request whose grants are {name, implied...} entries.
func grantsOf(entries ...[]string) *Request {
	r := &Request{Action: "x"}
	for _, e := range entries {
		r.Grants = append(r.Grants, Grant{Name: e[0], Implies: e[1:]})
	}
	return r
}

func TestImplications(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   *Request
		want  [][]string
		with  []string
		total []string
	}{
		{"none", grantsOf([]string{"a"}, []string{"b"}), [][]string{nil, nil}, []string{"b"}, []string{"b"}},
		{"direct", grantsOf([]string{"fs.write"}, []string{"fs.create", "fs.write"}),
			[][]string{nil, {"fs.write"}}, []string{"fs.create"}, []string{"fs.write", "fs.create"}},
		{"a chain, in request order", grantsOf([]string{"c"}, []string{"a", "b"}, []string{"b", "c"}),
			[][]string{nil, {"c", "b"}, {"c"}}, []string{"a"}, []string{"c", "a", "b"}},
		{"a diamond", grantsOf([]string{"a", "b", "c"}, []string{"b", "d"}, []string{"c", "d"}, []string{"d"}),
			[][]string{{"b", "c", "d"}, {"d"}, {"d"}, nil}, []string{"b", "c"}, []string{"b", "c", "d"}},
		{"a cycle: each implies the other, never itself", grantsOf([]string{"a", "b"}, []string{"b", "a"}, []string{"c"}),
			[][]string{{"b"}, {"a"}, nil}, []string{"b"}, []string{"a", "b"}},
		{"a cycle of three", grantsOf([]string{"a", "b"}, []string{"b", "c"}, []string{"c", "a"}),
			[][]string{{"b", "c"}, {"a", "c"}, {"a", "b"}}, []string{"c"}, []string{"a", "b", "c"}},
		{"unknown names are left out", grantsOf([]string{"a", "zz"}, []string{"b"}),
			[][]string{nil, nil}, []string{"a", "zz"}, []string{"a"}},
		{"nothing chosen", grantsOf([]string{"a", "b"}, []string{"b"}), [][]string{{"b"}, nil}, nil, nil},
	} {
		if got := tc.req.Implications(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Implications %q, want %q", tc.name, got, tc.want)
		}
		if got := tc.req.WithImplied(tc.with); !reflect.DeepEqual(got, tc.total) {
			t.Errorf("%s: WithImplied(%q) = %q, want %q", tc.name, tc.with, got, tc.total)
		}
	}
}

// On random graphs, Implications is reachability by one step or more,
// found here by a plain search, without the grant itself.
func TestImplicationsAreReachability(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + rng.IntN(70)
		r := &Request{}
		for i := range n {
			g := Grant{Name: fmt.Sprintf("g%d", i)}
			for j := range n {
				if rng.IntN(n) < 2 {
					g.Implies = append(g.Implies, fmt.Sprintf("g%d", j))
				}
			}
			r.Grants = append(r.Grants, g)
		}
		got := r.Implications()
		for i, g := range r.Grants {
			seen := map[string]bool{}
			queue := slices.Clone(g.Implies)
			for len(queue) > 0 {
				name := queue[0]
				queue = queue[1:]
				if !seen[name] {
					seen[name] = true
					queue = append(queue, r.Grants[slices.IndexFunc(r.Grants, func(o Grant) bool { return o.Name == name })].Implies...)
				}
			}
			var want []string
			for _, o := range r.Grants {
				if seen[o.Name] && o.Name != g.Name {
					want = append(want, o.Name)
				}
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("%s implies %q, want %q (grants %+v)", g.Name, got[i], want, r.Grants)
			}
		}
	}
}

// chain1000 is the largest request's grants in one chain: each implies
// all that follow.
func chain1000() *Request {
	r := &Request{}
	for i := range MaxListEntries {
		g := Grant{Name: fmt.Sprintf("g%d", i)}
		if i+1 < MaxListEntries {
			g.Implies = []string{fmt.Sprintf("g%d", i+1)}
		}
		r.Grants = append(r.Grants, g)
	}
	return r
}

func BenchmarkImplicationsChain1000(b *testing.B) {
	r := chain1000()
	b.ReportAllocs()
	for b.Loop() {
		r.Implications()
	}
}

func BenchmarkWithImpliedChain1000(b *testing.B) {
	r := chain1000()
	b.ReportAllocs()
	for b.Loop() {
		r.WithImplied([]string{"g0"})
	}
}

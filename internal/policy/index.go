package policy

import "slices"

// index narrows the rules a request is checked against. A rule with a
// predicate that can only hold for a few literal strings (equals or in
// of strings on a path; prefix whose first element is a string or
// alternatives of strings) is filed under each of them, by the path and
// whether the string is the value or its array's first element; every
// other rule is checked against every request. A request then meets only
// the rules filed under what its arguments hold, and the rest, in load
// order: the same opinions as checking every rule, since a filed rule
// cannot match a request that holds none of its strings there.
//
// A rule filed nowhere else whose glob on a dimension starts with a plain
// word (match.Matcher.Head: `go test *` on command) is filed under it: on
// a command line, a request meets it only when a command may start with
// that word (match.Cache.Heads), each simple command being judged alone
// (protocol section 10).
type index struct {
	keyed []keyedRules
	heads []headRules
	rest  []int32 // rules filed nowhere, in load order
}

// headRules are the rules filed under the head of their glob on one
// dimension: by the head, and all of them, in load order.
type headRules struct {
	dim   string
	rules map[string][]int32
	all   []int32
}

// keyedRules are the rules filed under one path: by the string the path
// selects, or (first) the string first in the array it selects.
type keyedRules struct {
	path  pathRef
	first bool
	rules map[string][]int32 // in load order
}

// buildIndex files p's rules.
func (p *Policy) buildIndex() {
	ix := &index{}
	for i, r := range p.rules {
		path, first, keys := indexKeys(r)
		if keys == nil {
			ix.fileByHead(r, int32(i))
			continue
		}
		k := slices.IndexFunc(ix.keyed, func(k keyedRules) bool { return k.path.id == path.id && k.first == first })
		if k < 0 {
			k = len(ix.keyed)
			ix.keyed = append(ix.keyed, keyedRules{path: path, first: first, rules: map[string][]int32{}})
		}
		for _, s := range keys {
			ix.keyed[k].rules[s] = append(ix.keyed[k].rules[s], int32(i))
		}
	}
	p.index = ix
}

// fileByHead files rule i under its glob's head, or with the rest.
func (ix *index) fileByHead(r *Rule, i int32) {
	dim, head := r.match.Head()
	if head == "" {
		ix.rest = append(ix.rest, i)
		return
	}
	k := slices.IndexFunc(ix.heads, func(h headRules) bool { return h.dim == dim })
	if k < 0 {
		k = len(ix.heads)
		ix.heads = append(ix.heads, headRules{dim: dim, rules: map[string][]int32{}})
	}
	ix.heads[k].rules[head] = append(ix.heads[k].rules[head], i)
	ix.heads[k].all = append(ix.heads[k].all, i)
}

// headCandidates are the rules filed by head that may match the request
// of args, ascending.
func (ix *index) headCandidates(args *lazyArgs) []int32 {
	var out []int32
	for _, h := range ix.heads {
		heads, all, present := args.Heads(h.dim)
		switch {
		case !present:
		case all || len(heads) > len(h.rules):
			out = append(out, h.all...)
		default:
			for w := range heads {
				out = append(out, h.rules[w]...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// indexKeys are the strings rule r is filed under (nil: none), from its
// first predicate that has them, distinct.
func indexKeys(r *Rule) (pathRef, bool, []string) {
	for _, pr := range r.when {
		var vs []any
		first := false
		switch pr.op {
		case "equals", "in":
			vs = pr.values
		case "prefix":
			if len(pr.values) == 0 {
				continue
			}
			first, vs = true, []any{pr.values[0]}
			if alts, ok := pr.values[0].([]any); ok {
				vs = alts
			}
		default:
			continue
		}
		keys := make([]string, 0, len(vs))
		for _, v := range vs {
			s, ok := v.(string)
			if !ok {
				keys = nil
				break
			}
			if !slices.Contains(keys, s) {
				keys = append(keys, s)
			}
		}
		if keys != nil {
			// in = [] holds for nothing: filed under no string at all.
			return pr.path, first, keys
		}
	}
	return pathRef{}, false, nil
}

// candidates are the numbers of the rules that may match the request of
// args, in load order.
func (ix *index) candidates(args *lazyArgs) []int32 {
	out := ix.rest
	if len(ix.heads) > 0 {
		out = merge(out, ix.headCandidates(args))
	}
	if len(ix.keyed) == 0 {
		return out
	}
	v, ok := args.get()
	if !ok {
		// Arguments that are not JSON fail every predicate: only the
		// rules filed nowhere can match.
		return out
	}
	for _, k := range ix.keyed {
		found := args.selected(k.path, v)
		if len(found) == 0 {
			continue
		}
		x := found[0]
		if k.first {
			arr, ok := x.([]any)
			if !ok || len(arr) == 0 {
				continue
			}
			x = arr[0]
		}
		s, ok := x.(string)
		if !ok {
			continue
		}
		if rules := k.rules[s]; len(rules) > 0 {
			out = merge(out, rules)
		}
	}
	return out
}

// merge merges two ascending lists of distinct rule numbers.
func merge(a, b []int32) []int32 {
	if len(a) == 0 {
		return b
	}
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

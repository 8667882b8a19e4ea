package decision

import "slices"

// Version is the only protocol version askperm speaks.
const Version = 1

// Limits of the protocol (protocol.md section 2).
const (
	MaxDepth       = 64   // nesting depth of the request, the top object counting as 1
	MaxLineBytes   = 4096 // each single-line string
	MaxListEntries = 1000 // dimensions, grants, details, and each scopes list
)

// Request is one permission request, as parsed and validated by Parse.
// Optional strings are empty when absent; fields whose absence means
// something else than their zero value are pointers.
type Request struct {
	ID                *string // echoed in the decision when present, even when empty
	Server            string
	Alias             string
	Tool              string
	Source            string
	Action            string
	ActionDescription string
	Reason            string
	Dimensions        []Dimension
	Workdir           *Workdir
	Grants            []Grant
	Details           []Detail
	// Arguments is the raw JSON of "arguments" exactly as received, nil when
	// the request had none.
	Arguments      []byte
	Annotations    *Annotations
	Persistent     *bool
	SessionID      string
	RunID          string
	PolicyRevision string
	Role           string
	// Timeout is the caller's own deadline in seconds, nil when absent.
	Timeout *float64
	// Meta is the raw JSON object of "_meta" exactly as received, nil when
	// the request had none. askperm ignores it, but it is part of SHA256.
	Meta []byte

	// SHA256 is the lowercase hex SHA-256 of the JCS form of the request as
	// received; it becomes the decision's request_sha256.
	SHA256 string
}

// IsPersistent reports whether always-rules may be offered (default true).
func (r *Request) IsPersistent() bool { return r.Persistent == nil || *r.Persistent }

// GrantNames lists the requested grants' names in request order.
func (r *Request) GrantNames() []string {
	names := make([]string, len(r.Grants))
	for i, g := range r.Grants {
		names[i] = g.Name
	}
	return names
}

// Implications lists, for each grant in request order, the grants it
// implies directly or through others, in request order. A grant never
// implies itself, even on a cycle (a implies b implies a: each implies the
// other). Names that are no grant of the request are left out; Parse
// refuses them.
func (r *Request) Implications() [][]string {
	reach := r.reach()
	out := make([][]string, len(r.Grants))
	for i := range r.Grants {
		out[i] = r.grantsIn(reach[i], i)
	}
	return out
}

// WithImplied lists the grants called names and every grant they imply,
// in request order. Names that are no grant of the request are left out.
func (r *Request) WithImplied(names []string) []string {
	reach := r.reach()
	want := newBitset(len(r.Grants))
	for i, g := range r.Grants {
		if slices.Contains(names, g.Name) {
			want.add(i)
			want.union(reach[i])
		}
	}
	return r.grantsIn(want, -1)
}

// reach is, for each grant, the set of grants it reaches by one implies
// step or more (itself too, on a cycle).
func (r *Request) reach() []bitset {
	n := len(r.Grants)
	index := make(map[string]int, n)
	for i, g := range r.Grants {
		index[g.Name] = i
	}
	reach := make([]bitset, n)
	for i, g := range r.Grants {
		reach[i] = newBitset(n)
		for _, name := range g.Implies {
			if j, ok := index[name]; ok {
				reach[i].add(j)
			}
		}
	}
	// Warshall's closure: whoever reaches k reaches what k reaches. Bit
	// sets keep 1000 grants to some 16 million word operations.
	for k := range n {
		for i := range n {
			if reach[i].has(k) {
				reach[i].union(reach[k])
			}
		}
	}
	return reach
}

// grantsIn names the grants in set, in request order, but the one at skip.
func (r *Request) grantsIn(set bitset, skip int) []string {
	var out []string
	for j, g := range r.Grants {
		if j != skip && set.has(j) {
			out = append(out, g.Name)
		}
	}
	return out
}

// bitset is a set of small non-negative integers.
type bitset []uint64

// newBitset is an empty set for 0 to n-1.
func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) add(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) union(o bitset) {
	for w := range b {
		b[w] |= o[w]
	}
}

// Dimension is one thing the request is about (a path, a URL, a command)
// with the scopes a persistent rule may take for it.
type Dimension struct {
	Name    string
	Label   string
	Value   string
	Scopes  []Scope
	Default int // index into Scopes of the preselected scope
	// Syntax says what Value is written in: SyntaxShell for a command
	// line (protocol section 10), "" for anything else. A command line is
	// never read as a path.
	Syntax Syntax
	// Shell is the dialect of a SyntaxShell value: DialectBash (the
	// default, also when ""), DialectSh, DialectZsh or DialectFish.
	Shell Dialect
	// Resolved is not part of the request: the caller that may touch the
	// disk sets it to Value's path with symlinks resolved, when Value is
	// an absolute path that resolves elsewhere, and always for a relative
	// path resolved from an absolute workdir (relative while below it);
	// "" otherwise, and never for a command line. Scopes judge every form
	// (Scope.Allows, Scope.Denies).
	Resolved string
	// Anchored is not part of the request either: for a relative path
	// resolved from an absolute workdir, the absolute path it resolves
	// to. Only a deny reads it, so that a deny written with an absolute
	// path covers the same file named relatively.
	Anchored string
}

// Syntax is what a dimension's value is written in.
type Syntax string

// SyntaxShell marks a command line.
const SyntaxShell Syntax = "shell"

// Dialect is the shell a command line is written for.
type Dialect string

// The dialects of a command line (protocol section 10).
const (
	DialectBash Dialect = "bash"
	DialectSh   Dialect = "sh"
	DialectZsh  Dialect = "zsh"
	DialectFish Dialect = "fish"
)

// IsShell reports whether d's value is a command line.
func (d *Dimension) IsShell() bool { return d.Syntax == SyntaxShell }

// Scope is one way a persistent rule may cover later values of a dimension.
type Scope struct {
	Label string
	Match string
	Kind  ScopeKind
}

// ScopeKind says how a scope's Match covers later values.
type ScopeKind string

// The scope kinds of protocol.md section 2.
const (
	KindExact  ScopeKind = "exact"
	KindPrefix ScopeKind = "prefix"
	KindGlob   ScopeKind = "glob"
	KindWords  ScopeKind = "words"
	KindAny    ScopeKind = "any"
)

// Workdir is the selected working directory of the request.
type Workdir struct {
	Value string
	Label string
}

// Grant is one sandbox grant the operation needs.
type Grant struct {
	Name        string
	Description string
	Implies     []string
}

// Detail is a display-only long text (command stdin, file content, diff).
type Detail struct {
	Label string
	Text  string
}

// Annotations are the MCP tool annotations askperm knows; nil hints were
// absent.
type Annotations struct {
	Title           string
	ReadOnlyHint    *bool
	DestructiveHint *bool
	IdempotentHint  *bool
	OpenWorldHint   *bool
}

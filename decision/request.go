package decision

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

// Dimension is one thing the request is about (a path, a URL, a command)
// with the scopes a persistent rule may take for it.
type Dimension struct {
	Name    string
	Label   string
	Value   string
	Scopes  []Scope
	Default int // index into Scopes of the preselected scope
}

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

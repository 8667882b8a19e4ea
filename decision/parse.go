package decision

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is a rejected request or decision. Field is a path such as
// `dimensions[2].scopes[0].kind`, empty for the document as a whole.
type Error struct {
	Doc     string // what was rejected: "request" or "decision"
	Field   string
	Problem string
}

func (e *Error) Error() string {
	msg := e.Problem
	if e.Field != "" {
		msg = fmt.Sprintf("field %q: %s", e.Field, e.Problem)
	}
	if e.Doc == "" { // a value on its own (Canonical)
		return msg
	}
	return e.Doc + ": " + msg
}

func fail(field, format string, args ...any) *Error {
	return &Error{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// errorIn names the document an *Error rejects. The reading and mapping
// code is shared by requests and decisions, so it cannot know.
func errorIn(doc string, err error) error {
	if e, ok := errors.AsType[*Error](err); ok {
		e.Doc = doc
	}
	return err
}

// maxSafeInteger is I-JSON's largest exactly representable integer, 2^53−1.
const maxSafeInteger = 1<<53 - 1

// Parse checks and decodes one request. b must be the whole request; the
// caller enforces the byte cap. Go's encoding/json would accept duplicate
// names, case-folded names, invalid UTF-8 and trailing data (see the
// security notes), so the request is first read token by token into a tree
// that enforces the syntax rules, then mapped field by field with exact
// types. Nothing is decoded into the Request until every check passed.
func Parse(b []byte) (*Request, error) {
	req, err := parseRequest(b)
	if err != nil {
		return nil, errorIn("request", err)
	}
	return req, nil
}

func parseRequest(b []byte) (*Request, error) {
	root, err := readObject(b)
	if err != nil {
		return nil, err
	}
	req, err := mapRequest(root)
	if err != nil {
		return nil, err
	}
	// The digest is that of RequestSHA256, written from the tree already read.
	req.SHA256 = treeSHA256(root, false)
	return req, nil
}

// readObject reads b, which must be UTF-8 without a byte order mark, as
// exactly one JSON object.
func readObject(b []byte) (*node, error) {
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return nil, fail("", "starts with a byte order mark")
	}
	root, err := readTree(b, true)
	if err != nil {
		// jsontext rejects invalid UTF-8 too, but this says where it is.
		if !utf8.Valid(b) {
			return nil, fail("", "invalid UTF-8 at byte %d", invalidAt(b))
		}
		return nil, err
	}
	if root.kind != '{' {
		return nil, fail("", "expected a JSON object, got %s", root.kindName())
	}
	return root, nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// node is one JSON value of the tree.
type node struct {
	kind    jsontext.Kind // '{', '[', '"', '0', 't', 'f', 'n'
	num     float64       // a number's value
	members []member      // objects, in input order
	elems   []*node       // arrays
	raw     []byte        // the value's bytes as received
}

// str is a string's value, decoded from its token on each call: most
// strings of a large request (arguments, _meta) are never needed decoded.
func (n *node) str() string { return unquote(n.raw) }

type member struct {
	nameRaw []byte // the name's token as received
	val     *node
}

// name is the member's name, decoded from its token on each call.
func (m member) name() string { return unquote(m.nameRaw) }

func (n *node) kindName() string {
	switch n.kind {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	default:
		return "null"
	}
}

// readTree reads b as exactly one JSON value followed only by whitespace.
// jsontext rejects duplicate names (after unescaping), invalid UTF-8, lone
// surrogates and everything RFC 8259 does not allow. Numbers must be finite
// doubles (RFC 8785 has no form for others). A request (strict) must also
// keep to the depth limit, have no NUL and I-JSON integers.
func readTree(b []byte, strict bool) (*node, error) {
	// A bytes.Buffer is parsed in place; any other reader is copied.
	r := &treeReader{dec: jsontext.NewDecoder(bytes.NewBuffer(b)), b: b, strict: strict}
	root, err := r.value()
	if err != nil {
		return nil, err
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return nil, fail("", "trailing data after the JSON value")
	}
	return root, nil
}

// treeReader reads a tree from dec, which reads b.
type treeReader struct {
	dec    *jsontext.Decoder
	b      []byte
	strict bool
	// path is where the value being read is, for errors: a member name,
	// or an element's index when index >= 0.
	path []step
	// nodes are allocated from slab, a block at a time; the members and
	// elements of the objects and arrays being read wait in the stacks
	// and are copied out once counted.
	slab    []node
	members []member
	elems   []*node
}

func (r *treeReader) newNode(kind jsontext.Kind) *node {
	if len(r.slab) == cap(r.slab) {
		// Blocks grow with the tree: a small request has a few nodes.
		r.slab = make([]node, 0, min(max(2*cap(r.slab), 8), 256))
	}
	r.slab = append(r.slab, node{kind: kind})
	return &r.slab[len(r.slab)-1]
}

type step struct {
	nameRaw []byte
	index   int
}

// where is the path of the value being read, as Error.Field has it.
func (r *treeReader) where() string {
	var s strings.Builder
	for _, p := range r.path {
		if p.index >= 0 {
			fmt.Fprintf(&s, "[%d]", p.index)
			continue
		}
		if s.Len() > 0 {
			s.WriteByte('.')
		}
		s.WriteString(unquote(p.nameRaw))
	}
	return s.String()
}

func (r *treeReader) value() (*node, error) {
	dec := r.dec
	start := dec.InputOffset()
	var tok jsontext.Token
	var err error
	n := r.newNode(dec.PeekKind())
	if n.kind == '"' || n.kind == '0' {
		if n.raw, err = r.token(); err != nil {
			return nil, err
		}
	} else {
		if tok, err = dec.ReadToken(); err != nil {
			return nil, syntaxError(err, r.where())
		}
		n.kind = tok.Kind()
	}
	if r.strict && dec.StackDepth() > MaxDepth {
		return nil, fail(r.where(), "nested deeper than %d levels", MaxDepth)
	}
	switch n.kind {
	case '"':
		if r.strict && hasNUL(n.raw) {
			return nil, fail(r.where(), "contains NUL (U+0000)")
		}
		return n, nil
	case '0':
		if n.num, err = checkNumber(string(n.raw), r.strict); err != nil {
			return nil, fail(r.where(), "%v", err)
		}
		return n, nil
	case '{':
		mark := len(r.members)
		for dec.PeekKind() != '}' {
			nameRaw, err := r.token()
			if err != nil {
				return nil, err
			}
			if r.strict && hasNUL(nameRaw) {
				return nil, fail(r.where(), "a member name contains NUL (U+0000)")
			}
			r.path = append(r.path, step{nameRaw, -1})
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			r.path = r.path[:len(r.path)-1]
			r.members = append(r.members, member{nameRaw, v})
		}
		n.members = slices.Clone(r.members[mark:])
		clear(r.members[mark:])
		r.members = r.members[:mark]
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(err, r.where())
		}
	case '[':
		mark := len(r.elems)
		for i := 0; dec.PeekKind() != ']'; i++ {
			r.path = append(r.path, step{index: i})
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			r.path = r.path[:len(r.path)-1]
			r.elems = append(r.elems, v)
		}
		n.elems = slices.Clone(r.elems[mark:])
		clear(r.elems[mark:])
		r.elems = r.elems[:mark]
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(err, r.where())
		}
	}
	// InputOffset before a value points before the separator and
	// whitespace that precede it.
	for strings.IndexByte(" \t\r\n:,", r.b[start]) >= 0 {
		start++
	}
	n.raw = r.b[start:dec.InputOffset()]
	return n, nil
}

// token reads a string, a number or a member name, and returns its token
// as received, in the input.
func (r *treeReader) token() ([]byte, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, syntaxError(err, r.where())
	}
	end := r.dec.InputOffset()
	return r.b[end-int64(len(v)) : end], nil
}

// hasNUL reports whether a string token that jsontext checked stands for
// a NUL, which can only be written \u0000.
func hasNUL(tok []byte) bool {
	if !bytes.Contains(tok, []byte(`\u0000`)) {
		return false
	}
	for i := 0; ; i += 2 {
		j := bytes.IndexByte(tok[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if tok[i+1] == 'u' && hex4(tok[i+2:]) == 0 {
			return true
		}
	}
}

// unquote decodes a string token jsontext has checked: escapes well
// formed, surrogates paired, valid UTF-8. It allocates the string only,
// as long as the token or shorter (an escape is never shorter than what
// it stands for).
func unquote(tok []byte) string {
	body := tok[1 : len(tok)-1]
	i := bytes.IndexByte(body, '\\')
	if i < 0 {
		return string(body)
	}
	var s strings.Builder
	s.Grow(len(body))
	for i >= 0 {
		s.Write(body[:i])
		c := body[i+1]
		body = body[i+2:]
		switch c {
		case 'b':
			s.WriteByte('\b')
		case 'f':
			s.WriteByte('\f')
		case 'n':
			s.WriteByte('\n')
		case 'r':
			s.WriteByte('\r')
		case 't':
			s.WriteByte('\t')
		case 'u':
			var r rune
			r, body = unicodeEscape(body)
			s.WriteRune(r)
		default: // '"', '\\', '/'
			s.WriteByte(c)
		}
		i = bytes.IndexByte(body, '\\')
	}
	s.Write(body)
	return s.String()
}

// unicodeEscape decodes the \u escape whose hex digits b starts with, and
// the low surrogate's escape after it if it is a high one (jsontext
// checked they pair), and returns the rune and the rest of b.
func unicodeEscape(b []byte) (rune, []byte) {
	r := hex4(b)
	if utf16.IsSurrogate(r) {
		return utf16.DecodeRune(r, hex4(b[6:])), b[10:]
	}
	return r, b[4:]
}

// hex4 is the value of the four hex digits b starts with.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}

// syntaxError turns a jsontext error into a readable one-line Error.
func syntaxError(err error, path string) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fail("", "unexpected end of input")
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		msg := se.Err.Error()
		if strings.Contains(msg, "duplicate") {
			name := se.JSONPointer.LastToken()
			return fail(path, "duplicate member %q", name)
		}
		return fail("", "invalid JSON at byte %d: %s", se.ByteOffset, msg)
	}
	return fail("", "invalid JSON: %v", err)
}

// checkNumber enforces finite doubles and, when strict, I-JSON: integers
// written without fraction or exponent within ±(2^53−1), so that no two
// requests share a digest by rounding.
func checkNumber(lit string, strict bool) (float64, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("number %s is beyond the range of a double", lit)
	}
	if strict && !strings.ContainsAny(lit, ".eE") && math.Abs(f) > maxSafeInteger {
		return 0, fmt.Errorf("integer %s is beyond ±(2^53−1)", lit)
	}
	return f, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

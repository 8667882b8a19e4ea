package decision

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The canonical form of RFC 8785 (JCS) is written from the tree readTree
// reads with jsontext, so that a request is parsed once for both its
// fields and its digest, and a digest streams into the hash without a copy
// of the canonical form. jsontext checks the syntax, duplicate names after
// unescaping and UTF-8 (lone surrogates too); readTree adds the range of a
// double, which RFC 8785 requires (1e400 is an error, not Infinity).
// jsontext.AppendFloat is ECMAScript's Number.prototype.toString, the
// number form of RFC 8785 section 3.2.2.3; strings are escaped as section
// 3.2.2.2 says and members sorted by UTF-16 code units (section 3.2.3).

// Canonical returns the RFC 8785 (JCS) form of one JSON value.
func Canonical(b []byte) ([]byte, error) {
	root, err := readTree(b, false)
	if err != nil {
		return nil, fmt.Errorf("canonical form: %w", err)
	}
	w := canonWriter{buf: make([]byte, 0, len(b))}
	w.value(root)
	return w.buf, nil
}

// RequestSHA256 is the lowercase hex SHA-256 of the JCS form of a request
// exactly as received: the decision's request_sha256.
func RequestSHA256(raw []byte) (string, error) {
	root, err := readTree(raw, false)
	if err != nil {
		return "", fmt.Errorf("canonical form: %w", err)
	}
	return treeSHA256(root, false), nil
}

// ArgumentsDigest is the approval-binding digest of a call's arguments
// (protocol.md section 5): the SHA-256 of the JCS form after every number is
// replaced by the string of its JCS number form, so 5, 5.0, 5e0 and "5" bind
// alike while "5.0" and "5" differ. nil (absent arguments) binds as null.
func ArgumentsDigest(args []byte) (string, error) {
	if args == nil {
		args = []byte("null")
	}
	root, err := readTree(args, false)
	if err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	return treeSHA256(root, true), nil
}

// treeSHA256 is the hex SHA-256 of the canonical form of the tree at n,
// streamed into the hash a chunk at a time.
func treeSHA256(n *node, numbersAsStrings bool) string {
	h := sha256.New()
	size := min(len(n.raw), canonChunk) + 64 // about the canonical form, for a small n
	w := canonWriter{buf: make([]byte, 0, size), h: h, numbersAsStrings: numbersAsStrings}
	w.value(n)
	w.flush()
	return hex.EncodeToString(h.Sum(nil))
}

// canonChunk is how much canonical form is buffered before it is hashed.
const canonChunk = 32 << 10

// canonWriter writes the canonical form of a tree to buf, and hands buf
// to h whenever it holds a chunk (with h nil, buf keeps it all).
type canonWriter struct {
	buf []byte
	h   hash.Hash
	// numbersAsStrings writes each number as the string of its canonical
	// form (ArgumentsDigest).
	numbersAsStrings bool
}

func (w *canonWriter) flush() {
	if w.h != nil {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *canonWriter) spill() {
	if w.h != nil && len(w.buf) >= canonChunk {
		w.flush()
	}
}

// value writes the canonical form of n, a tree readTree accepted.
func (w *canonWriter) value(n *node) {
	switch n.kind {
	case '{':
		w.buf = append(w.buf, '{')
		for i, m := range sortedMembers(n.members) {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.string(m.nameRaw)
			w.buf = append(w.buf, ':')
			w.value(m.val)
		}
		w.buf = append(w.buf, '}')
	case '[':
		w.buf = append(w.buf, '[')
		for i, e := range n.elems {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.value(e)
		}
		w.buf = append(w.buf, ']')
	case '"':
		w.string(n.raw)
	case '0':
		if w.numbersAsStrings {
			w.buf = append(w.buf, '"')
			w.buf = appendNumber(w.buf, n.num)
			w.buf = append(w.buf, '"')
		} else {
			w.buf = appendNumber(w.buf, n.num)
		}
	case 't':
		w.buf = append(w.buf, "true"...)
	case 'f':
		w.buf = append(w.buf, "false"...)
	case 'n':
		w.buf = append(w.buf, "null"...)
	}
	w.spill()
}

// appendNumber appends the canonical form of a number readTree accepted:
// a finite double, where -0 is 0.
func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		panic("decision: a number beyond a double in a checked tree")
	}
	return jsontext.AppendFloat(b, f, 64)
}

// string writes a string token jsontext checked in the form of RFC 8785
// section 3.2.2.2 (and JSON.stringify): the shortest escapes, which are
// most of those JSON has (\", \\, \b, \t, \n, \f, \r), so the token
// is copied but for \/ and \u escapes, in runs as long as they allow.
// Long runs go to the hash uncopied.
func (w *canonWriter) string(tok []byte) {
	body := tok[1 : len(tok)-1]
	w.buf = append(w.buf, '"')
	for {
		i := rewrittenEscape(body)
		if i < 0 {
			w.bytes(body)
			break
		}
		w.bytes(body[:i])
		c := body[i+1]
		body = body[i+2:]
		if c == 'u' {
			var r rune
			r, body = unicodeEscape(body)
			w.rune(r)
		} else { // '/'
			w.buf = append(w.buf, '/')
		}
	}
	w.buf = append(w.buf, '"')
	w.spill()
}

// rewrittenEscape is the index in the body of a checked string token of
// its first escape the canonical form writes differently (\/ and \u), or
// -1.
func rewrittenEscape(body []byte) int {
	for off := 0; ; {
		j := bytes.IndexByte(body[off:], '\\')
		if j < 0 {
			return -1
		}
		if c := body[off+j+1]; c == 'u' || c == '/' {
			return off + j
		}
		off += j + 2
	}
}

// rune writes r as a canonical string has it.
func (w *canonWriter) rune(r rune) {
	const hexDigits = "0123456789abcdef"
	switch r {
	case '"', '\\':
		w.buf = append(w.buf, '\\', byte(r))
	case '\b':
		w.buf = append(w.buf, '\\', 'b')
	case '\t':
		w.buf = append(w.buf, '\\', 't')
	case '\n':
		w.buf = append(w.buf, '\\', 'n')
	case '\f':
		w.buf = append(w.buf, '\\', 'f')
	case '\r':
		w.buf = append(w.buf, '\\', 'r')
	default:
		if r < 0x20 {
			w.buf = append(w.buf, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		} else {
			w.buf = utf8.AppendRune(w.buf, r)
		}
	}
}

// bytes writes b; when hashing, a long b goes to the hash as it is.
func (w *canonWriter) bytes(b []byte) {
	if w.h != nil && len(w.buf)+len(b) > canonChunk {
		w.flush()
		w.h.Write(b)
		return
	}
	w.buf = append(w.buf, b...)
}

// sortedMembers returns ms sorted by name in UTF-16 code units (RFC 8785
// section 3.2.3); ms itself if it is sorted already. Names are compared as
// their tokens, but in an object with escaped names, decoded once.
func sortedMembers(ms []member) []member {
	if !slices.ContainsFunc(ms, func(m member) bool { return bytes.IndexByte(m.nameRaw, '\\') >= 0 }) {
		cmp := func(a, b member) int {
			return compareUTF16(a.nameRaw[1:len(a.nameRaw)-1], b.nameRaw[1:len(b.nameRaw)-1])
		}
		if slices.IsSortedFunc(ms, cmp) {
			return ms
		}
		sorted := slices.Clone(ms)
		slices.SortFunc(sorted, cmp)
		return sorted
	}
	type named struct {
		name string
		m    member
	}
	byName := make([]named, len(ms))
	for i, m := range ms {
		byName[i] = named{m.name(), m}
	}
	slices.SortFunc(byName, func(a, b named) int { return compareUTF16(a.name, b.name) })
	sorted := make([]member, len(ms))
	for i, n := range byName {
		sorted[i] = n.m
	}
	return sorted
}

// compareUTF16 compares two valid UTF-8 strings as their UTF-16 code
// units. UTF-8 byte order is code point order, which differs only where a
// code point beyond U+FFFF (a surrogate pair, D800–DBFF first) meets one
// of U+E000–U+FFFF.
func compareUTF16[T ~string | ~[]byte](a, b T) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	// Back to the start of the rune where they differ.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, rb := firstRune(a[i:]), firstRune(b[i:])
	if (ra > 0xffff) == (rb > 0xffff) {
		return int(ra - rb)
	}
	// One is a surrogate pair, the other no surrogate: they differ in
	// their first unit.
	return int(utf16Unit(ra) - utf16Unit(rb))
}

// firstRune decodes the rune s starts with.
func firstRune[T ~string | ~[]byte](s T) rune {
	var b [utf8.UTFMax]byte
	r, _ := utf8.DecodeRune(b[:copy(b[:], s)])
	return r
}

// utf16Unit is the first UTF-16 code unit of r.
func utf16Unit(r rune) rune {
	if r > 0xffff {
		return 0xd800 + (r-0x10000)>>10
	}
	return r
}

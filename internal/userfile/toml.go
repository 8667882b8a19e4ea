package userfile

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agnivade/levenshtein"
	"github.com/pelletier/go-toml/v2"
)

// DecodeTOML decodes a user file's TOML into v strictly: a key v does not
// know is an error, never silently ignored (a misspelt setting must not
// leave a weaker default in place). The error names each unknown key with
// the known key nearest to it, or else every key known in its place. Keys
// below a map or an any value (such as "rule.when.equals", whose value is
// any TOML value) are the value's own. A value whose type has an
// UnmarshalTOML([]byte) method (go-toml's unstable.Unmarshaler) receives
// its raw TOML.
func DecodeTOML(b []byte, v any) error {
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	d.EnableUnmarshalerInterface()
	err := d.Decode(v)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		keys := make([][]string, len(strict.Errors))
		for i := range strict.Errors {
			keys[i] = strict.Errors[i].Key()
		}
		return unknownKeys(reflect.TypeOf(v), keys)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := mismatch().FindStringSubmatch(msg); m != nil && len(de.Key()) > 0 {
			if want, ok := expected(reflect.TypeOf(v), de.Key()); ok {
				msg = fmt.Sprintf("%s: expected %s, not a TOML %s", keyString(de.Key()), want, m[1])
			}
		}
		return fmt.Errorf("toml: line %d, column %d: %s", row, col, msg)
	}
	return err
}

// mismatch is the decoder's message for a value of the wrong type, which
// names Go types: its TOML type is kept, the rest said anew (expected).
// Compiled on first use: not in every process's start-up.
var mismatch = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^cannot decode TOML (\w+(?: \w+)?) into `)
})

// expected says in TOML's words what the key k of a file decoded into t
// takes; false when k leads nowhere known.
func expected(t reflect.Type, k []string) (string, bool) {
	for _, name := range k {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
			continue
		case reflect.Slice, reflect.Array:
			t = element(t)
		}
		f, ok := field(t, name)
		if !ok {
			return "", false
		}
		t = f.Type
	}
	return tomlType(t), true
}

// tomlType names what a value of Go type t is written as in TOML.
func tomlType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct {
			return "an array of tables"
		}
		return "an array, each item " + tomlType(t.Elem())
	case reflect.Map:
		return "a table, each value " + tomlType(t.Elem())
	case reflect.Struct:
		return "a table"
	}
	return "a TOML value"
}

// DecodeValue decodes raw, one TOML value as an UnmarshalTOML method
// receives it, into a string, int64, float64, bool, time or a slice or map
// of those.
func DecodeValue(raw []byte) (any, error) {
	var doc struct {
		V any `toml:"v"`
	}
	if err := toml.Unmarshal(append([]byte("v = "), raw...), &doc); err != nil {
		return nil, err
	}
	return doc.V, nil
}

// unknownKeys is the error naming each of keys, unknown in the TOML of a
// t, or nil when there are none.
func unknownKeys(t reflect.Type, keys [][]string) error {
	var unknown [][]string
	for _, k := range keys {
		// Below an unknown table, only the table is news.
		if slices.ContainsFunc(unknown, func(u []string) bool { return len(u) < len(k) && slices.Equal(u, k[:len(u)]) }) {
			continue
		}
		unknown = append(unknown, k)
	}
	if len(unknown) == 0 {
		return nil
	}
	msgs := make([]string, len(unknown))
	for i, k := range unknown {
		msgs[i] = unknownKey(t, k)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// unknownKey says that k is unknown, and what was likely meant.
func unknownKey(t reflect.Type, k []string) string {
	msg := fmt.Sprintf("unknown key %q", keyString(k))
	known := KnownKeys(t, k[:len(k)-1])
	if len(known) == 0 {
		return msg
	}
	if near, ok := Nearest(k[len(k)-1], known); ok {
		return fmt.Sprintf("%s: did you mean %q?", msg, near)
	}
	return fmt.Sprintf("%s (valid here: %s)", msg, strings.Join(known, ", "))
}

// keyString is key k as TOML writes it: bare parts as they are, others
// quoted.
func keyString(k []string) string {
	parts := make([]string, len(k))
	for i, p := range k {
		bare := p != ""
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				bare = false
				break
			}
		}
		if parts[i] = p; !bare {
			parts[i] = strconv.Quote(p)
		}
	}
	return strings.Join(parts, ".")
}

// KnownKeys are the TOML keys the struct reached from t by path takes, in
// the order of its fields; nil when path leads to no struct (a map or any
// value, whose keys are free).
func KnownKeys(t reflect.Type, path []string) []string {
	t = element(t)
	for _, name := range path {
		f, ok := field(t, name)
		if !ok {
			return nil
		}
		t = element(f.Type)
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if name, ok := tomlName(t.Field(i)); ok {
			keys = append(keys, name)
		}
	}
	return keys
}

// element is what a TOML table of type t decodes into: pointers and
// arrays of tables stripped.
func element(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t
}

// field is the field of struct t that TOML key name decodes into.
func field(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		if n, ok := tomlName(t.Field(i)); ok && strings.EqualFold(n, name) {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// tomlName is the key of a struct field, as the decoder reads it.
func tomlName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

// Nearest is the candidate nearest to s by edit distance, when one is near
// enough to be a slip of the keyboard (one edit in a short word, two in a
// longer one, three in a long one) or s starts it; the first of equals.
func Nearest(s string, candidates []string) (string, bool) {
	limit := 1
	switch {
	case len(s) > 8:
		limit = 3
	case len(s) > 3:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(strings.ToLower(s), strings.ToLower(c))
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			d = min(d, limit)
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}

// Package reqtest generates permission requests for tests of what binds
// a request: a random request with every field filled in, and its
// single-field variants (each leaf field changed, each list grown by one),
// each named by the field's path. Tests only.
package reqtest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/askperm/askperm/decision"
)

// Random returns a request with every field set, drawn from rng.
func Random(rng *rand.Rand) *decision.Request {
	r := &decision.Request{}
	fill(rng, reflect.ValueOf(r).Elem(), 0)
	r.Arguments = []byte(fmt.Sprintf(`{"k":%q,"n":%d}`, word(rng), rng.IntN(100)))
	r.Meta = []byte(`{}`)
	return r
}

// Variant is a request differing from its original in one field.
type Variant struct {
	Field string // the field's path: "Grants[0].Implies[1]", "Workdir.Label"
	Req   *decision.Request
}

// Variants returns r's single-field variants: each string, number and
// boolean changed, each optional field made absent or present, each list
// grown by one element, and the arguments changed. The first part of
// each Field is the Request field changed.
func Variants(r *decision.Request) []Variant {
	var out []Variant
	var walk func(path string, at func(*decision.Request) reflect.Value, t reflect.Type, v reflect.Value)
	add := func(path string, at func(*decision.Request) reflect.Value, change func(reflect.Value)) {
		c := Copy(r)
		change(at(c))
		out = append(out, Variant{path, c})
	}
	walk = func(path string, at func(*decision.Request) reflect.Value, t reflect.Type, v reflect.Value) {
		switch {
		case t == reflect.TypeFor[[]byte]():
			add(path, at, func(f reflect.Value) { f.SetBytes([]byte(`{"k":"other"}`)) })
		case t.Kind() == reflect.String:
			add(path, at, func(f reflect.Value) { f.SetString(f.String() + "x") })
		case t.Kind() == reflect.Int:
			add(path, at, func(f reflect.Value) { f.SetInt(f.Int() + 1) })
		case t.Kind() == reflect.Bool:
			add(path, at, func(f reflect.Value) { f.SetBool(!f.Bool()) })
		case t.Kind() == reflect.Float64:
			add(path, at, func(f reflect.Value) { f.SetFloat(f.Float() + 1) })
		case t.Kind() == reflect.Pointer:
			add(path, at, func(f reflect.Value) {
				if f.IsNil() {
					f.Set(reflect.New(t.Elem()))
				} else {
					f.Set(reflect.Zero(t))
				}
			})
			if !v.IsNil() {
				walk(path, func(c *decision.Request) reflect.Value { return at(c).Elem() }, t.Elem(), v.Elem())
			}
		case t.Kind() == reflect.Slice:
			add(path, at, func(f reflect.Value) { f.Set(reflect.Append(f, reflect.Zero(t.Elem()))) })
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), func(c *decision.Request) reflect.Value { return at(c).Index(i) }, t.Elem(), v.Index(i))
			}
		case t.Kind() == reflect.Struct:
			for i := range t.NumField() {
				name := t.Field(i).Name
				if path != "" {
					name = path + "." + name
				}
				walk(name, func(c *decision.Request) reflect.Value { return at(c).Field(i) }, t.Field(i).Type, v.Field(i))
			}
		default:
			panic("reqtest: no variant for " + path + " of kind " + t.Kind().String())
		}
	}
	walk("", func(c *decision.Request) reflect.Value { return reflect.ValueOf(c).Elem() }, reflect.TypeFor[decision.Request](), reflect.ValueOf(r).Elem())
	return out
}

// Top is the Request field a variant's path starts with.
func Top(field string) string {
	if i := strings.IndexAny(field, ".["); i >= 0 {
		return field[:i]
	}
	return field
}

// Copy returns a deep copy of r.
func Copy(r *decision.Request) *decision.Request {
	return deepCopy(reflect.ValueOf(r)).Interface().(*decision.Request)
}

func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			c.Field(i).Set(deepCopy(v.Field(i)))
		}
		return c
	}
	return v
}

func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(word(rng))
	case reflect.Int:
		v.SetInt(int64(rng.IntN(3)))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Float64:
		v.SetFloat(float64(1 + rng.IntN(60)))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(rng, v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[[]byte]() {
			return
		}
		n := 1 + rng.IntN(2)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(rng, v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(rng, v.Field(i), depth+1)
		}
	}
}

func word(rng *rand.Rand) string {
	const letters = "abcdefgh/._-"
	b := make([]byte, 1+rng.IntN(6))
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

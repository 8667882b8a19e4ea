package jsonnames

import (
	"bytes"
	"testing"
	"unicode"
)

func TestUnambiguous(t *testing.T) {
	for text, want := range map[string]bool{
		`{"action":"read"}`:                   true,
		`{"a":{"b":1},"c":[{"b":2},{"b":3}]}`: true,
		`{"action":"delete","Action":"read"}`: false,
		`{"a":{"id":1,"ID":2}}`:               false,
		`[{"x":1,"X":2}]`:                     false,
		`{"paths":1,"pathſ":2}`:               false, // ſ folds to s
		`{"key":1,"\u212aey":2}`:              false, // the Kelvin sign folds to k
		`{"a":1,"\u0061":2}`:                  false,
		`{"a":1} {"b":2}`:                     false,
		"{\"a\":\"\xff\"}":                    false,
		`{"a":{"x":1},"b":{"x":1}}`:           true, // one name in two objects
	} {
		if got := Unambiguous([]byte(text)); got != want {
			t.Errorf("%s: %v, want %v", text, got, want)
		}
	}
}

// fold agrees with bytes.EqualFold on every rune and its folding orbit.
func TestFoldAgreesWithEqualFold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r += 1 + r/4096 {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			a, b := string(r), string(f)
			if (fold(a) == fold(b)) != bytes.EqualFold([]byte(a), []byte(b)) {
				t.Fatalf("%U and %U: fold and bytes.EqualFold disagree", r, f)
			}
		}
	}
}

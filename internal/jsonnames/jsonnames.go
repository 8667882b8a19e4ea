// Package jsonnames tells whether every JSON reader reads a JSON text the
// same way as to its names: the gate refuses client messages that some
// reader could read otherwise, and the rules refuse tool arguments that a
// server could read otherwise than the policy did.
package jsonnames

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
)

// Unambiguous says every JSON reader reads b alike: it is one JSON value,
// in valid UTF-8, and no object in it has two names that encoding/json
// takes for one field, that is names equal but for case (encoding/json
// matches them to fields as bytes.EqualFold does, most readers exactly) or
// equal outright (readers differ in which one wins). Otherwise a server
// could read a call, or an argument, other than the one askperm decided.
func Unambiguous(b []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(b)) // refuses equal names and invalid UTF-8
	var objects []map[string]bool                  // the folded names of each object open
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			_, values := dec.StackIndex(0)
			return values == 1
		}
		if err != nil {
			return false
		}
		switch tok.Kind() {
		case '{':
			objects = append(objects, map[string]bool{})
		case '}':
			objects = objects[:len(objects)-1]
		case '"':
			if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 { // a name
				names, name := objects[len(objects)-1], fold(tok.String())
				if names[name] {
					return false
				}
				names[name] = true
			}
		}
	}
}

// fold maps each rune of s to the least of its simple case folding orbit,
// so that fold(a) == fold(b) exactly when bytes.EqualFold(a, b).
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

package userfile

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// DecodeTOML decodes a user file's TOML into v strictly: a key v does not
// know is an error, never silently ignored (a misspelt setting must not
// leave a weaker default in place). Keys below a free-form key (such as
// "rule.when.equals", whose value is any TOML value) are the value's own.
func DecodeTOML(b []byte, v any, freeForm ...string) error {
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(v)
	if err != nil {
		return err
	}
	var keys []string
	for _, k := range md.Undecoded() {
		if !slices.ContainsFunc(freeForm, func(f string) bool { return strings.HasPrefix(k.String(), f+".") }) {
			keys = append(keys, k.String())
		}
	}
	if len(keys) > 0 {
		return fmt.Errorf("unknown keys: %s", strings.Join(keys, ", "))
	}
	return nil
}

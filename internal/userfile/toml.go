package userfile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// DecodeTOML decodes a user file's TOML into v strictly: a key v does not
// know is an error, never silently ignored (a misspelt setting must not
// leave a weaker default in place).
func DecodeTOML(b []byte, v any) error {
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(v)
	if err != nil {
		return err
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return fmt.Errorf("unknown keys: %s", strings.Join(keys, ", "))
	}
	return nil
}

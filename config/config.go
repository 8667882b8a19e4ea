// Package config owns askperm's user configuration file, config.toml under
// the XDG config directory: where it is, and its strict parsing. Values are
// checked by the command line that applies them, with the same parsers as
// the matching flags.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/askperm/askperm/userfile"
)

// Config is config.toml. Empty values mean "not set".
type Config struct {
	// Timeout is the default --timeout ("30s", "5m", or seconds).
	Timeout string `toml:"timeout"`
	// Frontends is the default frontend order (as --frontend).
	Frontends []string `toml:"frontends"`
	// ArmDelay is how long after a prompt opens before an allow can be
	// confirmed ("500ms", "1s").
	ArmDelay string `toml:"arm_delay"`
	// Dialogs maps "yad" and "zenity" to absolute program paths.
	Dialogs map[string]string `toml:"dialogs"`
}

// Path is where the config file lives: $XDG_CONFIG_HOME/askperm/config.toml,
// else ~/.config/askperm/config.toml; "" when neither is known.
func Path(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) { // the XDG spec: relative values are ignored
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "askperm", "config.toml")
}

// Load reads the config file at path. A missing file is an empty config
// when optional (the default location), an error when named explicitly.
func Load(path string, optional bool) (Config, error) {
	b, err := userfile.Read(path)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, err
	}
	c, err := Parse(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes config.toml strictly: unknown keys are errors.
func Parse(b []byte) (Config, error) {
	var c Config
	if err := userfile.DecodeTOML(b, &c); err != nil {
		return Config{}, err
	}
	for name, p := range c.Dialogs {
		if name != "yad" && name != "zenity" {
			return Config{}, fmt.Errorf("dialogs: unknown dialog %q (known: yad, zenity)", name)
		}
		if !filepath.IsAbs(p) {
			return Config{}, fmt.Errorf("dialogs.%s: %q is not an absolute path", name, p)
		}
	}
	return c, nil
}

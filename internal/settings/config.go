package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/askperm/askperm/internal/userfile"
)

// Config is config.toml, as written: values are checked and typed by
// Resolve, so that an error can name the file and the key. Empty values
// mean "not set". New sections ([rules], [state], [limits], ...) are new
// fields here.
type Config struct {
	// Timeout is the default --timeout: "30s", "5m", or seconds.
	Timeout Duration `toml:"timeout"`
	// Frontends is the default frontend order (as --frontend).
	Frontends []string `toml:"frontends"`
	// ArmDelay is how long after a prompt opens before an allow can be
	// confirmed: "500ms", "1s", or seconds.
	ArmDelay Duration `toml:"arm_delay"`
	// Bell rings the bell when a prompt opens.
	Bell bool `toml:"bell"`
	// Dialogs maps "yad" and "zenity" to absolute program paths.
	Dialogs map[string]string `toml:"dialogs"`
	// State is where and how askperm remembers.
	State struct {
		Dir         string   `toml:"dir"`          // the state directory, absolute
		Remember    *bool    `toml:"remember"`     // false: remember nothing
		SessionIdle Duration `toml:"session_idle"` // how long a session approval lives unused
	} `toml:"state"`
	// Breaker holds the denial breaker's thresholds, per session and (user_)
	// per user over every session; 0 turns one off.
	Breaker struct {
		Consecutive     *int `toml:"consecutive"`
		Window          *int `toml:"window"`
		Within          *int `toml:"within"`
		UserConsecutive *int `toml:"user_consecutive"`
		UserWindow      *int `toml:"user_window"`
		UserWithin      *int `toml:"user_within"`
	} `toml:"breaker"`
	// Limits holds the prompt rate limit, per session and per user over
	// every session; 0 turns one off.
	Limits struct {
		PromptsPerMinute     *int `toml:"prompts_per_minute"`
		PromptsPerMinuteUser *int `toml:"prompts_per_minute_user"`
	} `toml:"limits"`
	// Reviewers are the [[reviewer]] tables, in file order (reviewers.go).
	Reviewers []Reviewer `toml:"reviewer"`
	// Team is team mode's server, this host's name and trusted approvers,
	// and the approver's key (team.Config); nil without a [team] table.
	Team *Team `toml:"team"`
	// Notify is the program run when a question waits for a person.
	Notify struct {
		// Command is the program, absolute, and its arguments; nil: the
		// default (notify-send), empty: none.
		Command *[]string `toml:"command"`
	} `toml:"notify"`
}

// Team is the [team] table as written.
type Team struct {
	URL       string   `toml:"url"`
	Creds     string   `toml:"creds"`
	Host      string   `toml:"host"`
	Approvers []string `toml:"approvers"`
	Prefix    string   `toml:"prefix"`
	Replicas  *int     `toml:"replicas"`
	Key       string   `toml:"key"`
	Program   string   `toml:"program"` // askperm-team, absolute; checked like a dialog program
}

// Duration is a duration as config.toml gives it: a string such as "30s",
// or a number of seconds, kept as text for the parser the matching flag
// uses.
type Duration string

// UnmarshalTOML takes a string or a number.
func (d *Duration) UnmarshalTOML(raw []byte) error {
	v, err := userfile.DecodeValue(raw)
	if err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*d = Duration(v)
	case int64:
		*d = Duration(strconv.FormatInt(v, 10))
	case float64:
		*d = Duration(strconv.FormatFloat(v, 'g', -1, 64))
	default:
		return fmt.Errorf("expected a duration such as \"30s\" or a number of seconds, not %s", tomlType(v))
	}
	return nil
}

// tomlType names v's TOML type.
func tomlType(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
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

// Parse decodes config.toml strictly: unknown keys are errors. A dialog
// program must be one the user may trust (userfile.Program): one that
// anyone else could replace could approve every request.
func Parse(b []byte) (Config, error) {
	var c Config
	if err := userfile.DecodeTOML(b, &c); err != nil {
		return Config{}, err
	}
	if err := checkReviewers(c.Reviewers); err != nil {
		return Config{}, err
	}
	for _, name := range slices.Sorted(maps.Keys(c.Dialogs)) {
		if name != "yad" && name != "zenity" {
			return Config{}, fmt.Errorf("dialogs: unknown dialog %q (known: yad, zenity)", name)
		}
		if err := userfile.Program(c.Dialogs[name]); err != nil {
			return Config{}, fmt.Errorf("dialogs.%s: %w", name, err)
		}
	}
	// askperm-team carries the team's answers: one that anyone else
	// could replace could withhold them (never forge one: askperm
	// verifies every answer).
	if c.Team != nil && c.Team.Program != "" {
		if err := userfile.Program(c.Team.Program); err != nil {
			return Config{}, fmt.Errorf("team.program: %w", err)
		}
	}
	return c, nil
}

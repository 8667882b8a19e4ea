package setup

import (
	"errors"
	"os"
	"path/filepath"
)

// File is one configuration file an agent reads hooks from.
type File struct {
	Agent string
	Path  string
	TOML  bool // Codex's config.toml: inline [hooks] tables
}

// Place says where an agent's files are: the user's home, CODEX_HOME,
// and the project (the current directory's).
type Place struct {
	Getenv func(string) string
	Dir    string // the current directory
}

// Project is the project the current directory belongs to: the nearest
// directory up from it holding .git, else the directory itself (where the
// agent, started there, looks for its project settings).
func (p Place) Project() string {
	for d := p.Dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return p.Dir
		}
	}
}

// home is the user's home directory; "" when HOME is not absolute.
func (p Place) home() string {
	if h := p.Getenv("HOME"); filepath.IsAbs(h) {
		return h
	}
	return ""
}

// codexHome is $CODEX_HOME, else ~/.codex.
func (p Place) codexHome() string {
	if h := p.Getenv("CODEX_HOME"); filepath.IsAbs(h) {
		return h
	}
	if h := p.home(); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// errNoHome: the user's files have no known place.
var errNoHome = errors.New("HOME is not set to an absolute path")

// InstallPath is the file install writes agent's hook into: for the
// project, Claude Code's .claude/settings.local.json (personal and
// ignored by git: the hook names this machine's askperm binary, which
// the project's shared settings.json must not carry) or Codex's
// .codex/hooks.json; for the user, ~/.claude/settings.json or Codex's
// hooks.json in CODEX_HOME (the form the docs show; Codex reads it beside
// config.toml).
func (p Place) InstallPath(agent string, project bool) (string, error) {
	if err := checkAgent(agent); err != nil {
		return "", err
	}
	var dir string
	switch {
	case project && agent == "claude-code":
		return filepath.Join(p.Project(), ".claude", "settings.local.json"), nil
	case project:
		return filepath.Join(p.Project(), ".codex", "hooks.json"), nil
	case agent == "claude-code":
		if dir = p.home(); dir != "" {
			return filepath.Join(dir, ".claude", "settings.json"), nil
		}
	default:
		if dir = p.codexHome(); dir != "" {
			return filepath.Join(dir, "hooks.json"), nil
		}
	}
	return "", errNoHome
}

// Files lists every file agent reads hooks from, the user's first, then
// the project's; those with no known place are left out.
func (p Place) Files(agent string) []File {
	proj := p.Project()
	var fs []File
	add := func(dir string, toml bool, names ...string) {
		if dir == "" {
			return
		}
		for _, n := range names {
			fs = append(fs, File{Agent: agent, Path: filepath.Join(dir, n), TOML: toml && n == "config.toml"})
		}
	}
	if agent == "claude-code" {
		if h := p.home(); h != "" {
			add(filepath.Join(h, ".claude"), false, "settings.json", "settings.local.json")
		}
		add(filepath.Join(proj, ".claude"), false, "settings.json", "settings.local.json")
		return fs
	}
	add(p.codexHome(), true, "hooks.json", "config.toml")
	add(filepath.Join(proj, ".codex"), true, "hooks.json", "config.toml")
	return fs
}

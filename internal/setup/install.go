package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pelletier/go-toml/v2"

	"github.com/askperm/askperm/internal/userfile"
)

// Plan is what install would do to one file.
type Plan struct {
	Path    string
	Before  []byte      // the file as it is; nil when it does not exist
	Mode    fs.FileMode // the file's mode, kept; 0600 for a new file
	After   []byte      // the file with askperm's hook; nil when nothing changes
	Added   []byte      // the hook group added, indented
	Present []Found     // askperm's hooks already there: nothing changes
}

// NewPlan reads the file at path (refusing a link or a file others may
// write, as askperm refuses user files) and plans adding agent's hook,
// run by binary, to it. A file that already runs `askperm hook agent`
// changes nothing. For Codex, a config.toml beside it holding inline
// [hooks] is an error that carries the lines to add there: askperm does
// not rewrite TOML (its comments would be lost), and Codex warns about a
// layer configured both ways.
func NewPlan(path, agent, binary string) (*Plan, error) {
	if err := checkAgent(agent); err != nil {
		return nil, err
	}
	p := &Plan{Path: path, Mode: 0o600}
	before, mode, err := readTarget(path)
	if err != nil {
		return nil, err
	}
	if before != nil {
		p.Before, p.Mode = before, mode
	}
	var doc map[string]any
	if len(bytes.TrimSpace(before)) > 0 {
		if err := json.Unmarshal(before, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if p.Present = Hooks(doc, agent, binary); len(p.Present) > 0 {
		return p, nil
	}
	if agent == "codex" {
		if found, err := inlineHooks(filepath.Join(filepath.Dir(path), "config.toml"), agent, binary); len(found) > 0 || err != nil {
			p.Present = found
			return p, err
		}
	}
	group, err := json.Marshal(newHookGroup(binary, agent))
	if err != nil {
		return nil, err
	}
	after, err := addHookGroup(before, Event, group)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.After = after
	p.Added = indent(group)
	return p, nil
}

// ErrInlineHooks means Codex's config.toml holds hooks askperm will not
// rewrite; the error's text carries the lines to add.
var ErrInlineHooks = errors.New("holds inline [hooks]")

// inlineHooks reads Codex's config.toml at path: askperm's hooks among its
// inline [hooks], or, when it has inline hooks but not askperm's, an error
// wrapping ErrInlineHooks. A missing file has none.
func inlineHooks(path, agent, self string) ([]Found, error) {
	b, err := userfile.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := doc["hooks"]; !ok {
		return nil, nil
	}
	if found := Hooks(doc, agent, self); len(found) > 0 {
		return found, nil
	}
	return nil, fmt.Errorf("%s %w: askperm does not rewrite TOML; add these lines to it instead", path, ErrInlineHooks)
}

// TOMLLines are the lines of Codex's config.toml that install askperm's
// hook, run by binary.
func TOMLLines(binary string) string {
	return fmt.Sprintf("[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %q\ntimeout = %d\n",
		Event, Event, HookCommand(binary, "codex"), HookTimeout)
}

// readTarget reads the file install would change: nil when it does not
// exist. It refuses a link (install replaces the file, never what a link
// points to) and whatever userfile.Read refuses.
func readTarget(path string) ([]byte, fs.FileMode, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, 0, fmt.Errorf("%s is a symbolic link: askperm does not write through it (edit the file it points to by hand)", path)
	}
	b, err := userfile.Read(path)
	if err != nil {
		return nil, 0, err
	}
	return b, fi.Mode().Perm(), nil
}

// Write writes the planned file atomically (a temporary file in the same
// directory, renamed over it), keeping its mode, after copying the old
// one to PATH.askperm-backup-TIME. It returns the backup's path ("" for a
// new file).
func (p *Plan) Write(now time.Time) (backup string, err error) {
	dir := filepath.Dir(p.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if p.Before != nil {
		backup = p.Path + ".askperm-backup-" + now.UTC().Format("20060102T150405Z")
		if err := writeNew(backup, p.Before, 0o600); err != nil {
			return "", fmt.Errorf("backup: %w", err)
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p.Path)+".askperm-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	_, err = tmp.Write(p.After)
	err = errors.Join(err, tmp.Chmod(p.Mode), tmp.Sync(), tmp.Close())
	if err != nil {
		return "", err
	}
	return backup, os.Rename(tmp.Name(), p.Path)
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, b []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Sync(), f.Close())
}

// member is one name and value of a JSON object, kept as written, so that
// the file keeps its keys' order.
type member struct {
	name  string
	value jsontext.Value
}

// addHookGroup appends group to hooks[event] in the JSON object doc
// (empty: {}), keeping every other member and the order of all.
func addHookGroup(doc []byte, event string, group jsontext.Value) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	top, err := members(doc)
	if err != nil {
		return nil, err
	}
	hooks, err := edit(top, "hooks", "{}", func(v jsontext.Value) (jsontext.Value, error) {
		events, err := members(v)
		if err != nil {
			return nil, fmt.Errorf("hooks: %w", err)
		}
		events, err = edit(events, event, "[]", func(v jsontext.Value) (jsontext.Value, error) {
			return appendElement(v, group)
		})
		return object(events), err
	})
	if err != nil {
		return nil, err
	}
	out := object(hooks)
	if err := out.Indent(jsontext.WithIndent("  ")); err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// edit replaces the value of name in ms by change(value), adding the
// member with value empty when it is missing.
func edit(ms []member, name, empty string, change func(jsontext.Value) (jsontext.Value, error)) ([]member, error) {
	for i, m := range ms {
		if m.name == name {
			v, err := change(m.value)
			ms[i].value = v
			return ms, err
		}
	}
	v, err := change(jsontext.Value(empty))
	return append(ms, member{name, v}), err
}

// members reads a JSON object's members in order; duplicate names are an
// error (which one an agent takes is not known).
func members(v jsontext.Value) ([]member, error) {
	d := jsontext.NewDecoder(bytes.NewReader(v))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("not a JSON object: %s", firstWords(v))
	}
	var ms []member
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids tok
		val, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{name, val.Clone()})
	}
	_, err := d.ReadToken()
	return ms, err
}

// object writes ms as a compact JSON object.
func object(ms []member) jsontext.Value {
	out := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, m.name)
		out = append(append(out, ':'), m.value...)
	}
	return append(out, '}')
}

// appendElement appends e to the JSON array a.
func appendElement(a, e jsontext.Value) (jsontext.Value, error) {
	a = bytes.TrimSpace(a)
	if a.Kind() != '[' {
		return nil, fmt.Errorf("%s: not a list: %s", Event, firstWords(a))
	}
	body := bytes.TrimSpace(a[1 : len(a)-1])
	out := append([]byte{'['}, body...)
	if len(body) > 0 {
		out = append(out, ',')
	}
	return append(append(out, e...), ']'), nil
}

// indent is v indented as install shows it.
func indent(v jsontext.Value) []byte {
	v = v.Clone()
	_ = v.Indent(jsontext.WithIndent("  "))
	return v
}

// firstWords is the start of v, for an error.
func firstWords(v []byte) string {
	s := strings.TrimSpace(string(v))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}

package realpath

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askperm/askperm/decision"
)

// dir is a fresh directory in its resolved form.
func dir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func resolved(value string) string {
	req := &decision.Request{Dimensions: []decision.Dimension{{Name: "path", Value: value}}}
	Resolve(req)
	return req.Dimensions[0].Resolved
}

func TestResolve(t *testing.T) {
	d := dir(t)
	must(t, os.MkdirAll(d+"/proj/sub", 0o700))
	must(t, os.MkdirAll(d+"/home", 0o700))
	must(t, os.WriteFile(d+"/home/.bashrc", nil, 0o600))
	must(t, os.Symlink(d+"/home", d+"/proj/lnk"))
	must(t, os.Symlink("../home/new", d+"/proj/dangling"))
	must(t, os.Symlink("loop", d+"/proj/loop"))
	for value, want := range map[string]string{
		d + "/proj/lnk/.bashrc":        d + "/home/.bashrc",
		d + "/proj/lnk/absent/x":       d + "/home/absent/x",
		d + "/proj/sub/../lnk/.bashrc": d + "/home/.bashrc",
		d + "/proj/lnk/../proj/sub":    d + "/proj/sub", // ".." after the link: out of home
		d + "/proj/dangling/x":         d + "/home/new/x",
		d + "/proj/loop/x":             Unresolvable,
		d + "/proj/sub/x":              "", // no link: the lexical form
		d + "/proj/./sub//x":           "",
		"relative/path":                "",
	} {
		if got := resolved(value); got != want {
			t.Errorf("%s: resolved %q, want %q", value, got, want)
		}
	}
}

// An allow never covers a path outside through a symlink: for generated
// paths through generated links, spelled absolute or relative to the
// workdir, a prefix allowing proj/ (or every relative path below the
// workdir) covers only paths whose file, as the kernel opens it, lies in
// proj.
func TestAllowNeverEscapesThroughSymlinks(t *testing.T) {
	d := dir(t)
	proj, out := d+"/proj", d+"/out"
	for _, p := range []string{proj + "/a/b", out + "/c"} {
		must(t, os.MkdirAll(p, 0o700))
	}
	for _, f := range []string{proj + "/f", proj + "/a/f", proj + "/a/b/f", out + "/f", out + "/c/f"} {
		must(t, os.WriteFile(f, nil, 0o600))
	}
	must(t, os.Symlink("../../out", proj+"/a/up")) // one way out at least
	targets := []string{out, "../out", "../../out/c", ".", "..", "a", "b", "../a", out + "/c/f", "f", "new", "../new"}
	rng := rand.New(rand.NewPCG(7, 19))
	links := []string{"up"}
	for i := range 6 {
		dirs := []string{proj, proj + "/a", proj + "/a/b"}
		name := fmt.Sprintf("l%d", i)
		must(t, os.Symlink(targets[rng.IntN(len(targets))], dirs[rng.IntN(len(dirs))]+"/"+name))
		links = append(links, name)
	}
	absolute := decision.Scope{Match: proj + "/", Kind: decision.KindPrefix}
	relative := decision.Scope{Match: "**/*", Kind: decision.KindGlob}
	steps := append([]string{"a", "b", ".", "..", "", "c"}, links...)
	opened, allowed, outside := 0, 0, 0
	for range 3000 {
		var parts []string
		for range rng.IntN(5) {
			parts = append(parts, steps[rng.IntN(len(steps))])
		}
		rel := strings.Join(append(parts, "f"), "/")
		real, ok := kernelPath(proj + "/" + rel)
		if !ok {
			continue
		}
		opened++
		if !strings.HasPrefix(real, proj+"/") {
			outside++
		}
		for _, tc := range []struct {
			value string
			allow decision.Scope
		}{{proj + "/" + rel, absolute}, {rel, relative}} {
			req := &decision.Request{Workdir: &decision.Workdir{Value: proj}, Dimensions: []decision.Dimension{{Name: "path", Value: tc.value}}}
			Resolve(req)
			if !tc.allow.Allows(req.Dimensions[0]) {
				continue
			}
			allowed++
			if !strings.HasPrefix(real, proj+"/") {
				t.Errorf("%s opens %s, outside, but is allowed (resolved %q)", tc.value, real, req.Dimensions[0].Resolved)
			}
		}
	}
	if opened < 100 || allowed == 0 || outside == 0 {
		t.Fatalf("too few cases: %d opened, %d allowed, %d outside", opened, allowed, outside)
	}
}

// kernelPath is where the kernel opens p, creating it as a write would
// (through a dangling link too), from /proc/self/fd; a file it created is
// removed again.
func kernelPath(p string) (string, bool) {
	_, err := os.Stat(p)
	existed := err == nil
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return "", false
	}
	defer f.Close()
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if !existed {
		os.Remove(real)
	}
	return real, err == nil
}

// A relative path is resolved against the request's absolute workdir: a
// link inside the workdir that leads out is seen, and a path without one
// keeps its cleaned relative form. Without an absolute workdir it stays
// unanchored, which no path glob allows.
func TestResolveRelative(t *testing.T) {
	d := dir(t)
	must(t, os.MkdirAll(d+"/proj/src/real", 0o700))
	must(t, os.MkdirAll(d+"/home/.ssh", 0o700))
	must(t, os.WriteFile(d+"/home/.ssh/id", nil, 0o600))
	must(t, os.Symlink(d+"/home", d+"/proj/src/lnk"))
	must(t, os.Symlink("real", d+"/proj/src/inner"))
	must(t, os.Symlink(d+"/proj", d+"/wd")) // a workdir reached through a link
	allow := decision.Scope{Match: "src/**", Kind: decision.KindGlob}
	deny := decision.Scope{Match: d + "/home/**", Kind: decision.KindGlob}
	for _, wd := range []string{d + "/proj", d + "/wd", d + "/proj/"} {
		for value, want := range map[string]string{
			"src/lnk/.ssh/id":  d + "/home/.ssh/id",
			"src/./x":          "src/x",
			"src/inner/x":      "src/real/x",
			"src/../../home/x": d + "/home/x",
		} {
			req := &decision.Request{Workdir: &decision.Workdir{Value: wd}, Dimensions: []decision.Dimension{{Name: "path", Value: value}}}
			Resolve(req)
			got := req.Dimensions[0]
			if got.Resolved != want {
				t.Errorf("%s in %s: resolved %q, want %q", value, wd, got.Resolved, want)
			}
			if out := strings.HasPrefix(want, "/"); allow.Allows(got) == out || deny.Denies(got) != out {
				t.Errorf("%s in %s: allowed %v, denied %v", value, wd, allow.Allows(got), deny.Denies(got))
			}
		}
	}
	for _, wd := range []*decision.Workdir{nil, {Value: "proj"}} {
		req := &decision.Request{Workdir: wd, Dimensions: []decision.Dimension{{Name: "path", Value: "src/x"}}}
		Resolve(req)
		if allow.Allows(req.Dimensions[0]) || !(decision.Scope{Match: "src/x", Kind: decision.KindExact}).Allows(req.Dimensions[0]) {
			t.Errorf("workdir %v: an unanchored relative path allowed by a path glob, or not by exact", wd)
		}
	}
}

// A command line is never resolved, however much it looks like a path.
func TestResolveSkipsCommandLines(t *testing.T) {
	d := dir(t)
	must(t, os.Symlink(d, d+"/lnk"))
	req := &decision.Request{Workdir: &decision.Workdir{Value: d}, Dimensions: []decision.Dimension{
		{Name: "command", Value: d + "/lnk/x", Syntax: decision.SyntaxShell}, {Name: "cmd", Value: "lnk/x", Syntax: decision.SyntaxShell}}}
	Resolve(req)
	for _, dim := range req.Dimensions {
		if dim.Resolved != "" {
			t.Errorf("%s: resolved to %q", dim.Value, dim.Resolved)
		}
	}
}

// A deny written with an absolute path covers the same file named
// relatively from the workdir, however it is spelled; an allow written
// with an absolute path still never allows a relative value.
func TestAbsoluteDenyCoversRelativeSpellings(t *testing.T) {
	d := dir(t)
	must(t, os.MkdirAll(d+"/proj/src", 0o700))
	must(t, os.WriteFile(d+"/proj/src/.env", nil, 0o600))
	must(t, os.Symlink(d+"/proj", d+"/wd"))
	for _, deny := range []decision.Scope{
		{Match: d + "/proj/src/.env", Kind: decision.KindExact},
		{Match: d + "/proj/src/", Kind: decision.KindPrefix},
		{Match: d + "/proj/**/.env", Kind: decision.KindGlob},
	} {
		for _, wd := range []string{d + "/proj", d + "/wd"} {
			for _, value := range []string{"src/.env", "src/./.env", "./src//.env", "src/x/../.env"} {
				req := &decision.Request{Workdir: &decision.Workdir{Value: wd}, Dimensions: []decision.Dimension{{Name: "path", Value: value}}}
				Resolve(req)
				if !deny.Denies(req.Dimensions[0]) {
					t.Errorf("%s %s from %s: not denied", deny.Kind, value, wd)
				}
				if (decision.Scope{Match: deny.Match, Kind: deny.Kind}).Allows(req.Dimensions[0]) {
					t.Errorf("%s %s from %s: allowed by an absolute scope", deny.Kind, value, wd)
				}
			}
		}
	}
}

// A dangling link reached through a link and "..": its relative target is
// read from the link's real directory, as the kernel reads it, not from
// the path as spelled, so a prefix allow of the workdir does not cover a
// file a write creates outside it.

func TestDanglingLinkAfterDotDot(t *testing.T) {
	d := dir(t)
	proj, out := d+"/proj", d+"/out"
	must(t, os.MkdirAll(proj, 0o700))
	must(t, os.MkdirAll(out+"/x", 0o700))
	must(t, os.Symlink(out+"/x", proj+"/l"))
	must(t, os.Symlink("secret", out+"/m"))
	value := proj + "/l/../m"
	req := &decision.Request{Dimensions: []decision.Dimension{{Name: "path", Value: value}}}
	Resolve(req)
	if got, want := req.Dimensions[0].Resolved, out+"/secret"; got != want {
		t.Errorf("%s resolved to %q, want %q", value, got, want)
	}
	if (decision.Scope{Match: proj + "/", Kind: decision.KindPrefix}).Allows(req.Dimensions[0]) {
		t.Errorf("an allow of %s/ covers %s, which creates %s/secret", proj, value, out)
	}
}

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
// paths through generated links, a prefix allowing proj/ covers only
// paths whose file, as the kernel opens it, lies in proj.
func TestAllowNeverEscapesThroughSymlinks(t *testing.T) {
	d := dir(t)
	proj, out := d+"/proj", d+"/out"
	for _, p := range []string{proj + "/a/b", out + "/c"} {
		must(t, os.MkdirAll(p, 0o700))
	}
	for _, f := range []string{proj + "/f", proj + "/a/f", proj + "/a/b/f", out + "/f", out + "/c/f"} {
		must(t, os.WriteFile(f, nil, 0o600))
	}
	targets := []string{out, "../out", "../../out/c", ".", "..", "a", "b", "../a", out + "/c/f", "f"}
	rng := rand.New(rand.NewPCG(7, 19))
	var links []string
	for i := range 6 {
		dirs := []string{proj, proj + "/a", proj + "/a/b"}
		name := fmt.Sprintf("l%d", i)
		must(t, os.Symlink(targets[rng.IntN(len(targets))], dirs[rng.IntN(len(dirs))]+"/"+name))
		links = append(links, name)
	}
	allow := decision.Scope{Match: proj + "/", Kind: decision.KindPrefix}
	steps := append([]string{"a", "b", ".", "..", "", "c"}, links...)
	opened, allowed := 0, 0
	for range 3000 {
		var b strings.Builder
		b.WriteString(proj)
		for range rng.IntN(5) {
			b.WriteString("/" + steps[rng.IntN(len(steps))])
		}
		b.WriteString("/f")
		value := b.String()
		real, ok := kernelPath(value)
		if !ok {
			continue
		}
		opened++
		req := &decision.Request{Dimensions: []decision.Dimension{{Name: "path", Value: value}}}
		Resolve(req)
		if allow.Allows(req.Dimensions[0]) {
			allowed++
			if !strings.HasPrefix(real, proj+"/") {
				t.Errorf("%s opens %s, outside, but is allowed (resolved %q)", value, real, req.Dimensions[0].Resolved)
			}
		}
	}
	if opened < 100 || allowed == 0 {
		t.Fatalf("too few cases: %d opened, %d allowed", opened, allowed)
	}
}

// kernelPath is where the kernel opens p, from /proc/self/fd.
func kernelPath(p string) (string, bool) {
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	return real, err == nil
}

// Package realpath resolves the paths a request names as the kernel will,
// once per request, so that scopes judge the file a call reaches and not
// only how its path is spelled (protocol section 2, one path form): a
// symlink inside an allowed directory must not lead outside it.
package realpath

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/askperm/askperm/decision"
)

// Resolve sets the Resolved path of each of req's dimensions that may be
// a path (decision.IsPath; never a command line). An absolute value gets
// the path it resolves to when that is elsewhere than its lexical form
// (decision.PathForm), or Unresolvable when it cannot be resolved. A
// relative value is resolved against the request's absolute workdir, as
// the kernel would from there: Resolved is then always set (the value is
// anchored), relative to the workdir's resolved form when it stays below
// it, absolute when a link or ".." leads out. Without an absolute workdir
// a relative value stays unanchored (Resolved ""), which no scope but
// exact and any allows.
func Resolve(req *decision.Request) {
	workdir, base := "", ""
	if req.Workdir != nil && filepath.IsAbs(req.Workdir.Value) {
		workdir = decision.PathForm(req.Workdir.Value)
		if r, ok := Of(workdir); ok {
			base = r
		}
	}
	for i := range req.Dimensions {
		d := &req.Dimensions[i]
		switch {
		case d.IsShell() || !decision.IsPath(d.Value):
		case filepath.IsAbs(d.Value):
			r, ok := Of(d.Value)
			switch {
			case !ok:
				d.Resolved = Unresolvable
			case r != decision.PathForm(d.Value):
				d.Resolved = r
			}
		case workdir == "":
		case base == "":
			d.Resolved = Unresolvable // the workdir's own links loop
		default:
			d.Resolved = relativeTo(base, workdir+"/"+d.Value)
			if r, ok := Of(workdir + "/" + d.Value); ok {
				d.Anchored = r
			}
		}
	}
}

// relativeTo is p resolved, relative to base when it lies below it (or
// "."), else absolute; Unresolvable when it cannot be resolved.
func relativeTo(base, p string) string {
	r, ok := Of(p)
	switch {
	case !ok:
		return Unresolvable
	case r == base:
		return "."
	case base == "/":
		return r[1:]
	}
	if rel, ok := strings.CutPrefix(r, base+"/"); ok {
		return rel
	}
	return r
}

// Unresolvable is the resolved form of a path whose links cannot be
// followed (a loop, a directory that cannot be read): a string no scope
// but any covers, so that no allow covers the path but one of everything.
const Unresolvable = "\x00unresolvable"

// maxLinks bounds the links followed, as the kernel's ELOOP does.
const maxLinks = 40

// Of is the absolute path p with symlinks resolved: its longest existing
// leading part resolved (its "." and ".." taken as the kernel takes them,
// after each link; a dangling link followed to where it points), the rest
// appended and cleaned. False when a link loops or a part cannot be read.
func Of(p string) (string, bool) { return resolve(p, 0) }

func resolve(p string, links int) (string, bool) {
	parts := strings.Split(p, "/")
	for n := len(parts); n > 1; n-- {
		head := strings.Join(parts[:n], "/")
		fi, err := os.Lstat(head)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(append([]string{r}, parts[n:]...)...), true
		}
		// head exists but does not resolve: a dangling or looping link.
		if fi.Mode()&os.ModeSymlink == 0 || links >= maxLinks {
			return "", false
		}
		target, err := os.Readlink(head)
		if err != nil {
			return "", false
		}
		if !filepath.IsAbs(target) {
			// From the link's directory as spelled, left for the
			// recursion to resolve: filepath.Dir would clean a ".."
			// after a link lexically, where the kernel follows it.
			target = strings.Join(parts[:n-1], "/") + "/" + target
		}
		return resolve(strings.Join(append([]string{target}, parts[n:]...), "/"), links+1)
	}
	return filepath.Clean(p), true
}

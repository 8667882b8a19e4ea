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

// Resolve sets the Resolved path of each of req's dimensions whose value
// is an absolute path resolving elsewhere than its lexical form
// (decision.PathForm), or to Unresolvable when it cannot be resolved.
func Resolve(req *decision.Request) {
	for i := range req.Dimensions {
		d := &req.Dimensions[i]
		if !filepath.IsAbs(d.Value) {
			continue
		}
		r, ok := Of(d.Value)
		switch {
		case !ok:
			d.Resolved = Unresolvable
		case r != decision.PathForm(d.Value):
			d.Resolved = r
		}
	}
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
			target = filepath.Dir(head) + "/" + target
		}
		return resolve(strings.Join(append([]string{target}, parts[n:]...), "/"), links+1)
	}
	return filepath.Clean(p), true
}

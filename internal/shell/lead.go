package shell

import (
	"slices"
	"strings"
	"sync"
)

// leadWrappers are the wrappers a "commands starting with" scope looks
// past (protocol section 10): each runs the command its words name after
// its options, those in valued taking the next word, and a number of
// positional words (timeout's duration, taskset's mask).
var leadWrappers = sync.OnceValue(func() map[string]leadWrapper {
	return map[string]leadWrapper{
		"timeout": {[]string{"-s", "--signal", "-k", "--kill-after"}, 1},
		"nice":    {[]string{"-n", "--adjustment"}, 0},
		"nohup":   {nil, 0},
		"env":     {[]string{"-u", "--unset", "-C", "--chdir"}, 0},
		"stdbuf":  {[]string{"-i", "-o", "-e", "--input", "--output", "--error"}, 0},
		"setsid":  {nil, 0},
		"ionice":  {[]string{"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}, 0},
		"time":    {[]string{"-f", "--format", "-o", "--output"}, 0},
		"chrt":    {nil, 1},
		"taskset": {nil, 1},
	}
})

// leadWrapper is how a wrapper's words run: see leadWrappers.
type leadWrapper struct {
	valued     []string
	positional int
}

// subcommanded are programs that take options before a subcommand, some
// with a value that changes what the subcommand acts on (`git -C dir`,
// `make -C dir`): first words ending at one of those options would cover
// every subcommand.
var subcommanded = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"git": true, "go": true, "make": true, "cargo": true, "npm": true, "pnpm": true, "yarn": true, "docker": true,
		"podman": true, "kubectl": true, "gh": true, "helm": true, "terraform": true, "dotnet": true,
	}
})

// Lead is the words a "commands starting with" scope keeps of c: past
// the wrappers that run the command their words name (timeout 60, nice
// -n 5, env LANG=C), with their options, n words of the command they
// run. It is false when no such scope may be offered: a runner whose
// words a prefix cannot bound runs the command (sudo, xargs, find: a
// later word may start any command), env sets a variable that is not
// harmless, fewer than n words follow, or the words kept end at an
// option of a shell or of a program that takes a subcommand after its
// options (`git -C`, `bash -c`: what follows decides what runs). Words of other programs may end
// at an option: `rm -rf`, as a deny scope, covers every rm -rf.
func (c Command) Lead(n int) ([]string, bool) {
	ws, i := c.Words, 0
	for i < len(ws) {
		name := Name(ws[i])
		spec, ok := leadWrappers()[name]
		if !ok {
			if wrappers()[name] {
				return nil, false
			}
			break
		}
		for i++; i < len(ws); i++ {
			w := ws[i]
			if k, v, assign := strings.Cut(w, "="); name == "env" && assign && !strings.HasPrefix(w, "-") {
				if !harmless(k, v) {
					return nil, false
				}
				continue
			}
			if w == "--" {
				i++
				break
			}
			if len(w) < 2 || w[0] != '-' {
				break
			}
			if slices.Contains(spec.valued, w) {
				i++
			}
		}
		i += spec.positional
	}
	if len(ws)-i < n || (subcommanded()[Name(ws[i])] || isShell(Name(ws[i]))) && strings.HasPrefix(ws[i+n-1], "-") {
		return nil, false
	}
	return ws[:i+n], true
}

package policy

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/jsonnames"
	"github.com/askperm/askperm/internal/match"
	"github.com/askperm/askperm/internal/userfile"
)

// Policy is every rules file loaded: the rules in load order, and the
// verb and annotation policies when a file configures them.
type Policy struct {
	rules           []*Rule
	verbs           *verbs
	verbsFile       string
	annotations     []annotation
	annotationsFile string
	index           *index // built once every file is added
	// lazy compiles rules[i] (nil until then) for a policy from a cache.
	lazy *lazyRules
	// written is the files as written, for a cache of p; nil for a
	// policy from a cache.
	written *written
}

// Load reads the user's rules file (optional: "" or missing is none) and
// every named one (required), all user files, and combines them. At most
// one file may set [verbs], and one [[annotations]]. With cacheDir (""
// none), the compiled cache there of these very files is used when it
// can be, and written when it cannot; only for files the user owns.
func Load(user string, named []string, cacheDir string) (*Policy, error) {
	files := named
	if user != "" {
		files = append([]string{user}, named...)
	}
	// A cache, when there may be one, is looked up by the files' digests,
	// streamed: a process decided from it never holds the files.
	var cache string
	if cacheDir != "" {
		paths, digests, err := each(files, user != "", userfile.Digest)
		if err != nil {
			return nil, err
		}
		if len(paths) > 0 && ownAll(paths, os.Geteuid()) {
			key, name := cacheKey(paths, digests)
			cache = filepath.Join(cacheDir, name)
			if p := readCache(cache, key); p != nil {
				return p, nil
			}
		}
	}
	paths, contents, err := each(files, user != "", userfile.Read)
	if err != nil {
		return nil, err
	}
	p := &Policy{written: &written{}}
	c := newCompiler()
	for i, path := range paths {
		f, err := parseFile(c, path, contents[i])
		if err != nil {
			return nil, err
		}
		if err := p.add(f); err != nil {
			return nil, err
		}
	}
	p.buildIndex()
	if cache != "" {
		// Keyed by the contents parsed, whatever was digested before.
		digests := make([][sha256.Size]byte, len(contents))
		for i, b := range contents {
			digests[i] = sha256.Sum256(b)
		}
		key, _ := cacheKey(paths, digests)
		writeCache(cache, key, p)
	}
	return p, nil
}

// each is read of every file, and the paths read; the first (the user's
// own rules file, when optional) is left out when missing.
func each[T any](files []string, optional bool, read func(string) (T, error)) ([]string, []T, error) {
	var paths []string
	var out []T
	for i, path := range files {
		v, err := read(path)
		if i == 0 && optional && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		paths, out = append(paths, path), append(out, v)
	}
	return paths, out, nil
}

// ownAll reports whether the user euid owns every file of paths. The
// cache lives in the user's state, which the user's programs may write:
// a file another (root) keeps from them must not be decided from it.
func ownAll(paths []string, euid int) bool {
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != euid {
			return false
		}
	}
	return true
}

func (p *Policy) add(f *Policy) error {
	p.rules = append(p.rules, f.rules...)
	p.written.rules = append(p.written.rules, f.written.rules...)
	if f.verbs != nil {
		if p.verbs != nil {
			return fmt.Errorf("%s: [verbs] is set already by %s: only one rules file may set it", f.verbsFile, p.verbsFile)
		}
		p.verbs, p.verbsFile = f.verbs, f.verbsFile
		p.written.verbs = f.written.verbs
	}
	if f.annotations != nil {
		if p.annotations != nil {
			return fmt.Errorf("%s: [[annotations]] are set already by %s: only one rules file may set them", f.annotationsFile, p.annotationsFile)
		}
		p.annotations, p.annotationsFile = f.annotations, f.annotationsFile
		p.written.annotations = f.written.annotations
	}
	return nil
}

// Empty reports whether p says nothing of any request.
func (p *Policy) Empty() bool {
	return len(p.rules) == 0 && p.verbs == nil && p.annotations == nil
}

// ambiguousMessage is the deny of arguments that give a key in two
// spellings, or an execute_action tool's action in another than "action".
const ambiguousMessage = "the arguments spell a name two ways (case or Unicode folding), or action not as \"action\": the tool could read another spelling than askperm did"

// Opinions gives the opinion of every matching rule, in load order, then
// of the verb policy and of the annotation policy, abstentions left out.
// Arguments that name a key in two spellings ("action" and "Action") get
// a deny first: any key may be one a rule or the verb policy reads, and a
// server may read the other spelling (encoding/json folds case, the last
// one winning), so no reading of them can be trusted to be the server's.
func (p *Policy) Opinions(req *decision.Request) []Opinion {
	var ops []Opinion
	rule := func(v Verdict, source, name, message string) Opinion {
		return Opinion{Verdict: v, By: decision.FrontendRules, Cause: decision.CauseRule, Source: source, Name: name, Message: message}
	}
	if req.Arguments != nil && !jsonnames.Unambiguous(req.Arguments) {
		ops = append(ops, rule(Deny, "arguments", "arguments.spellings", ambiguousMessage))
	}
	args := newLazyArgs(req)
	check := func(r *Rule) {
		if v, parts := r.opinion(req, args); v != Abstain {
			o := rule(v, "rules", r.Name, r.Message)
			o.Commands = parts
			ops = append(ops, o)
		}
	}
	if p.index == nil {
		for _, r := range p.rules {
			check(r)
		}
	} else {
		for _, i := range p.index.candidates(args) {
			check(p.rule(int(i)))
		}
	}
	if p.verbs != nil {
		if v, branch := p.verbs.opinion(req); v != Abstain {
			message := ""
			if branch == "action" {
				message = ambiguousMessage
			}
			ops = append(ops, rule(v, "verbs", "verbs."+branch, message))
		}
	}
	for _, an := range p.annotations {
		if args.Field(match.Tool, an.tool) {
			o := rule(an.opinion(req.Annotations), "annotations", "annotations."+an.mode, "")
			o.NoSession = o.Verdict == Prompt && (an.mode == "prompt" || an.mode == "writes")
			ops = append(ops, o)
			break
		}
	}
	return ops
}

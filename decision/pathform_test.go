package decision

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

// A remembered exact deny of …/sub/.env is not bypassed by another
// spelling of the same path under an allowed prefix.
func TestExactCoversEverySpelling(t *testing.T) {
	deny := Scope{Match: "/home/a/proj/sub/.env", Kind: KindExact}
	allow := Scope{Match: "/home/a/proj/", Kind: KindPrefix}
	for _, v := range []string{"/home/a/proj/sub/./.env", "/home/a/proj//sub/.env", "/home/a/proj/sub/x/../.env"} {
		if !allow.Allows(Dimension{Value: v}) {
			t.Errorf("the prefix does not allow %q", v)
		}
		if !deny.Denies(Dimension{Value: v}) {
			t.Errorf("the exact deny does not cover %q", v)
		}
	}
}

// spell writes the clean path p, absolute or relative, another way that
// cleans to it: "." segments, doubled slashes, detours through a sibling and "..", a
// trailing slash.
func spell(rng *rand.Rand, p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var b strings.Builder
	for i, s := range segs {
		if i > 0 || path.IsAbs(p) {
			b.WriteString("/")
		}
		for range rng.IntN(3) {
			switch rng.IntN(3) {
			case 0:
				b.WriteString("./")
			case 1:
				if b.Len() > 0 { // a leading '/' would make it absolute
					b.WriteString("/")
				}
			default:
				b.WriteString("d" + string(rune('a'+rng.IntN(3))) + "/../")
			}
		}
		b.WriteString(s)
	}
	if rng.IntN(4) == 0 {
		b.WriteString("/")
	}
	return b.String()
}

// Paths and their spellings, absolute and relative: a deny covering one
// spelling of a path covers every spelling; an allow covers a spelling
// only when it covers the path it names (an exact allow only the same
// spelling), so no spelling reaches another file.
func TestScopesSeeOnePathForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 19))
	names := []string{"a", "b", ".env", "x.go", "..x", "s p"}
	for range 3000 {
		n := 1 + rng.IntN(4)
		segs := make([]string, n)
		for i := range segs {
			segs[i] = names[rng.IntN(len(names))]
		}
		p := strings.Join(segs, "/")
		if rng.IntN(2) == 0 {
			p = "/" + p
		}
		dir := path.Dir(p)
		scopes := []Scope{
			{Match: spell(rng, p), Kind: KindExact},
			{Match: spell(rng, dir) + "/", Kind: KindPrefix},
			{Match: dir + "/*", Kind: KindGlob},
			{Match: strings.TrimSuffix(dir, segs[n-1]) + "**", Kind: KindGlob},
		}
		for _, s := range scopes {
			denied := s.Denies(Dimension{Value: p})
			if s.Kind == KindExact && !denied {
				t.Fatalf("exact %q does not deny %q", s.Match, p)
			}
			for range 5 {
				v := spell(rng, p)
				d := Dimension{Value: v}
				if !path.IsAbs(v) {
					d.Resolved = PathForm(v) // anchored, no symlink
				}
				if denied && !s.Denies(d) {
					t.Fatalf("%s %q denies %q but not its spelling %q", s.Kind, s.Match, p, v)
				}
				if !s.Allows(d) {
					continue
				}
				if !s.Denies(Dimension{Value: p}) || s.Kind == KindExact && v != s.Match {
					t.Fatalf("%s %q allows %q, which names %q", s.Kind, s.Match, v, p)
				}
			}
		}
	}
}

// An allow needs both the value and its resolved path; a deny either.
func TestAllowsNarrowDeniesWide(t *testing.T) {
	in := Scope{Match: "/home/a/proj/", Kind: KindPrefix}
	escaped := Dimension{Value: "/home/a/proj/lnk/.bashrc", Resolved: "/home/a/.bashrc"}
	if in.Allows(escaped) {
		t.Error("a prefix allows a path resolving outside it")
	}
	if !(Scope{Match: "/home/a/.bashrc", Kind: KindExact}).Denies(escaped) {
		t.Error("an exact deny of the resolved path does not cover its symlinked spelling")
	}
	if !in.Denies(escaped) || !in.Allows(Dimension{Value: "/home/a/proj/x"}) {
		t.Error("a deny of the lexical path, or an allow of a path without symlink, fails")
	}
}

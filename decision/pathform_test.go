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

// spell writes the clean absolute path p another way that cleans to it:
// "." segments, doubled slashes, detours through a sibling and "..", a
// trailing slash.
func spell(rng *rand.Rand, p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var b strings.Builder
	for _, s := range segs {
		b.WriteString("/")
		for range rng.IntN(3) {
			switch rng.IntN(3) {
			case 0:
				b.WriteString("./")
			case 1:
				b.WriteString("/")
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

// Paths and their spellings: a scope of any path kind covering one
// spelling of a path covers every spelling, so a deny on one spelling
// covers all, and an allow's verdict does not hang on the spelling.
func TestScopesSeeOnePathForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 19))
	names := []string{"a", "b", ".env", "x.go", "..x", "s p"}
	for range 2000 {
		n := 1 + rng.IntN(4)
		segs := make([]string, n)
		for i := range segs {
			segs[i] = names[rng.IntN(len(names))]
		}
		p := "/" + strings.Join(segs, "/")
		scopes := []Scope{
			{Match: spell(rng, p), Kind: KindExact},
			{Match: spell(rng, path.Dir(p)) + "/", Kind: KindPrefix},
			{Match: path.Dir(p) + "/*", Kind: KindGlob},
			{Match: "/" + segs[0] + "/**", Kind: KindGlob},
		}
		for _, s := range scopes {
			want := s.Covers(p)
			if s.Kind == KindExact && !want {
				t.Fatalf("exact %q does not cover %q", s.Match, p)
			}
			for range 5 {
				v := spell(rng, p)
				if got := s.Denies(Dimension{Value: v}); got != want {
					t.Fatalf("%s %q: covers %q %v, but its spelling %q %v", s.Kind, s.Match, p, want, v, got)
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

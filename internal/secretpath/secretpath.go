// Package secretpath says whether a path names a secret as the model
// reviewer's rubric lists them (keys, tokens, passwords, .env files, SSH or
// cloud credentials, browser profiles), so that code, not only a model,
// keeps such paths from automatic allows: the review guard and suggested
// rules.
package secretpath

import (
	"path"
	"strings"
)

// names are the path elements, lower-cased, that hold or are secrets;
// prefixes and suffixes those that start or end so.
var (
	names = []string{
		".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
		".docker", ".kube", ".azure", ".gcloud", "gcloud", ".password-store", ".vault-token",
		".mozilla", "firefox", "google-chrome", "chromium", "bravesoftware", "chrome",
		"keychains", ".pgpass", ".my.cnf", "credentials", "secrets",
	}
	prefixes = []string{".env", "id_", "credentials", "secret", "token", "password"}
	suffixes = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".asc", ".gpg", "_rsa", "_ed25519", "_ecdsa", "_dsa"}
)

// Is reports whether p, a path (absolute or relative, '/'-separated), has
// an element that names a secret: any folder or file of the lists, in
// any case. It errs wide: a file named token.go is a secret here.
func Is(p string) bool {
	for _, e := range strings.Split(path.Clean(p), "/") {
		e = strings.ToLower(e)
		for _, n := range names {
			if e == n {
				return true
			}
		}
		for _, s := range prefixes {
			if strings.HasPrefix(e, s) {
				return true
			}
		}
		for _, s := range suffixes {
			if strings.HasSuffix(e, s) {
				return true
			}
		}
	}
	return false
}

package team

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/nats-io/nkeys"
)

// Config is the resolved [team] section of config.toml.
type Config struct {
	// URL is the NATS server: nats://host:port, or tls://host:port for TLS.
	URL string
	// Creds is a NATS credentials file (JWT and seed) or an nkey seed
	// file; "" connects without credentials.
	Creds string
	// Host is this machine's name in subjects and keys.
	Host string
	// Approvers are the NKey user public keys whose answers this machine
	// accepts. Empty, a host accepts none: the team frontend refuses.
	Approvers []string
	// Prefix prefixes every subject; its upper-case form every stream and
	// bucket.
	Prefix string
	// Replicas is the replica count of the streams and buckets the
	// approver creates.
	Replicas int
	// Key is the approver's signing key file.
	Key string
}

// Defaults of Config.
const (
	DefaultPrefix   = "askperm"
	DefaultReplicas = 1
	// KeyFile is the approver key's file name in the state directory.
	KeyFile = "team.nk"
)

// isToken says whether s is 1 to max bytes that each pass ok: a subject
// token with no dot, wildcard or space. (Not a regexp: compiling one at
// start-up would cost every askperm run, team mode or not.)
func isToken(s string, max int, ok func(byte) bool) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func lowerDigitDash(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func hostByte(c byte) bool { return lowerDigitDash(c) || 'A' <= c && c <= 'Z' }

// maxReplicas is JetStream's largest replica count.
const maxReplicas = 5

// Check checks every field of c and names the first bad one by its key.
func (c Config) Check() error {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return errors.New("url: missing (nats://host:4222 or tls://host:4222)")
	case err != nil:
		return fmt.Errorf("url: %w", err)
	case u.Scheme != "nats" && u.Scheme != "tls":
		return fmt.Errorf("url: scheme %q is neither nats nor tls", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("url: %q names no host", c.URL)
	case u.User != nil:
		return errors.New("url: credentials belong in creds, not in the url")
	}
	if err := CheckHost(c.Host); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	if !isToken(c.Prefix, 32, lowerDigitDash) {
		return fmt.Errorf("prefix: %q is not 1 to 32 of a-z, 0-9, _ and -", c.Prefix)
	}
	if c.Replicas < 1 || c.Replicas > maxReplicas {
		return fmt.Errorf("replicas: %d is not between 1 and %d", c.Replicas, maxReplicas)
	}
	for i, k := range c.Approvers {
		if !nkeys.IsValidPublicUserKey(k) {
			return fmt.Errorf("approvers[%d]: %q is not an NKey user public key (U...; askperm inbox key prints one)", i, k)
		}
		if slices.Contains(c.Approvers[:i], k) {
			return fmt.Errorf("approvers[%d]: %q listed twice", i, k)
		}
	}
	return nil
}

// CheckHost checks a host name: it is a subject token and a key part.
func CheckHost(h string) error {
	if !isToken(h, 64, hostByte) {
		return fmt.Errorf("%q is not 1 to 64 of A-Z, a-z, 0-9, _ and -", h)
	}
	return nil
}

// Trusts says whether k is one of the approvers.
func (c Config) Trusts(k string) bool { return slices.Contains(c.Approvers, k) }

// ErrNoApprovers is team mode refusing a host that trusts nobody.
var ErrNoApprovers = errors.New("[team] approvers is empty, so no answer could be accepted: list the approvers' public keys (askperm inbox key prints one)")

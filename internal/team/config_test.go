package team

import (
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

// validConfig is a Config that passes Check, trusting approvers.
func validConfig(approvers ...string) Config {
	return Config{URL: "nats://127.0.0.1:4222", Host: "ci-1", Prefix: DefaultPrefix, Replicas: 1, Approvers: approvers}
}

func userKey(t testing.TB) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func TestConfigCheck(t *testing.T) {
	k := PublicKey(userKey(t))
	acct, _ := nkeys.CreateAccount()
	acctPub, _ := acct.PublicKey()
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" passes
	}{
		{"valid", func(*Config) {}, ""},
		{"tls url", func(c *Config) { c.URL = "tls://nats.example:4222" }, ""},
		{"cluster replicas", func(c *Config) { c.Replicas = 3 }, ""},
		{"no url", func(c *Config) { c.URL = "" }, "url: missing"},
		{"http url", func(c *Config) { c.URL = "http://h:4222" }, `url: scheme "http"`},
		{"url without host", func(c *Config) { c.URL = "nats://" }, "names no host"},
		{"url with password", func(c *Config) { c.URL = "nats://a:b@h:4222" }, "credentials belong in creds"},
		{"host with a dot", func(c *Config) { c.URL, c.Host = "nats://h:1", "a.b" }, `host: "a.b"`},
		{"host with a wildcard", func(c *Config) { c.Host = "*" }, `host: "*"`},
		{"host with >", func(c *Config) { c.Host = ">" }, `host: ">"`},
		{"empty host", func(c *Config) { c.Host = "" }, `host: ""`},
		{"long host", func(c *Config) { c.Host = strings.Repeat("h", 65) }, "host:"},
		{"upper-case prefix", func(c *Config) { c.Prefix = "Askperm" }, `prefix: "Askperm"`},
		{"prefix with a dot", func(c *Config) { c.Prefix = "a.b" }, "prefix:"},
		{"empty prefix", func(c *Config) { c.Prefix = "" }, "prefix:"},
		{"no replicas", func(c *Config) { c.Replicas = 0 }, "replicas: 0"},
		{"too many replicas", func(c *Config) { c.Replicas = 6 }, "replicas: 6"},
		{"approver not a key", func(c *Config) { c.Approvers = []string{"alice"} }, `approvers[0]: "alice" is not an NKey user public key`},
		{"approver an account key", func(c *Config) { c.Approvers = []string{acctPub} }, "approvers[0]:"},
		{"approver twice", func(c *Config) { c.Approvers = []string{k, k} }, "approvers[1]:"},
	} {
		c := validConfig(k)
		tc.edit(&c)
		err := c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Every host Check accepts is one subject token: no dot, no wildcard, no
// space, so no host can reach another's subjects or keys.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{"ci-1", "a.b", "*", ">", "a b", "", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if CheckHost(h) != nil {
			return
		}
		if strings.ContainsAny(h, ".*> \t\r\n") || h == "" || len(h) > 64 {
			t.Fatalf("CheckHost accepted %q", h)
		}
		n := Names{DefaultPrefix}
		if got, ok := n.HostOfSubject(n.RequestSubject(h)); !ok || got != h {
			t.Fatalf("HostOfSubject(RequestSubject(%q)) = %q, %v", h, got, ok)
		}
	})
}

func userKeyAccount() ([]byte, error) {
	kp, err := nkeys.CreateAccount()
	if err != nil {
		return nil, err
	}
	return kp.Seed()
}

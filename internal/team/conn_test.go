package team

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A host authenticates with an nkey seed file; a server that knows
// another key refuses it; a file anyone else can read is refused before
// any connection.
func TestConnectWithSeedFile(t *testing.T) {
	host, other := userKey(t), userKey(t)
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Nkeys: []*server.NkeyUser{{Nkey: PublicKey(host)}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the server did not start")
	}
	dir := t.TempDir()
	seedFile := func(name string, kp interface{ Seed() ([]byte, error) }, mode os.FileMode) string {
		seed, _ := kp.Seed()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, append(seed, '\n'), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	c := validConfig()
	c.URL = s.ClientURL()
	ctx := context.Background()

	c.Creds = seedFile("host.nk", host, 0o600)
	nc, err := Connect(ctx, c, HostInbox(c.Host))
	if err != nil {
		t.Fatalf("the host's seed: %v", err)
	}
	nc.Close()
	c.Creds = seedFile("other.nk", other, 0o600)
	if _, err := Connect(ctx, c, HostInbox(c.Host)); err == nil || !strings.Contains(err.Error(), "Authorization") {
		t.Errorf("another seed: %v", err)
	}
	c.Creds = seedFile("open.nk", host, 0o644)
	if _, err := Connect(ctx, c, HostInbox(c.Host)); err == nil || !strings.Contains(err.Error(), "unsafe permissions") {
		t.Errorf("a seed others may read: %v", err)
	}
	c.Creds = filepath.Join(dir, "junk")
	os.WriteFile(c.Creds, []byte("hello\n"), 0o600)
	if _, err := Connect(ctx, c, HostInbox(c.Host)); err == nil || !strings.Contains(err.Error(), "neither a NATS .creds file nor an nkey user seed") {
		t.Errorf("junk: %v", err)
	}
}

// A .creds file (a user JWT and its seed) is told from a seed file by
// its content.
func TestCredentialsCredsFile(t *testing.T) {
	kp := userKey(t)
	seed, _ := kp.Seed()
	creds := "-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5In0.e30.c2ln\n------END NATS USER JWT------\n\n" +
		"-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"
	p := filepath.Join(t.TempDir(), "host.creds")
	if err := os.WriteFile(p, []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	opt, err := credentials(p)
	if err != nil || opt == nil {
		t.Fatalf("credentials: %v", err)
	}
	if opt, err := credentials(""); opt != nil || err != nil {
		t.Errorf("no creds: %v, %v", opt, err)
	}
}

// Ignored answers are said and kept one by one up to maxIgnored, then
// counted.
func TestIgnoreBounded(t *testing.T) {
	var said []string
	r := &request{}
	for i := range maxIgnored + 5 {
		r.ignore(errorf("answer %d\x1b[31m", i), func(s string) { said = append(said, s) })
	}
	all := r.ignoredAll()
	if len(all) != maxIgnored+1 || all[maxIgnored] != "and 5 more" || len(said) != maxIgnored+1 {
		t.Errorf("kept %q, said %q", all, said)
	}
	for _, s := range all {
		if strings.ContainsRune(s, '\x1b') {
			t.Errorf("an escape reached the audit log: %q", s)
		}
	}
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// Package natstest runs real NATS servers in-process for tests of team mode:
// one server, or a three-node JetStream cluster whose nodes can be killed
// and restarted. Every server loads docs/team/nats.conf with its host and
// approver blocks filled in by generated nkey users, so the tests exercise
// the permissions a team deploys. Test-only: imported from _test.go files,
// never from code the askperm binary links.
package natstest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// The placeholders of docs/team/nats.conf that a team fills in per block.
const (
	hostName       = "alpha"
	hostKey        = "HOST_PUBLIC_KEY"
	approverKey    = "APPROVER_PUBLIC_KEY"
	setupKey       = "SETUP_PUBLIC_KEY"
	hostBlock      = "# --- host block"
	approverBlock  = "# --- approver block"
	endBlockMarker = "# --- end of "
)

// User is one nkey user of the team: a host (Name is its [team] host name)
// or an approver (Name is its public key).
type User struct {
	Name     string
	Public   string // the nkey's public key, U...
	SeedFile string // the seed, one line, mode 0600, as askperm reads a creds file
}

// InboxPrefix is the reply prefix the user's permissions allow it to read.
func (u User) InboxPrefix() string { return "_INBOX_" + u.Name }

// Team is the users a server is configured with.
type Team struct {
	Hosts     []User
	Approvers []User
	// Setup is the set-up user, who alone may create and update the
	// streams (SetUp); its inbox prefix is team.SetupInbox.
	Setup User
}

// NewTeam makes an nkey user for each host name and n approvers, writing
// their seed files under a temporary directory.
func NewTeam(t testing.TB, hosts []string, approvers int) *Team {
	t.Helper()
	tm, dir := &Team{}, t.TempDir()
	for _, h := range hosts {
		tm.Hosts = append(tm.Hosts, newUser(t, dir, h))
	}
	for range approvers {
		tm.Approvers = append(tm.Approvers, newUser(t, dir, ""))
	}
	tm.Setup = newUser(t, dir, "setup")
	return tm
}

// newUser makes an nkey user; an empty name means an approver, named by its
// public key.
func newUser(t testing.TB, dir, name string) User {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		name = pub
	}
	f := filepath.Join(dir, name+".nk")
	if err := os.WriteFile(f, append(seed, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return User{Name: name, Public: pub, SeedFile: f}
}

// Config is docs/team/nats.conf with its host block repeated for every host
// of the team and its approver block for every approver, the placeholders
// replaced as the documentation tells a team to.
func (tm *Team) Config(t testing.TB) string {
	t.Helper()
	doc, err := os.ReadFile(DocConfig())
	if err != nil {
		t.Fatal(err)
	}
	conf := string(doc)
	conf = replaceBlock(t, conf, hostBlock, func(block string) string {
		var b strings.Builder
		for _, h := range tm.Hosts {
			r := strings.NewReplacer(hostKey, h.Public, hostName, h.Name)
			b.WriteString(r.Replace(block))
		}
		return b.String()
	})
	conf = replaceBlock(t, conf, approverBlock, func(block string) string {
		var b strings.Builder
		for _, a := range tm.Approvers {
			b.WriteString(strings.ReplaceAll(block, approverKey, a.Public))
		}
		return b.String()
	})
	return strings.ReplaceAll(conf, setupKey, tm.Setup.Public)
}

// replaceBlock replaces the lines from the one holding start to the end
// marker that follows it (both included) by expand(those lines).
func replaceBlock(t testing.TB, conf, start string, expand func(string) string) string {
	t.Helper()
	i := strings.Index(conf, start)
	if i < 0 {
		t.Fatalf("natstest: %s: no %q", DocConfig(), start)
	}
	i = strings.LastIndexByte(conf[:i], '\n') + 1
	j := strings.Index(conf[i:], endBlockMarker)
	if j < 0 {
		t.Fatalf("natstest: %s: %q has no end marker", DocConfig(), start)
	}
	j += i
	j += strings.IndexByte(conf[j:], '\n') + 1
	return conf[:i] + expand(conf[i:j]) + conf[j:]
}

// DocConfig is the path of docs/team/nats.conf in this module.
func DocConfig() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "team", "nats.conf")
}

// Connect connects u to the servers at url (a comma-separated list) with its
// seed file and inbox prefix, as askperm does; errs receives the connection's
// asynchronous errors (permission violations among them) when not nil.
func (u User) Connect(t testing.TB, url string, errs chan<- error, opts ...nats.Option) *nats.Conn {
	t.Helper()
	auth, err := nats.NkeyOptionFromSeed(u.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	base := []nats.Option{
		auth,
		nats.CustomInboxPrefix(u.InboxPrefix()),
		nats.Name(u.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50 * time.Millisecond),
	}
	if errs != nil {
		base = append(base, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}))
	}
	nc, err := nats.Connect(url, append(base, opts...)...)
	if err != nil {
		t.Fatalf("natstest: connect %s as %s: %v", url, u.Name, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// String names the user in test messages.
func (u User) String() string {
	if u.Name == u.Public {
		return fmt.Sprintf("approver %.8s", u.Public)
	}
	return fmt.Sprintf("host %s", u.Name)
}

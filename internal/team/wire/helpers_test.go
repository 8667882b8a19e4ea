package wire

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/form"
	"github.com/askperm/askperm/internal/team"
)

// bridgeEnv makes this test binary the bridge: the team frontend under
// test runs it as it runs askperm-team.
const bridgeEnv = "ASKPERM_TEST_WIRE_BRIDGE"

// self is this test binary, the bridge of the frontends under test.
var self string

func TestMain(m *testing.M) {
	if os.Getenv(bridgeEnv) == "1" {
		if err := Bridge(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var err error
	if self, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(bridgeEnv, "1")
	os.Exit(m.Run())
}

// testRequest has an id, a session, a workdir, two grants and a dimension
// with two scopes.
const testRequest = `{"id":"r1","action":"write","session_id":"s1","workdir":{"value":"/p"},` +
	`"dimensions":[{"name":"path","value":"/p/a","scopes":[{"label":"file","match":"/p/a"},{"label":"dir","match":"/p/","kind":"prefix"}]}],` +
	`"grants":[{"name":"fs.write"},{"name":"fs.create"}]}`

// validConfig is a Config that passes Check, trusting approvers, whose
// bridge is this test binary.
func validConfig(approvers ...string) team.Config {
	return team.Config{URL: "nats://127.0.0.1:4222", Host: "ci-1", Prefix: team.DefaultPrefix, Replicas: 1, Approvers: approvers, Program: self}
}

func userKey(t testing.TB) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

func parse(t testing.TB, raw string) *decision.Request {
	t.Helper()
	req, err := decision.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// decide is the decision an approver's form builds from a.
func decide(t testing.TB, req *decision.Request, a form.Answer) decision.Decision {
	t.Helper()
	f := form.New(req, form.Options{})
	full := f.Defaults()
	full.Choice, full.Message = a.Choice, a.Message
	if a.Scopes != nil {
		full.Scopes = a.Scopes
	}
	if a.Grants != nil {
		full.Grants = a.Grants
	}
	if a.Lifetime != "" {
		full.Lifetime = a.Lifetime
	}
	d, err := f.Decide(full, decision.FrontendTeam, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func sign(t testing.TB, kp nkeys.KeyPair, d decision.Decision) []byte {
	t.Helper()
	b, err := team.Sign(kp, d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

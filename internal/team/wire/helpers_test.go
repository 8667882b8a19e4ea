package wire

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/askperm/askperm/decision"
	"github.com/askperm/askperm/internal/team"
	"github.com/askperm/askperm/internal/team/teamtest"
)

// bridgeEnv makes this test binary askperm-team's hidden commands: the
// team frontend and team memory under test run it as askperm-team.
const bridgeEnv = "ASKPERM_TEST_WIRE_BRIDGE"

// self is this test binary, the bridge of the frontends under test.
var self string

func TestMain(m *testing.M) {
	if os.Getenv(bridgeEnv) == "1" && len(os.Args) == 2 {
		ctx := context.Background()
		var err error
		switch os.Args[1] {
		case "bridge":
			err = Bridge(ctx, os.Stdin, os.Stdout)
		case "rules-fetch":
			err = RulesFetch(ctx, os.Stdin, os.Stdout)
		case "audit-publish":
			err = AuditPublish(ctx, os.Stdin)
		default:
			err = fmt.Errorf("no command %q", os.Args[1])
		}
		if err != nil {
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

// testRequest, parse, decide and userKey are teamtest's.
const testRequest = teamtest.Request

var (
	parse, decide = teamtest.Parse, teamtest.Decide
	userKey       = teamtest.UserKey
)

// validConfig is a Config that passes Check, trusting approvers, whose
// bridge is this test binary.
func validConfig(approvers ...string) team.Config {
	return team.Config{URL: "nats://127.0.0.1:4222", Host: "ci-1", Prefix: team.DefaultPrefix, Replicas: 1, Approvers: approvers, Program: self}
}

// sign is kp's answer d to the pending request p.
func sign(t testing.TB, kp nkeys.KeyPair, d decision.Decision, p Pending) []byte {
	t.Helper()
	b, err := team.Sign(kp, d, p.Host, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

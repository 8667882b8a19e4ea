package teamcmd

import (
	"net"
	"strings"
	"testing"

	"github.com/askperm/askperm/internal/cli"
)

func TestInboxWebRefusesNonLoopbackWithoutTLS(t *testing.T) {
	for args, want := range map[*[]string]string{
		&[]string{"inbox", "--web", "0.0.0.0:8765"}:                          "not a loopback address",
		&[]string{"inbox", "--web", "192.0.2.1:8765"}:                        "not a loopback address",
		&[]string{"inbox", "--web=:8765"}:                                    "not a loopback address",
		&[]string{"inbox", "--web", "127.0.0.1:8765", "--tls-cert", "c.pem"}: "give both --tls-cert and --tls-key",
	} {
		code, _, stderr := invoke(t, "", nil, (*args)...)
		if code != cli.ExitUsage || !strings.HasPrefix(stderr, "askperm") || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

func TestDefaultOrigin(t *testing.T) {
	for _, tc := range []struct {
		addr string
		tls  bool
		want string
	}{
		{"127.0.0.1:8765", false, "http://localhost:8765"},
		{"[::1]:8765", false, "http://localhost:8765"},
		{"192.0.2.1:443", true, "https://192.0.2.1:443"},
	} {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := defaultOrigin(a, tc.tls); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.addr, got, tc.want)
		}
	}
}

package teamcmd

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// lockedBuffer is a bytes.Buffer written by one goroutine and read by
// another.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestInboxWebServesAndPrintsThePairingLink(t *testing.T) {
	as, _ := startTeam(t, 1)
	errOut := &lockedBuffer{}
	s := cli.Streams{ErrOut: errOut, Getenv: func(string) string { return "" }}
	o := &inboxOptions{config: as[0].config, stateDir: as[0].dir, web: "127.0.0.1:0"}
	set, err := inboxSettings(s, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := connectApprover(ctx, set, func(err error) { t.Log(err) })
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serveWeb(ctx, s, o, a, false) }()
	link := regexp.MustCompile(`http://localhost:\d+/pair/[A-Za-z0-9]+`)
	var pair string
	for deadline := time.Now().Add(10 * time.Second); pair == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pair = link.FindString(errOut.String())
	}
	if pair == "" {
		t.Fatalf("no pairing link: %s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "█") && !strings.Contains(errOut.String(), "▀") {
		t.Errorf("no QR code: %s", errOut.String())
	}
	r, err := http.Get(pair)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || !strings.Contains(string(body), "Register a passkey") {
		t.Errorf("the pairing page: %d %s", r.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serving ended with %v", err)
	}
}

// ipv6Loopback skips a test on a host without ::1.
func ipv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	ln.Close()
}

func TestListenWebHoldsBothLoopbacks(t *testing.T) {
	ipv6Loopback(t)
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		lns, origin, err := listenWeb(addr, "", false)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		port := lns[0].Addr().(*net.TCPAddr).Port
		if len(lns) != 2 || !strings.HasPrefix(origin, "http://localhost:") {
			t.Errorf("%s: %d listeners, origin %s", addr, len(lns), origin)
		}
		for _, other := range []string{"127.0.0.1", "::1"} {
			if ln, err := net.Listen("tcp", net.JoinHostPort(other, strconv.Itoa(port))); err == nil {
				ln.Close()
				t.Errorf("%s: %s:%d left for another program", addr, other, port)
			}
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
}

func TestListenWebRefusesWhenTheOtherLoopbackIsTaken(t *testing.T) {
	ipv6Loopback(t)
	impostor, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	port := strconv.Itoa(impostor.Addr().(*net.TCPAddr).Port)
	for _, origin := range []string{"", "http://localhost:" + port, "https://inbox.localhost:" + port} {
		lns, _, err := listenWeb("127.0.0.1:"+port, origin, false)
		for _, ln := range lns {
			ln.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "both loopback") {
			t.Errorf("origin %q: the impostor on [::1]:%s was not noticed: %v", origin, port, err)
		}
	}
	// An origin elsewhere (a tunnel's) needs only the address given.
	lns, _, err := listenWeb("127.0.0.1:"+port, "https://inbox.example.org", true)
	for _, ln := range lns {
		ln.Close()
	}
	if err != nil || len(lns) != 1 {
		t.Errorf("a tunnel's origin: %d listeners, %v", len(lns), err)
	}
}

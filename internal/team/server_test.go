package team

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// testServer is a NATS server with JetStream, in this process, without
// authentication, that can be stopped and started again on its port and
// store.
type testServer struct {
	t    testing.TB
	s    *server.Server
	port int
	dir  string
}

func startServer(t testing.TB) *testServer {
	t.Helper()
	ts := &testServer{t: t, port: freePort(t), dir: t.TempDir()}
	ts.start()
	t.Cleanup(ts.stop)
	return ts
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (ts *testServer) start() {
	ts.t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: ts.port, JetStream: true, StoreDir: ts.dir, NoLog: true, NoSigs: true})
	if err != nil {
		ts.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		ts.t.Fatal("the NATS server did not start")
	}
	ts.s = s
}

func (ts *testServer) stop() {
	if ts.s != nil {
		ts.s.Shutdown()
		ts.s.WaitForShutdown()
		ts.s = nil
	}
}

func (ts *testServer) url() string { return "nats://127.0.0.1:" + strconv.Itoa(ts.port) }

// jetStream connects as c's host would and returns its JetStream.
func jetStream(t testing.TB, c Config) jetstream.JetStream {
	t.Helper()
	nc, err := Connect(context.Background(), c, HostInbox(c.Host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

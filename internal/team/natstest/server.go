package natstest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// readyWithin bounds how long a server may take to accept clients or a
// cluster to elect its JetStream leader before the test fails.
const readyWithin = 30 * time.Second

// Server is one NATS server with JetStream.
type Server struct {
	URL  string
	t    testing.TB
	tm   *Team
	dir  string
	port int
	srv  *server.Server // nil while shut down
}

// StartServer starts one server from the team's filled-in
// docs/team/nats.conf, on a free loopback port with its store in a
// temporary directory; it is shut down when the test ends.
func StartServer(t testing.TB, tm *Team) *Server {
	t.Helper()
	s := &Server{t: t, tm: tm, dir: t.TempDir(), port: server.RANDOM_PORT}
	t.Cleanup(func() {
		if s.srv != nil {
			s.srv.Shutdown()
		}
	})
	s.run()
	s.port = s.srv.Addr().(*net.TCPAddr).Port
	s.URL = s.srv.ClientURL()
	return s
}

// Shutdown stops the server (a test of the server going away); its URL
// then refuses connections until Restart.
func (s *Server) Shutdown() {
	s.t.Helper()
	if s.srv == nil {
		s.t.Fatal("natstest: server already down")
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

// Restart starts the server again on its port and store: streams, buckets
// and messages are back, and clients reconnect.
func (s *Server) Restart() {
	s.t.Helper()
	if s.srv != nil {
		s.t.Fatal("natstest: server is running")
	}
	s.run()
}

func (s *Server) run() {
	s.t.Helper()
	opts := options(s.t, s.tm, s.dir)
	opts.Port = s.port
	s.srv = start(s.t, opts)
}

// options loads the filled-in config written to dir and moves the server to
// the loopback interface, a free port and dir's store.
func options(t testing.TB, tm *Team, dir string) *server.Options {
	t.Helper()
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(tm.Config(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("natstest: %s: %v", DocConfig(), err)
	}
	opts.Host = "127.0.0.1"
	opts.Port = server.RANDOM_PORT
	opts.JetStream = true // as -js on the command line
	opts.StoreDir = filepath.Join(dir, "store")
	opts.NoSigs = true
	opts.NoLog = true
	return opts
}

func start(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("natstest: new server: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(readyWithin) {
		srv.Shutdown()
		t.Fatalf("natstest: server %s not ready", opts.ServerName)
	}
	return srv
}

// Cluster is a three-node JetStream cluster on loopback, every node loading
// the same filled-in config with its own name, ports and store.
type Cluster struct {
	t     testing.TB
	tm    *Team
	nodes []*node
}

type node struct {
	name        string
	dir         string
	clientPort  int
	clusterPort int
	srv         *server.Server // nil while killed
}

// StartCluster starts three nodes, n1..n3, and waits for the JetStream
// meta leader; they are shut down when the test ends.
func StartCluster(t testing.TB, tm *Team) *Cluster {
	t.Helper()
	c := &Cluster{t: t, tm: tm}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if n.srv != nil {
				n.srv.Shutdown()
			}
		}
	})
	for i := range 3 {
		n := &node{name: fmt.Sprintf("n%d", i+1), dir: t.TempDir(),
			clientPort: server.RANDOM_PORT, clusterPort: server.RANDOM_PORT}
		c.nodes = append(c.nodes, n)
		c.run(n)
	}
	c.waitReady()
	return c
}

// URL lists every node's client URL, for a client that fails over.
func (c *Cluster) URL() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.clientPort))
	}
	return strings.Join(urls, ",")
}

// Kill shuts the named node down (n1, n2, n3, or a stream leader's name
// from StreamInfo.Cluster.Leader).
func (c *Cluster) Kill(name string) {
	c.t.Helper()
	n := c.node(name)
	if n.srv == nil {
		c.t.Fatalf("natstest: node %s already down", name)
	}
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	n.srv = nil
}

// Restart starts a killed node again on its ports and store, and waits
// until the cluster has a current JetStream meta leader.
func (c *Cluster) Restart(name string) {
	c.t.Helper()
	n := c.node(name)
	if n.srv != nil {
		c.t.Fatalf("natstest: node %s is running", name)
	}
	c.run(n)
	c.waitReady()
}

func (c *Cluster) node(name string) *node {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	c.t.Fatalf("natstest: no node %q", name)
	return nil
}

// run starts n with routes to every other node started so far, and records
// the ports it got so a restart reuses them.
func (c *Cluster) run(n *node) {
	c.t.Helper()
	opts := options(c.t, c.tm, n.dir)
	opts.ServerName = n.name
	opts.Port = n.clientPort
	opts.Cluster.Name = "askperm"
	opts.Cluster.Host = "127.0.0.1"
	opts.Cluster.Port = n.clusterPort
	var routes []string
	for _, o := range c.nodes {
		if o != n && o.clusterPort > 0 {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.clusterPort))
		}
	}
	opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	n.srv = start(c.t, opts)
	n.clientPort = n.srv.Addr().(*net.TCPAddr).Port
	n.clusterPort = n.srv.ClusterAddr().Port
}

// waitReady waits until every running node is current with the JetStream
// meta group and one of them leads it.
func (c *Cluster) waitReady() {
	c.t.Helper()
	for end := time.Now().Add(readyWithin); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if c.ready() {
			return
		}
	}
	c.t.Fatal("natstest: the cluster elected no JetStream meta leader")
}

func (c *Cluster) ready() bool {
	leader := false
	for _, n := range c.nodes {
		if n.srv == nil {
			continue
		}
		if !n.srv.JetStreamIsCurrent() {
			return false
		}
		leader = leader || n.srv.JetStreamIsLeader()
	}
	return leader
}

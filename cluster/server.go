package cluster

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a NATS server run in this process, with JetStream, for a
// cluster on one machine and for tests: `luarun --cluster embedded`.
type Server struct {
	ns  *server.Server
	dir string
}

// StartServer starts a NATS server listening on addr ("127.0.0.1:4222";
// port 0 picks a free one), with JetStream kept in memory and a
// temporary directory.
func StartServer(addr string) (*Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("cluster: server address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("cluster: server port %q: %w", port, err)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	dir, err := os.MkdirTemp("", "luarun-nats")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	ns, err := server.NewServer(&server.Options{Host: host, Port: p, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: start a NATS server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: the NATS server on %s did not start", addr)
	}
	return &Server{ns: ns, dir: dir}, nil
}

// URL is the server's client URL (nats://host:port).
func (s *Server) URL() string { return s.ns.ClientURL() }

// Close stops the server.
func (s *Server) Close() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	os.RemoveAll(s.dir)
}

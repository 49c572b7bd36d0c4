package cluster

// The embedded NATS server (--cluster embedded): for a cluster on one
// machine, for tests, and for a small cluster whose first node serves
// the others. It authenticates as its ServerConfig says — a user and
// password, a token, or an nkey — and speaks TLS with a certificate,
// verifying clients' certificates when given a CA: the same settings a
// node's client side takes (Config), so one set of flags configures
// both. Without any, it takes any client (luarun warns: see auth.go).

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Server is a NATS server run in this process, with JetStream.
type Server struct {
	ns  *server.Server
	dir string
	tls bool
}

// ServerConfig says how the embedded server listens and whom it takes.
type ServerConfig struct {
	// Addr is where it listens: "127.0.0.1:4222"; port 0 picks a free one.
	Addr string
	// User and Password: the one user it takes. Token: the token it
	// takes instead. NKeySeedFile: a file holding the user nkey's seed
	// (its public key is the user it takes): one of the three, or none.
	User, Password, Token, NKeySeedFile string
	// CertFile and KeyFile: its TLS certificate and key (TLS on); CAFile
	// with them: the CA whose certificates clients must present.
	CertFile, KeyFile, CAFile string
}

// StartServer starts a server on addr that takes any client.
func StartServer(addr string) (*Server, error) {
	return StartServerWith(ServerConfig{Addr: addr})
}

// StartServerWith starts a server as cfg says, with JetStream kept in a
// temporary directory for its life.
func StartServerWith(cfg ServerConfig) (*Server, error) {
	opts, err := serverOptions(cfg)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "luarun-nats")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	opts.StoreDir = dir
	ns, err := server.NewServer(opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: start a NATS server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: the NATS server on %s did not start", cfg.Addr)
	}
	return &Server{ns: ns, dir: dir, tls: opts.TLS}, nil
}

// serverOptions are the nats-server options of cfg (no secret in an
// error: the password, token and seed are never quoted).
func serverOptions(cfg ServerConfig) (*server.Options, error) {
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("cluster: server address %q: %w", cfg.Addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("cluster: server port %q: %w", port, err)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	opts := &server.Options{Host: host, Port: p, JetStream: true, NoSigs: true, NoLog: true}
	if err := setServerAuth(opts, cfg); err != nil {
		return nil, err
	}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		if cfg.CertFile == "" || cfg.KeyFile == "" {
			return nil, errors.New("cluster: the server's TLS needs both a certificate and a key file")
		}
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, CaFile: cfg.CAFile, Verify: cfg.CAFile != ""})
		if err != nil {
			return nil, fmt.Errorf("cluster: the server's TLS: %w", err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify, opts.TLSTimeout = tc, true, cfg.CAFile != "", 5
	}
	return opts, nil
}

// setServerAuth sets whom the server takes.
func setServerAuth(opts *server.Options, cfg ServerConfig) error {
	set := 0
	for _, s := range []string{cfg.User, cfg.Token, cfg.NKeySeedFile} {
		if s != "" {
			set++
		}
	}
	switch {
	case set > 1:
		return errors.New("cluster: the server takes a user, a token or an nkey, not several")
	case cfg.User != "":
		if cfg.Password == "" {
			return fmt.Errorf("cluster: the server's user %q has no password", cfg.User)
		}
		opts.Users = []*server.User{{Username: cfg.User, Password: cfg.Password}}
	case cfg.Token != "":
		opts.Authorization = cfg.Token
	case cfg.NKeySeedFile != "":
		pub, err := nkeyPublic(cfg.NKeySeedFile)
		if err != nil {
			return err
		}
		opts.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}
	return nil
}

// nkeyPublic is the public key of the seed in file.
func nkeyPublic(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("cluster: the nkey seed: %w", err)
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return "", fmt.Errorf("cluster: the nkey seed in %s cannot be read", file) // not err: it may quote the seed
	}
	defer kp.Wipe()
	return kp.PublicKey()
}

// URL is the server's client URL: nats://host:port, or tls://host:port
// with TLS.
func (s *Server) URL() string {
	u := s.ns.ClientURL()
	if s.tls && len(u) > len("nats://") && u[:len("nats://")] == "nats://" {
		u = "tls://" + u[len("nats://"):]
	}
	return u
}

// Close stops the server.
func (s *Server) Close() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	os.RemoveAll(s.dir)
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/luarun/luarun/cluster"
)

// clusterFlags are the flags of a node of a cluster (docs/lua-api.md,
// "Several machines").
func clusterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cluster", Usage: "join a cluster through this NATS server (nats://host:4222, tls://...; several separated by commas), or \"embedded\" to start one here"},
		&cli.StringFlag{Name: "node", Usage: "this node's name in the cluster (default: host-pid)"},
		&cli.StringFlag{Name: "cluster-listen", Value: "127.0.0.1:4222", Usage: "with --cluster embedded, the address its NATS server listens on"},
		&cli.StringFlag{Name: "cluster-user", Usage: "NATS user name (the password from $LUARUN_CLUSTER_PASSWORD; a token instead: $LUARUN_CLUSTER_TOKEN); with --cluster embedded, the user its server takes"},
		&cli.StringFlag{Name: "cluster-nkey", Usage: "file holding a NATS user nkey's seed; with --cluster embedded, its server takes that user"},
		&cli.StringFlag{Name: "cluster-creds", Usage: "NATS credentials file"},
		&cli.StringFlag{Name: "cluster-ca", Usage: "CA certificate file to trust for tls:// servers"},
		&cli.StringFlag{Name: "cluster-cert", Usage: "client certificate file (with --cluster-key) for servers that verify clients; with --cluster embedded, its server's certificate (TLS on; clients verified against --cluster-ca)"},
		&cli.StringFlag{Name: "cluster-key", Usage: "client key file"},
		&cli.StringFlag{Name: "cluster-secret-file", Usage: "the cluster's secret (the same on every node; or $LUARUN_CLUSTER_SECRET): what nodes send each other carries its MAC, and what does not verify is dropped"},
	}
}

// joinCluster joins the cluster the flags name (starting the embedded
// server first for "embedded"); leave closes both. Without --cluster it
// returns a nil node.
func joinCluster(c *cli.Context, getenv func(string) string, logger *slog.Logger) (node *cluster.Node, leave func(), err error) {
	url := c.String("cluster")
	if url == "" {
		for _, f := range []string{"node", "cluster-user", "cluster-nkey", "cluster-creds", "cluster-ca", "cluster-cert", "cluster-key", "cluster-secret-file"} {
			if c.IsSet(f) {
				return nil, nil, fmt.Errorf("--%s needs --cluster", f)
			}
		}
		return nil, func() {}, nil
	}
	secret, err := clusterSecret(c.String("cluster-secret-file"), getenv)
	if err != nil {
		return nil, nil, err
	}
	var srv *cluster.Server
	if url == "embedded" {
		if srv, err = cluster.StartServerWith(cluster.ServerConfig{
			Addr: c.String("cluster-listen"),
			User: c.String("cluster-user"), Password: getenv("LUARUN_CLUSTER_PASSWORD"),
			Token: getenv("LUARUN_CLUSTER_TOKEN"), NKeySeedFile: c.String("cluster-nkey"),
			CertFile: c.String("cluster-cert"), KeyFile: c.String("cluster-key"), CAFile: c.String("cluster-ca"),
		}); err != nil {
			return nil, nil, err
		}
		url = srv.URL()
	} else if !strings.Contains(url, "://") {
		return nil, nil, errors.New("--cluster: a nats:// or tls:// URL, or \"embedded\"")
	}
	ctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
	defer cancel()
	node, err = cluster.Join(ctx, cluster.Config{
		URL: url, Name: c.String("node"),
		User: c.String("cluster-user"), Password: getenv("LUARUN_CLUSTER_PASSWORD"), CredsFile: c.String("cluster-creds"),
		Token: getenv("LUARUN_CLUSTER_TOKEN"), NKeySeedFile: c.String("cluster-nkey"),
		CAFile: c.String("cluster-ca"), CertFile: c.String("cluster-cert"), KeyFile: c.String("cluster-key"),
		Secret: secret,
		Logf:   func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		return nil, nil, err
	}
	return node, func() {
		node.Close()
		if srv != nil {
			srv.Close()
		}
	}, nil
}

// joinTimeout bounds joining the cluster (connect, claim the name, take
// a number, open the registry): a few round trips to the server, which
// on a loaded machine running a fresh JetStream store took over 10 s.
const joinTimeout = 30 * time.Second

// clusterSecret is the secret in file (its content, without the line
// end), else $LUARUN_CLUSTER_SECRET; nil if neither is set.
func clusterSecret(file string, getenv func(string) string) ([]byte, error) {
	if file == "" {
		if env := getenv("LUARUN_CLUSTER_SECRET"); env != "" {
			return []byte(env), nil
		}
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--cluster-secret-file: %w", err)
	}
	secret := bytes.TrimRight(data, "\r\n")
	if len(secret) == 0 {
		return nil, fmt.Errorf("--cluster-secret-file: %s is empty", file)
	}
	return secret, nil
}

// printClusterStats is --stats' line for a node: what went to other
// nodes, and what came and what of it could not be delivered.
func printClusterStats(w io.Writer, forwarded uint64, st cluster.Stats) {
	fmt.Fprintf(w, "luarun: cluster: %d messages sent to other nodes in %d NATS messages (and %d messages or signals in batches NATS refused); received %d, and %d for processes that had ended, %d dropped for a full mailbox, %d malformed, %d dropped by NATS (read too slowly), %d lost on the way (gaps in a node's numbers), %d duplicates dropped, %d forged (the MAC did not verify), %d stale (another incarnation, or a replay)\n",
		forwarded, st.Published, st.Unsent, st.Delivered, st.Undeliverable, st.MailboxFull, st.Malformed, st.SlowDropped, st.Lost, st.Duplicates, st.Forged, st.Stale)
}
